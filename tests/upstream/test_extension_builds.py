"""Building the C++ trees: an interrupted build ends its whole process group."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest


def test_ctrl_c_ends_the_builds_process_group(tmp_path, monkeypatch):
    """As tried: Ctrl-C in `nox -s bisect` left the C++ build compiling, orphaned."""
    from conformance.upstream import extension

    pidfile = tmp_path / "pid"
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nsleep 120 &\necho $! > {pidfile}\nwait\n")
    fake.chmod(0o755)
    original = subprocess.Popen.communicate
    calls = []

    def interrupted(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 1:  # the build's wait: Ctrl-C once the compiler runs
            for _ in range(200):
                if pidfile.exists() and pidfile.read_text().strip():
                    break
                time.sleep(0.05)
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "communicate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        extension._run_json(str(fake), ["build"], dict(os.environ), 60)
    compiler = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(compiler, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(compiler, signal.SIGKILL)
        pytest.fail("the build's child outlived the interrupted build")
