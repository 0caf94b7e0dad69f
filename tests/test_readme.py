"""The README only claims what exists: its files, reference names, nox sessions and options."""

import re
from pathlib import Path

import impls

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_every_path_in_the_readme_exists():
    paths = set(re.findall(r"`((?:conformance|tests|impls|benchmarks)/[\w/.<>-]+\.py)`", README))
    missing = [p for p in paths if "<" not in p and not (ROOT / p).is_file()]
    assert not missing, f"README names files that do not exist: {missing}"


def test_every_reference_name_is_exported():
    names = set(re.findall(r"`(\w+)`(?=[^|\n]*\|\s*$)", README, flags=re.M))
    names = {n for n in names if n[0].isupper() or "_" in n and n.islower()}
    missing = [n for n in names if n not in impls.__all__]
    assert not missing, f"README names reference implementations that impls lacks: {missing}"


def test_nox_sessions_in_the_readme_exist():
    noxfile = (ROOT / "noxfile.py").read_text()
    for session in set(re.findall(r"nox -s (\w+)", README)):
        assert f"def {session}(session" in noxfile, session


def test_ci_runs_the_readme_test_command():
    assert "python -m nox -s tests" in README
    assert "python -m nox -s tests" in (ROOT / ".ci" / "run").read_text()


def test_readme_lists_the_areas_in_their_one_order():
    from conformance.areas import ORDER

    rows = re.findall(r"^\| (\d) \| [^|]+ \| `conformance/test_(\w+)\.py` \|", README, flags=re.M)
    assert rows == [(str(a.number), a.name) for a in ORDER], rows
