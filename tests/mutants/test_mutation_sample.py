"""A fixed, seeded sample of mutmut's mutants of ``impls/`` (the ones ``nox -s mutation`` runs
in full): each must fail a spec of its area on ``--impl reference``, or be classified in
``tests/mutants/classified/`` (equivalent, with its probe; or outside the
interface, with the reason). A new survivor fails this test, naming the edit.

mutmut generates the mutants of every file of ``impls/`` into a staging copy (its trampolines
switch a mutant on by ``MUTANT_UNDER_TEST``); each sampled mutant then runs its area's specs
once with ``-x`` in a subprocess, as mutmut's own runner would. Cost: generation (~45 s on two
shared cores) plus one run of an area's specs per mutant until the first failure; a survivor
costs a whole area's run, which is why the sample is small.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys

import pytest

from conformance.paths import ROOT
from tests.mutants import mutation
from tests.mutants.mutation_sample import GENERATE

pytestmark = pytest.mark.slow

SEED, SIZE = 31, 8


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    pytest.importorskip("mutmut", reason="mutmut is the `mutation` extra of pyproject.toml")
    where = tmp_path_factory.mktemp("mutation")
    for name in ("impls", "conformance"):
        shutil.copytree(ROOT / name, where / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "pyproject.toml", where)
    (where / "setup.cfg").write_text("[mutmut]\nsource_paths=impls\nalso_copy=conformance\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", GENERATE], cwd=where, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return where


def the_sample(where) -> list[tuple[str, str]]:
    """(area, mutant) pairs: SIZE mutants drawn with SEED from every file's mutants, sorted."""
    everything = []
    for area, files in mutation.AREAS.items():
        for path in files:
            meta = json.loads((where / "mutants" / (path + ".meta")).read_text())
            everything += [(area, path, name) for name in sorted(meta["exit_code_by_key"])]
    return random.Random(SEED).sample(everything, SIZE)


def explained(key: str, classified: dict) -> bool:
    """A mutant no spec kills is explained by its own entry (*equivalent* with a probe, or
    *outside* with a reason: an edit that only matters on a device or platform nobody here has),
    or by its whole function or file classified as one that no spec reaches."""
    return (key in classified or mutation.lookup({"key": key, "status": mutation.NOT_REACHED},
                                                 classified) is not None)


def test_sampled_mutants_are_killed_or_classified(staged):
    classified = mutation.classified()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TORCHRL_CONFORMANCE_IMPL", "PYTEST_XDIST_WORKER")}
    env.update(PYTHONHASHSEED="0", OMP_NUM_THREADS="1")
    unexplained, seen = [], []
    for area, path, name in the_sample(staged):
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", *mutation.specs_of(area), "-x", "-q", "--tb=no",
             "-p", "no:cacheprovider", "-n", "0", "--impl", "reference", "--no-report",
             "--results", str(staged / "results.json"), "--spec-timeout",
             str(mutation.SPEC_TIMEOUT)],
            cwd=staged / "mutants", env=dict(env, MUTANT_UNDER_TEST=name),
            capture_output=True, text=True, timeout=900)
        diff = mutation.diffs((staged / "mutants" / path).read_text(), path, [name])[name]
        key = mutation.key_of(path, name, diff)
        seen.append(f"{key}: exit {proc.returncode}")
        if proc.returncode == 0 and not explained(key, classified):
            unexplained.append(f"{key} ({area}) survives its area's specs:\n"
                               f"{mutation.edit_of(diff)}")
    assert not unexplained, (
        "mutants that no spec kills and tests/mutants/classified/ does not "
        "classify (write a spec that kills it, or classify it with a probe or a reason):\n"
        + "\n".join(unexplained) + "\nsample: " + "; ".join(seen))
