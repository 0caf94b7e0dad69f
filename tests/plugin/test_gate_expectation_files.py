"""Expectations files cannot read other files, and their errors are capped (issue #22, item 5)."""

from __future__ import annotations

import pytest

from conformance.plugin.expectation_file import (
    SUITE_EXPECTATIONS,
    ExpectationsError,
    capped,
    parse,
)
from tests.conftest import run_suite

PPO = "conformance/test_ppo_value_clipping.py"


@pytest.mark.parametrize("name", ["/etc/shadow", "../../etc/passwd", "sub/../../x.txt"])
def test_include_outside_the_two_folders_is_refused_without_reading_it(tmp_path, name):
    """As tried: 'include /etc/shadow' printed that file's first line in the error."""
    own = tmp_path / "exp.txt"
    own.write_text(f"include {name} for 0.1.0\n")
    with pytest.raises(ExpectationsError) as info:
        parse(own, frozenset({"torchrl"}))
    text = str(info.value)
    assert text == (f"{own}:1: include {name!r}: only files of {tmp_path} or of the suite's "
                    f"{SUITE_EXPECTATIONS} can be included")


def test_a_link_leading_out_is_refused_and_the_suites_shared_file_is_found(tmp_path):
    (tmp_path / "out.txt").symlink_to("/etc/hostname")
    own = tmp_path / "exp.txt"
    own.write_text("include out.txt for 0.1.0\n")
    with pytest.raises(ExpectationsError, match="only files of"):
        parse(own, frozenset({"torchrl"}))
    own.write_text("include torchrl.txt for 0.14.1\n")  # the suite's shared file
    entries = parse(own, frozenset({"torchrl"}))
    assert entries and all(e.source.startswith(str(SUITE_EXPECTATIONS)) for e in entries)


@pytest.mark.slow
def test_a_20_mb_line_gives_a_short_one_line_error(tmp_path):
    """As tried: a 20 MB line printed 20 MB of error text."""
    big = tmp_path / "big.txt"
    big.write_text("conformance/test_x.py::t" + "x" * 20_000_000 + "\n")
    run = run_suite(tmp_path, PPO, "--impl", "reference", "--expectations", str(big), "--co")
    assert run.returncode == 4 and len(run.output) < 2000, run.output[:2000]
    assert "(20000024 characters)" in run.output


def test_many_problems_are_capped_with_a_count():
    problems = [f"p{i}" for i in range(25)] + ["y" * 1000]
    out = capped(problems)
    assert out[:20] == problems[:20] and out[-1] == "... and 6 more problem(s)"
    assert capped(["y" * 1000])[0].endswith("... (1000 characters)")


def test_every_shipped_torchrl_entry_names_its_failure():
    """A known failure is a specific failure (issue #22): each shipped torchrl entry says how
    its tests fail, so that a listed test failing some other way is an unexpected result."""
    from conformance.paths import ROOT

    vague = []
    for path in sorted((ROOT / "conformance" / "expectations").glob("torchrl*.txt")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.startswith(("conformance/", "untestable:")):
                fields = [f.strip() for f in line.split(" | ")]
                if len(fields) < 4 or not fields[3].startswith(("raises ", "matching ")):
                    vague.append(f"{path.name}:{number}: {fields[0]}")
    assert not vague, "entries that do not name their failure:\n" + "\n".join(vague)
