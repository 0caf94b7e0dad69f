"""benchtools.asv_session: machine information on a fresh machine, scratch results unless
recording, and no process left behind when asv is stopped."""

import json
import signal
import subprocess
import sys
import textwrap
import time

from benchtools import asv_session


def test_a_machine_is_known_only_when_its_hostname_is_recorded(tmp_path, monkeypatch):
    path = tmp_path / "asv-machine.json"
    assert not asv_session.machine_known(path)  # a fresh machine: no file
    path.write_text(json.dumps({"other-host": {}, "version": 1}))
    monkeypatch.setattr(asv_session.socket, "gethostname", lambda: "this-host")
    assert not asv_session.machine_known(path)
    path.write_text(json.dumps({"this-host": {"machine": "this-host"}, "version": 1}))
    assert asv_session.machine_known(path)


def test_asv_commands_get_the_scratch_configuration_unless_given_one(tmp_path):
    config = asv_session.ROOT / ".asv" / "scratch.conf.json"
    assert asv_session.with_config(["run", "--quick"], config) == [
        "run", "--config", ".asv/scratch.conf.json", "--quick"]
    assert asv_session.with_config(["machine", "--yes"], config) == ["machine", "--yes"]
    assert asv_session.with_config(["run", "--config", "x.json"], config) == [
        "run", "--config", "x.json"]


def test_the_scratch_configuration_writes_nothing_committed(tmp_path, monkeypatch):
    committed = tmp_path / "reports" / "asv" / "results"
    (committed / "vm").mkdir(parents=True)
    (committed / "vm" / "machine.json").write_text("{}")
    conf = tmp_path / "asv.conf.json"
    conf.write_text(json.dumps({"repo": ".", "benchmark_dir": "benchmarks", "env_dir": ".asv/env",
                                "results_dir": "reports/asv/results", "html_dir": "reports/asv/html"}))
    monkeypatch.setattr(asv_session, "ROOT", tmp_path)
    monkeypatch.setattr(asv_session, "CONFIG", conf)
    monkeypatch.setattr(asv_session, "SCRATCH", tmp_path / ".asv")
    monkeypatch.setattr(asv_session, "SCRATCH_CONFIG", tmp_path / ".asv" / "scratch.conf.json")
    monkeypatch.setattr(asv_session, "SCRATCH_RESULTS", tmp_path / ".asv" / "results")
    monkeypatch.setattr(asv_session, "SCRATCH_HTML", tmp_path / ".asv" / "html")
    written = json.loads(asv_session.scratch_config().read_text())
    assert written["results_dir"] == str(tmp_path / ".asv" / "results")
    assert written["html_dir"] == str(tmp_path / ".asv" / "html")
    assert written["repo"] == str(tmp_path) and written["benchmark_dir"] == str(tmp_path / "benchmarks")
    assert (tmp_path / ".asv" / "results" / "vm" / "machine.json").is_file()  # history copied


def test_a_signal_stops_the_whole_session_grandchildren_in_their_own_group_included(tmp_path):
    """As asv does: a child that starts a grandchild in a process group of its own. SIGTERM to
    the wrapper leaves neither behind."""
    pids = tmp_path / "pids"
    tree = textwrap.dedent(f"""
        import os, subprocess, sys, time
        grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                      preexec_fn=lambda: os.setpgid(0, 0))
        open({str(pids)!r}, "w").write(f"{{os.getpid()}} {{grandchild.pid}}")
        time.sleep(120)
    """)
    wrapper = textwrap.dedent(f"""
        import sys
        from benchtools.asv_session import run_contained
        sys.exit(run_contained([sys.executable, "-c", {tree!r}]))
    """)
    proc = subprocess.Popen([sys.executable, "-c", wrapper], cwd=asv_session.ROOT)
    deadline = time.monotonic() + 60
    while not pids.is_file() or len(pids.read_text().split()) < 2:
        assert time.monotonic() < deadline, "the process tree did not start"
        time.sleep(0.1)
    child, grandchild = map(int, pids.read_text().split())
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    time.sleep(0.5)
    for pid in (child, grandchild):
        try:
            state = open(f"/proc/{pid}/stat").read().split(")")[-1].split()[0]
        except FileNotFoundError:
            continue
        assert state == "Z", f"process {pid} outlived the wrapper"
