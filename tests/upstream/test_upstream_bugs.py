"""The upstream bug reports: every reproducer runs alone on the pinned stack and its exit code
agrees with the verdicts of the specs its defect names; none imports this project; the
generated parts of the reports match the matrix and a hand edit is caught."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance import manifest
from conformance.upstream import bugs
from conformance.versions import installed_version

#: every test here reads a run of the whole suite on a mutant (a module fixture)
pytestmark = pytest.mark.slow

ALLOWED = {"torch", "torchrl", "tensordict", "numpy", "scipy", "sys", "inspect", "warnings",
           "tempfile", "pathlib"}  # the last two for a checkpoint folder
FAILING = {"known failure", "fail", "error"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add((node.module or "").split(".")[0] if not node.level else ".")
    return names


@pytest.mark.parametrize("slug", [d.slug for d in bugs.DEFECTS])
def test_reproducer_imports_only_the_stack(slug):
    extra = _imports(bugs.BUGS / f"{slug}.py") - ALLOWED
    assert not extra, f"{slug}.py imports {sorted(extra)}: a reproducer uses only {sorted(ALLOWED)}"


def test_pinned_release_is_the_stack_pin():
    stack = next(line for line in (bugs.ROOT / "pyproject.toml").read_text().splitlines()
                 if line.startswith("stack = "))
    assert f'"torchrl=={bugs.PINNED}"' in stack, stack


@pytest.fixture(scope="module")
def runs():
    if installed_version("torchrl") != bugs.PINNED:
        pytest.skip(f"the reproducers are checked against torchrl {bugs.PINNED}; installed: "
                    f"{installed_version('torchrl')}")
    return bugs.reproduce()


def _pinned_verdicts() -> dict[str, str]:
    doc = json.loads((bugs.RESULTS / f"{bugs.PINNED}.json").read_text(encoding="utf-8"))
    return {r["nodeid"]: r["outcome"] for r in doc["rows"] if r["implementation"] == "torchrl"}


@pytest.mark.parametrize("defect", bugs.DEFECTS, ids=lambda d: d.slug)
def test_reproducer_agrees_with_its_specs(runs, defect):
    verdicts = _pinned_verdicts()
    specs = {n: o for n, o in verdicts.items() if n.startswith(defect.prefixes)}
    assert specs or defect.seen_on != "cpu", (
        f"{defect.slug}: none of its specs is in the {bugs.PINNED} column")
    failing = sorted(n for n, o in specs.items() if o in FAILING)
    run = runs[defect.slug]
    output = (run.stdout + run.stderr)[-1500:]
    assert run.returncode in (0, 1), f"{defect.slug}.py: {bugs.reproduce_verdict(run)}:\n{output}"
    assert "expected" in run.stdout and "actual" in run.stdout, (
        f"{defect.slug}.py does not print expected and actual:\n{output}")
    if defect.seen_on != "cpu":
        # its specs pass in the (CPU) matrix, where the trees report no device; the reproducer
        # stands in for the device (Python stand-ins for the CUDA trees) and must find the
        # defect in the source
        assert bugs.device_specs(defect), f"{defect.slug}: its specs are not in the manifest"
        assert not failing, failing
        assert run.returncode == 1, f"{defect.slug}.py exits 0 on {bugs.PINNED}:\n{output}"
        return
    if failing:
        assert run.returncode == 1, (f"{defect.slug}.py exits 0 (fixed) while {len(failing)} of "
                                     f"its specs fail on {bugs.PINNED}, e.g. {failing[0]}:\n{output}")
    else:
        assert run.returncode == 0, (f"{defect.slug}.py exits 1 (present) while all its specs "
                                     f"pass on {bugs.PINNED}:\n{output}")


def test_get_mode_reproducer_prints_the_seed_example(runs):
    run = runs["tanh-normal-get-mode-on-the-bound"]
    assert "expected:   0.973" in run.stdout and "loc=0.2, scale=1.0" in run.stdout, run.stdout


def test_generated_parts_match_the_matrix(capsys):
    assert bugs.main(["--check"]) == 0, capsys.readouterr().err


def test_a_range_edited_by_hand_is_caught(tmp_path, capsys):
    copy = tmp_path / "upstream-bugs"
    shutil.copytree(bugs.BUGS, copy)
    md = copy / "prb-max-slot-overwrite.md"
    text = md.read_text(encoding="utf-8")
    edited = text.replace("**Releases that have it** (known failures in the matrix): 0.13.3",
                          "**Releases that have it** (known failures in the matrix): 0.12.0")
    assert edited != text
    md.write_text(edited, encoding="utf-8")
    assert bugs.main(["--check", "--bugs", str(copy)]) == 1
    err = capsys.readouterr().err
    assert "prb-max-slot-overwrite.md: generated part status differs" in err, err
    assert bugs.main(["--bugs", str(copy)]) == 0  # regenerating repairs it
    assert md.read_text(encoding="utf-8") == text


def test_missing_matrix_is_one_line(tmp_path, capsys):
    assert bugs.main(["--check", "--results", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no per-source results" in err, err


def test_every_known_failure_of_the_pinned_release_has_a_defect():
    matrix = bugs.Matrix.load(bugs.RESULTS)
    entries = bugs.pinned_entries()
    assert bugs.unexplained(matrix, entries) == []
    hist = bugs.histories(matrix, entries)
    explained = sum(len(hist[d.slug].specs) for d in bugs.DEFECTS if d.seen_on == "cpu")
    known = sum(r["implementation_version"] == bugs.PINNED and r["outcome"] == "known failure"
                for r in matrix.rows)
    assert explained == known


def test_every_defect_is_classified_and_addressed():
    """The classification field: every kind known, a documented limitation quotes its
    documentation, a defect 'elsewhere' is addressed to the repository holding the code."""
    for d in bugs.DEFECTS:
        assert d.kind in bugs.KINDS and d.repository in bugs.REPOSITORIES, d.slug
        if d.kind == "documented-limitation":
            assert '"' in d.documentation, f"{d.slug}: no quoted documentation"
        if d.kind == "elsewhere":
            assert d.repository != "pytorch/rl", d.slug
        for t in d.threads:
            assert t.url.startswith("https://github.com/") and t.note, (d.slug, t)
    with pytest.raises(ValueError, match="kind 'bug'"):
        bugs.Defect("x", "a", "s", bugs.NOT_REPORTED, "", (), kind="bug")
    with pytest.raises(ValueError, match="quotes its documentation"):
        bugs.Defect("x", "a", "s", bugs.NOT_REPORTED, "", (), kind="documented-limitation")
    with pytest.raises(ValueError, match="names the repository"):
        bugs.Defect("x", "a", "s", bugs.NOT_REPORTED, "", (), kind="elsewhere")


def _installed_sources(package: str) -> str:
    """Every .py file of ``package`` with adjacent string literals joined and whitespace
    collapsed, so that a quoted docstring or warning is found whatever its line breaks."""
    import importlib.util

    root = Path(importlib.util.find_spec(package).origin).parent
    texts = []
    for path in root.rglob("*.py"):
        text = re.sub(r"\"\s*\n\s*(?:f)?\"", "", path.read_text(encoding="utf-8", errors="replace"))
        texts.append(" ".join(text.split()))
    return " ".join(texts)


def test_documented_limitations_quote_the_pinned_source():
    """The quoted documentation is in the pinned torchrl's (or tensordict's) source, word for
    word (whitespace aside; "..." marks a cut): a report must not argue with documentation
    that is not there."""
    if installed_version("torchrl") != bugs.PINNED:
        pytest.skip(f"the quotes are of torchrl {bugs.PINNED}; installed: "
                    f"{installed_version('torchrl')}")
    sources = _installed_sources("torchrl") + " " + _installed_sources("tensordict")
    quoted = [(d.slug, q) for d in bugs.DEFECTS if d.documentation
              for q in re.findall(r'"([^"]{20,})"', d.documentation)]
    assert len(quoted) >= 3, quoted
    for slug, quote in quoted:
        for part in filter(None, (" ".join(p.split()) for p in quote.split("..."))):
            assert part in sources, (slug, part)


def test_the_search_log_covers_every_defect():
    log = (bugs.BUGS / bugs.SEARCH_LOG).read_text(encoding="utf-8")
    missing = [d.slug for d in bugs.DEFECTS if f"| {d.slug} |" not in log]
    assert not missing, f"{bugs.SEARCH_LOG} has no search for {missing}"
    for d in bugs.DEFECTS:
        text = (bugs.BUGS / f"{d.slug}.md").read_text(encoding="utf-8")
        assert f"- **Classification**: {bugs.KINDS[d.kind]}" in text, d.slug
        assert f"- **Repository**: {d.repository}" in text, d.slug
        if d.upstream != bugs.NOT_REPORTED:  # a report must not claim what the search refuted
            assert "not reported upstream" not in text.lower(), d.slug


def test_the_defect_of_a_known_failure_is_read_from_its_fields():
    """A row of TorchRL's known failure carries its expectation's reason and link as fields; the
    catalogue names the defect they show (the plug-in writes it into the row as ``defect``)."""
    from conformance.plugin import catalogue

    reason = ("get_mode() returns the bound 1.0 (density 0) for loc 0.2, scale 1 instead of "
              "0.97302")
    link = ("https://github.com/pytorch/rl/blob/00b7c2e8f38730747f9484e7fa3b763e509cc914/torchrl/"
            "modules/distributions/continuous.py#L499-L528")
    nodeid = "conformance/test_tanh_normal_mode.py::test_seed_example[torchrl-float32]"
    assert catalogue.defect_slug(nodeid, "torchrl", reason, link) == \
        "tanh-normal-get-mode-on-the-bound"
    # the same spec failing for an older reason (another entry's text) is not this defect
    assert catalogue.defect_slug(nodeid, "torchrl", reason.replace("1.0 (", "2.0 ("), link) is None
    assert catalogue.defect_slug(nodeid, "torchrl", None, None) is None
    assert catalogue.defect_slug(nodeid.replace("torchrl", "reference"), "reference", reason,
                                 link) is None
    row = {"nodeid": nodeid, "reason": reason, "link": link}
    entries = bugs.pinned_entries()
    assert bugs.defect_of(row, entries, bugs.entry_defects(entries)).slug == \
        "tanh-normal-get-mode-on-the-bound"
    # every known failure of the committed pinned column carries its defect as a field
    doc = json.loads((bugs.RESULTS / f"{bugs.PINNED}.json").read_text(encoding="utf-8"))
    known = [r for r in doc["rows"] if r["outcome"] == "known failure"]
    assert known and all(r["defect"] in bugs.BY_SLUG for r in known)


def test_report_links_torchrl_known_failures_to_their_reproducer(tmp_path):
    from conformance.reporting.matrix import load_rows, render_markdown

    rows = load_rows([bugs.RESULTS / f"{bugs.PINNED}.json"])
    text = render_markdown(rows, out_dir=bugs.ROOT / "reports")
    section = text.split("### TorchRL's known failures: standalone reproducers", 1)[1]
    section = section.split("###", 1)[0]
    assert "- [prb-max-slot-overwrite.py](upstream-bugs/prb-max-slot-overwrite.py) " \
           f"(torchrl {bugs.PINNED}, 9)" in section, section  # 9 since h45-gaps' eviction specs
    assert section.count("- [") == sum(d.seen_on == "cpu" for d in bugs.DEFECTS)


def _with_newer_specs(doc: dict) -> dict:
    """The pinned column was run before the specs the manifest added since (issue #31's, until
    the matrix is re-run): a passing torchrl row for each, so that ``--verify``'s rule is tried on
    a run its completeness check accepts; the defect's own specs are all in the column."""
    rows = [r for r in doc["rows"] if r["implementation"] == "torchrl"]
    have = {manifest.spec_id(r["nodeid"], "torchrl") for r in rows}
    for spec in sorted(manifest.spec_ids() - have):
        path, _, name = spec.partition("::")
        test, bracket, params = name.partition("[")
        nodeid = f"{path}::{test}[torchrl" + (f"-{params}" if bracket else "]")
        doc["rows"].append({**rows[0], "nodeid": nodeid, "spec": test,
                            "area": Path(path).stem.removeprefix("test_"),
                            "parameters": params.removesuffix("]"), "outcome": "pass",
                            "expected": True, "message": ""})
    return doc


def _results_with(tmp_path, name, changes: dict[str, str]) -> Path:
    doc = _with_newer_specs(
        json.loads((bugs.RESULTS / f"{bugs.PINNED}.json").read_text(encoding="utf-8")))
    for row in doc["rows"]:
        row["outcome"] = changes.get(row["nodeid"], row["outcome"])
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_verify_accepts_exactly_the_defects_specs_turning_pass(tmp_path, capsys):
    slug = "prb-max-slot-overwrite"
    defect = bugs.BY_SLUG[slug]
    verdicts = _pinned_verdicts()
    fixed = {n: "unexpected pass" for n in verdicts if n.startswith(defect.prefixes)}
    assert len(fixed) == 9  # the max-slot specs of the 607-spec 0.14.1 column (h45-gaps added 2)
    baseline = _results_with(tmp_path, "baseline", {})
    assert bugs.main(["--verify", str(_results_with(tmp_path, "ok", fixed)), str(baseline),
                      slug]) == 0
    assert "verified: the defect's specs turn pass" in capsys.readouterr().out
    half = dict(list(fixed.items())[:6])  # three specs of the defect still fail
    assert bugs.main(["--verify", str(_results_with(tmp_path, "half", half)), str(baseline),
                      slug]) == 1
    other = next(n for n, o in verdicts.items() if o == "pass")
    moved = {**fixed, other: "fail"}  # a verdict outside the defect moves
    assert bugs.main(["--verify", str(_results_with(tmp_path, "moved", moved)), str(baseline),
                      slug]) == 1
    out = capsys.readouterr().out
    assert f"{other}: pass -> fail (moved, not a spec of the defect)" in out, out
    assert bugs.main(["--verify", str(baseline), str(baseline), "no-such-defect"]) == 2


PATCH_BASE = "ae9719f17"  # pytorch/rl main of 2026-08-22, named in the patches' .md


@pytest.mark.parametrize("patch", sorted(p.name for p in bugs.BUGS.glob("*.patch")))
def test_patch_applies_to_pytorch_rl_main(patch, tmp_path):
    """Each shipped patch applies to the files of pytorch/rl main it touches (needs a clone of
    pytorch/rl in $TORCHRL_CONFORMANCE_GIT, as nox -s upstream does for old releases)."""
    repo = os.environ.get("TORCHRL_CONFORMANCE_GIT", "")
    if not repo or not Path(repo, ".git").exists() and not Path(repo, "HEAD").exists():
        pytest.skip("no pytorch/rl clone in $TORCHRL_CONFORMANCE_GIT to apply the patch to")
    text = (bugs.BUGS / patch).read_text(encoding="utf-8")
    touched = sorted(set(re.findall(r"^\+\+\+ b/(\S+)$", text, re.M)))
    assert touched, f"{patch} touches no file"
    for path in touched:
        shown = subprocess.run(["git", "-C", repo, "show", f"{PATCH_BASE}:{path}"],
                               capture_output=True, text=True)
        if shown.returncode:
            pytest.skip(f"{repo} has no commit {PATCH_BASE}: {shown.stderr.strip()}")
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(shown.stdout, encoding="utf-8")
    check = subprocess.run(["git", "apply", "--check", str(bugs.BUGS / patch)], cwd=tmp_path,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
