"""The one-edit mutants of the reference SAC losses (tests/mutants/sac_done_states_edits.py) fail
the §3 specs written for them, with their message; the same construction without an edit
passes them."""

import pytest

from tests.conftest import run_suite
from tests.mutants.sac_done_states_edits import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_sac_done_states.py"
MODULE = "tests.mutants.sac_done_states_edits"
#: mutant -> (spec, text of its failures, parameters that must fail)
EXPECTED = {
    "TARGET_WRITES_INPUT": ("test_the_callers_batch_is_left_unchanged",
                            "the loss changed the caller's batch",
                            {f"continuous-{layout}-skip={skip}" for layout in
                             ("single", "per_agent", "nested") for skip in (False, True)}),
    "DISCRETE_TARGET_WRITES_INPUT": ("test_the_callers_batch_is_left_unchanged",
                                     "the loss changed the caller's batch",
                                     {f"discrete-{layout}-skip={skip}" for layout in
                                      ("single", "per_agent", "nested")
                                      for skip in (False, True)}),
    "NEUTRALISE_WITH_ZEROS": ("test_the_networks_are_shown_only_states_of_the_batch",
                              "UNKNOWN-STATE-SEEN",
                              {f"{kind}-{layout}" for kind in ("continuous", "discrete")
                               for layout in ("single", "per_agent", "nested")}),
    "NO_DONE_FALLBACK": ("test_done_alone_is_the_termination", "TERMINAL-STATE-SEEN",
                         {f"{kind}-{layout}-skip=True" for kind in ("continuous", "discrete")
                          for layout in ("single", "per_agent", "nested")}),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("sac_edits"), SPEC, "-k",
                     "done_alone or callers_batch or shown_only", "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*MUTANTS, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(EXPECTED) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant_fails_its_spec(suite_run, mutant):
    spec, text, wanted = EXPECTED[mutant]
    assert suite_run.results is not None, suite_run.output[-3000:]
    failing = {r["nodeid"].split("[", 1)[1].split("-", 1)[1].rstrip("]")
               for r in suite_run.rows(implementation=mutant, outcome="fail")
               if spec in r["nodeid"] and text in r["message"]}
    assert failing >= wanted, (sorted(wanted - failing), [
        (r["nodeid"], r["outcome"], r["message"][:200])
        for r in suite_run.rows(implementation=mutant) if spec in r["nodeid"]])


def test_the_unmutated_construction_passes(suite_run):
    rows = suite_run.rows(implementation="UNMUTATED")
    assert len(rows) == 30 and all(r["outcome"] == "pass" for r in rows), [
        (r["nodeid"], r["outcome"], r["message"][:300]) for r in rows if r["outcome"] != "pass"]
