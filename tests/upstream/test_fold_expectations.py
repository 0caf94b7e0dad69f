"""Folding per-release expectations: shared entries written once, every release keeps its own."""

from conformance.plugin import expectations as exp
from conformance.upstream import fold_expectations as fold

SPEC = "conformance/test_ppo_value_clipping.py"
A = f"{SPEC}::test_a | a | https://x.org/a"
B = f"{SPEC}::test_b | b | https://x.org/b"
C = f"untestable: {SPEC}::test_c | c | https://x.org/c"


def _expanded(directory, version):
    return sorted(e.line for e in exp.parse(directory / f"lib-{version}.txt", frozenset({"lib"})))


def _old_form(tmp_path, **releases):
    for version, lines in releases.items():
        (tmp_path / f"lib-{version}.txt").write_text(
            "\n".join([f"# lib {version}", *lines]) + "\n")


def test_fold_writes_shared_entries_once_and_keeps_every_release_exact(tmp_path):
    _old_form(tmp_path, **{"1.0": [A, B], "1.1": [A, "# why c", C, B], "1.2": [A, B],
                           "2.0": [A, C]})
    before = {v: sorted([A, B] if v != "2.0" else [A, C]) for v in ("1.0", "1.2", "2.0")}
    assert fold.main([str(tmp_path)]) == 0
    shared = (tmp_path / "lib.txt").read_text()
    assert shared.count(A) == 1 and shared.count(B) == 1
    assert f"[>=1.0, <=2.0]\n{A}" in shared and f"[>=1.0, <=1.2]\n{B}" in shared
    # C is in 1.1 and 2.0 but not 1.2: no range covers exactly those, so each keeps its own line
    assert (tmp_path / "lib-1.1.txt").read_text() == f"# lib 1.1\ninclude lib.txt for 1.1\n\n# why c\n{C}\n"
    for version, lines in before.items():
        assert _expanded(tmp_path, version) == lines
    assert _expanded(tmp_path, "1.1") == sorted([A, B, C])
    assert fold.main([str(tmp_path), "--check"]) == 0  # folding is idempotent


def test_a_release_added_in_the_old_form_is_folded_in(tmp_path, capsys):
    _old_form(tmp_path, **{"1.0": [A, B], "1.1": [A, B]})
    fold.main([str(tmp_path)])
    _old_form(tmp_path, **{"1.2": [A]})  # e.g. drafted, or written before the shared file
    assert fold.main([str(tmp_path), "--check"]) == 1
    assert "not folded" in capsys.readouterr().out
    fold.main([str(tmp_path)])
    assert [_expanded(tmp_path, v) for v in ("1.0", "1.1", "1.2")] == [
        sorted([A, B]), sorted([A, B]), [A]]
    assert "[>=1.0, <=1.2]" in (tmp_path / "lib.txt").read_text()


def test_shipped_files_are_folded():
    assert fold.main(["--check"]) == 0


def test_bad_directory_is_a_one_line_error(tmp_path, capsys):
    import pytest

    with pytest.raises(SystemExit) as info:
        fold.main([str(tmp_path / "nowhere")])
    assert info.value.code == 2 and "no such directory" in capsys.readouterr().err
