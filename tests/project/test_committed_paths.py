"""No committed report or page carries the absolute path of the checkout it was made in: such a
path means nothing on another machine (issue #25). Checked on every file git tracks under
``reports/`` and ``docs/``, for any absolute path that leads into a folder of this project."""

import re
import subprocess

import pytest

from conformance.paths import ROOT

#: an absolute path that continues into one of the project's folders (or its work folders)
CHECKOUT_PATH = re.compile(
    r"(?<![\w.])(/[\w.+-]+)+/(conformance|impls|benchtools|benchmarks|tests|examples|"
    r"\.nox|\.asv)/")


def _tracked(*folders: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", *folders], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip(f"not a git checkout: {out.stderr.strip()}")
    return [line for line in out.stdout.splitlines() if line]


def test_no_checkout_path_in_reports_or_docs():
    found = []
    for name in _tracked("reports", "docs"):
        path = ROOT / name
        if path.suffix in (".png",) or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = CHECKOUT_PATH.search(line)
            if match:
                found.append(f"{name}:{number}: {match.group(0)}")
    assert not found, ("committed files name a checkout's absolute path (write paths relative "
                       "to the checkout; conformance.paths.scrub):\n" + "\n".join(found[:20]))


def test_the_pattern_finds_what_it_is_for():
    assert CHECKOUT_PATH.search("at /home/me/rl-conformance/conformance/_assertions.py:21")
    assert CHECKOUT_PATH.search("existing python /srv/ci/checkout/.nox/_stack/bin/python")
    assert not CHECKOUT_PATH.search("conformance/_assertions.py:21")
    assert not CHECKOUT_PATH.search("a checkout of main (/tmp/rl)")
