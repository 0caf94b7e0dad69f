"""The drop-in comparison with no test is no verdict (a whole run: slow)."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.conftest import ROOT
from tests.rows import PY


@pytest.mark.slow
def test_dropin_with_no_test_is_no_verdict(tmp_path):
    """As tried: `python -m conformance.dropin ... -- -k nothing`: "0 tests; broken by the
    swap: 0", exit 0."""
    checkout = tmp_path / "rl"
    (checkout / "test").mkdir(parents=True)
    (checkout / "test" / "test_a.py").write_text("def test_a():\n    pass\n")
    proc = subprocess.run([PY, "-m", "conformance.dropin", "--target", "test/test_a.py",
                           "--out", str(tmp_path / "d.md"), str(checkout), "--", "-k",
                           "nothing"], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no verdict: the shipped run ran 0 test(s)" in proc.stderr
