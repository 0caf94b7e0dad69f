"""Expectations: known failures are strict xfails; stale, unknown or malformed entries fail."""

import pytest

from conformance.plugin import expectations as exp
from conformance.plugin import keys, staleness
from tests.conftest import ROOT

PPO = "conformance/test_ppo_value_clipping.py"
NEG = f"{PPO}::test_negative_clip_value_is_rejected"


def _write(tmp_path, *lines):
    path = tmp_path / "exp.txt"
    path.write_text("\n".join(["# comment", "", *lines]) + "\n")
    return path


def test_parse_requires_reason_and_link(tmp_path):
    with pytest.raises(exp.ExpectationsError, match=r"exp.txt:3: expected"):
        exp.parse(_write(tmp_path, f"{NEG} | no link"), frozenset({"torchrl"}))
    with pytest.raises(exp.ExpectationsError, match="upstream link"):
        exp.parse(_write(tmp_path, f"{NEG} | reason | not-a-url"), frozenset({"torchrl"}))
    with pytest.raises(exp.ExpectationsError, match="cannot read"):
        exp.parse(tmp_path / "missing.txt", frozenset())


def test_auto_file_for_installed_torchrl_turns_known_failure_into_xfail(suite):
    run = suite(PPO, "--impl", "torchrl", "-k", "negative")
    assert run.returncode == 0, run.output
    (row,) = run.rows()
    assert row["outcome"] == "known failure" and row["expected"] is True
    # the entry's reason and link are fields of the row, and so is the defect it shows
    assert "clip_value is not validated" in row["reason"] and row["link"].startswith("https://")
    assert row["defect"] == "ppo-negative-clip-value-accepted"
    assert "[known failure" not in row["message"]  # the message is the test's own


def test_unexpected_pass_fails_the_run(suite, tmp_path):
    path = _write(tmp_path, f"{PPO}::test_baselines_counterexample | pretend | https://x.org/1")
    run = suite(PPO, "--impl", "reference", "--expectations", str(path), "-k", "counterexample")
    assert run.returncode == 1
    assert [r["outcome"] for r in run.rows()] == ["unexpected pass"]


def test_new_failure_fails_the_run_even_with_expectations(suite):
    run = suite(PPO, "--impl", "torchrl", "--expectations", "none", "-k", "negative")
    assert run.returncode == 1
    assert [r["outcome"] for r in run.rows()] == ["fail"]


def test_stale_entry_is_an_error_naming_file_and_line(suite, tmp_path):
    """-k filters what runs, not what exists: the whole file was collected, so it is judged."""
    path = _write(tmp_path, f"{PPO}::test_no_such_spec | gone | https://x.org/2")
    run = suite(PPO, "--impl", "reference", "--expectations", f"reference={path}",
                "-k", "counterexample")
    assert run.returncode == 4
    assert f"{path}:3" in run.output and "matches no collected test" in run.output


def test_entry_for_missing_file_is_an_error(suite, tmp_path):
    path = _write(tmp_path, "conformance/test_nothing.py::test_x | gone | https://x.org/3")
    run = suite(PPO, "--impl", "reference", "--expectations", str(path))
    assert run.returncode == 4 and "no such test file" in run.output


def test_entry_binds_to_its_implementation_only(suite, tmp_path):
    path = _write(tmp_path, f"{NEG} | torchrl only | https://x.org/4")
    run = suite(PPO, "--impl", "reference,torchrl", "--expectations", f"torchrl={path}",
                "-k", "negative")
    assert run.returncode == 0, run.output
    assert {r["implementation"]: r["outcome"] for r in run.rows()} == {
        "reference": "pass", "torchrl": "known failure"}


def test_every_shipped_release_file_parses_and_includes_the_shared_entries_for_itself():
    files = sorted(exp.EXPECTATIONS_DIR.glob("torchrl-*.txt"))
    assert len(files) >= 9
    for path in files:
        version = path.stem.removeprefix("torchrl-")
        assert exp.auto_file("torchrl", version) == path
        entries = exp.parse(path, frozenset({"torchrl"}))
        assert entries, f"{path} holds no entry"
        shared = [e for e in entries if e.included_as]
        assert shared and all(e.included_as.startswith(f"for {version} by ") for e in shared)
        assert not staleness.duplicates(entries)


def test_one_test_by_node_id_with_the_shipped_expectations(suite):
    """The other entries of the file are not judged: their tests were not collected."""
    run = suite(f"{NEG}[torchrl]", "--impl", "torchrl")
    assert run.returncode == 0, run.output
    assert [r["outcome"] for r in run.rows()] == ["known failure"]


def test_latin1_file_is_a_one_line_error_not_an_internal_error(suite, tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(f"# caf\u00e9\n{NEG} | na\u00efve | https://x.org/5\n".encode("latin-1"))
    run = suite(PPO, "--impl", "reference", "--expectations", str(path), "-k", "negative")
    assert run.returncode == 4, run.output
    assert "INTERNALERROR" not in run.output and "Traceback" not in run.output
    (error,) = [line for line in run.output.splitlines() if line.strip()]
    assert error == f"ERROR: {path}:1: not UTF-8 text (byte 0xe9); save the file as UTF-8"


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_byte_order_marked_files_are_read_correctly(tmp_path, encoding):
    path = tmp_path / "bom.txt"
    path.write_text(f"{NEG} | r\u00e9ason | https://x.org/6\n", encoding=encoding)
    (entry,) = exp.parse(path, frozenset({"torchrl"}))
    assert (entry.prefix, entry.reason) == (NEG, "r\u00e9ason")


def test_utf16_without_byte_order_mark_is_an_error(tmp_path):
    path = tmp_path / "utf16.txt"
    path.write_bytes(f"{NEG} | r | https://x.org/7\n".encode("utf-16-le"))
    with pytest.raises(exp.ExpectationsError, match=r"utf16.txt:1: contains NUL characters"):
        exp.parse(path, frozenset({"torchrl"}))


def test_duplicate_line_is_reported_as_a_duplicate_with_both_lines(tmp_path):
    path = _write(tmp_path, f"{NEG} | a | https://x.org/8", f"{PPO}::test_x | b | https://x.org/9",
                  f"{NEG} | a | https://x.org/8")
    with pytest.raises(exp.ExpectationsError) as info:
        exp.ExpectationsPlugin(exp.parse(path, frozenset({"torchrl"})), ROOT)
    assert f"{path}:5: duplicate entry {NEG!r}, already at {path}:3" in str(info.value)
    assert "stale" not in str(info.value)


def test_untestable_entry_is_carried_without_an_xfail_mark(tmp_path):
    path = _write(tmp_path, f"untestable: {PPO} | no extension here | https://x.org/10",
                  f"{NEG} | known | https://x.org/11")
    untestable, known = exp.parse(path, frozenset({"torchrl"}))
    assert (untestable.kind, untestable.prefix, known.kind) == ("untestable", PPO, "fail")
    assert untestable.line == f"untestable: {PPO} | no extension here | https://x.org/10"

    class Item:  # what apply() touches of a pytest item
        def __init__(self):
            self.stash, self.markers = {}, []

        def add_marker(self, marker):
            self.markers.append(marker)

    plain, marked = Item(), Item()
    exp.apply(plain, untestable)
    exp.apply(marked, known)
    assert plain.stash[keys.EXPECTATION] is untestable and plain.markers == []
    assert marked.stash[keys.EXPECTATION] is known
    assert [m.mark.kwargs["strict"] for m in marked.markers] == [True]


def _entries(tmp_path, *lines):
    return exp.parse(_write(tmp_path, *lines), frozenset({"torchrl"}))


def test_staleness_is_judged_only_where_every_matching_test_was_collected(tmp_path):
    stale_y, neg = _entries(tmp_path, f"{PPO}::test_y | r | https://x.org/12",
                            f"{NEG} | r | https://x.org/13")
    collected = {f"{NEG}[torchrl]": "torchrl", f"{NEG}[reference]": "reference"}
    assert staleness.stale([stale_y, neg], collected, [f"{NEG}[torchrl]"]) == []
    assert staleness.stale([stale_y, neg], collected, [NEG]) == []
    for full in (PPO, "conformance", ""):
        (problem,) = staleness.stale([stale_y, neg], collected, [full])
        assert problem.startswith(f"{stale_y.source}: ") and "matches no collected test" in problem
    # an entry of a file none of whose tests was collected (e.g. --ignore) is not judged
    assert staleness.stale([stale_y], {"conformance/test_other.py::t[torchrl]": "torchrl"},
                           [""]) == []


def test_node_id_selection_covers_only_its_own_tests():
    assert staleness.covers(f"{PPO}::test_y", f"{PPO}::test_y[torchrl-")
    assert not staleness.covers(f"{PPO}::test_y", f"{PPO}::test_y_other")
    assert not staleness.covers(f"{PPO}::test_y[torchrl-a]", f"{PPO}::test_y[torchrl-")
    assert not staleness.covers("conformance/sub", f"{PPO}::test_y")
    args = [f"{PPO}::test_y[torchrl]", "conformance", "."]
    assert staleness.selections_from_args(args, ROOT, ROOT) == [
        f"{PPO}::test_y[torchrl]", "conformance", ""]
    assert staleness.selections_from_args(["tests"], ROOT / "conformance", ROOT) == [
        "conformance/tests"]


def test_entry_shadowed_by_an_earlier_one_is_named_with_it(tmp_path):
    broad, narrow = _entries(tmp_path, f"{PPO} | r | https://x.org/14",
                             f"{NEG} | r | https://x.org/15")
    (problem,) = staleness.stale([broad, narrow], {f"{NEG}[torchrl]": "torchrl"}, [PPO])
    assert problem == (f"{narrow.source}: {NEG!r} applies to no test: {broad.source} comes first "
                       "for every test it matches")


def test_impl_of_reads_the_first_parameter():
    assert staleness.impl_of(f"{NEG}[torchrl]", ["reference", "torchrl"]) == "torchrl"
    assert staleness.impl_of(f"{PPO}::t[reference-eps=0.3]", ["torchrl", "reference"]) == "reference"
    assert staleness.impl_of(f"{PPO}::t[torchrlx-a]", ["torchrl"]) is None
