"""asv as ``nox -s asv`` runs it: works on a fresh clone, writes nothing committed unless asked
to record, and leaves no process behind.

    python -m benchtools.asv_session [--record] [ASV ARGUMENTS ...]   (default: run --python=same)

- **Machine.** asv stops on a fresh machine ("No information stored about machine") until
  ``asv machine`` has asked its questions; where ``~/.asv-machine.json`` has no entry for this
  host, ``asv machine --yes`` records the detected values first.
- **Scratch unless recording.** ``asv.conf.json`` is the recording configuration: its results are
  the history kept in git (``reports/asv/results``). Without ``--record`` asv runs on a copy of it
  (``.asv/scratch.conf.json``, ignored by git) whose results and HTML go to ``.asv/results`` and
  ``.asv/html``; the committed results are copied there first (only the files it lacks), so
  ``asv compare``, ``asv continuous`` and ``asv publish`` still see the history. ``--record``
  runs on ``asv.conf.json`` itself.
- **No process left behind.** asv starts each benchmark in a process group of its own, so a
  Ctrl-C or a ``timeout`` that reaches asv alone leaves its benchmark processes running. asv runs
  here in a session of its own; on SIGINT, SIGTERM or SIGHUP, or when this process's parent
  dies (nox killed), every process of that session is stopped (SIGTERM, then SIGKILL).
- Afterwards the result files are named without the checkout's path (``benchtools.asv_results``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from conformance.paths import ROOT

CONFIG = ROOT / "asv.conf.json"
SCRATCH = ROOT / ".asv"
SCRATCH_CONFIG = SCRATCH / "scratch.conf.json"
SCRATCH_RESULTS, SCRATCH_HTML = SCRATCH / "results", SCRATCH / "html"
#: the paths asv resolves from its configuration's folder: absolute in the scratch copy
PATH_KEYS = ("repo", "benchmark_dir", "env_dir", "results_dir", "html_dir")
#: asv commands that take --config (all but a few: machine, quickstart, version)
NO_CONFIG = {"machine", "quickstart", "--version", "-h", "--help", "help"}


def machine_known(path: Path | None = None) -> bool:
    """Whether ``~/.asv-machine.json`` describes this host (asv names a machine by hostname)."""
    path = path or Path(os.path.expanduser("~/.asv-machine.json"))
    try:
        return socket.gethostname() in json.loads(path.read_text())
    except (OSError, ValueError):
        return False


def scratch_config() -> Path:
    """``.asv/scratch.conf.json``: asv.conf.json with results and HTML under ``.asv/``, and the
    committed results copied into ``.asv/results`` where absent."""
    conf = json.loads(CONFIG.read_text())
    committed = ROOT / conf["results_dir"]
    conf.update(results_dir=str(SCRATCH_RESULTS), html_dir=str(SCRATCH_HTML))
    for key in PATH_KEYS:
        conf[key] = str((ROOT / conf[key]).resolve())
    SCRATCH.mkdir(exist_ok=True)
    SCRATCH_CONFIG.write_text(json.dumps(conf, indent=4) + "\n")
    target = SCRATCH_RESULTS
    for source in sorted(committed.rglob("*.json")):
        copy = target / source.relative_to(committed)
        if not copy.exists():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy)
    return SCRATCH_CONFIG


def with_config(args: list[str], config: Path) -> list[str]:
    """``args`` with ``--config config`` after asv's command (unless one is given)."""
    if not args or args[0] in NO_CONFIG or any(a == "--config" or a.startswith("--config=")
                                               for a in args):
        return list(args)
    return [args[0], "--config", str(config.relative_to(ROOT)), *args[1:]]


def _session_members(sid: int) -> list[int]:
    """Every live process of session ``sid`` (Linux: /proc; elsewhere: the leader only)."""
    members = []
    proc = Path("/proc")
    if not proc.is_dir():
        return [sid]
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        if int(fields[3]) == sid and fields[0] != "Z":  # field 6 of stat: the session id
            members.append(int(entry.name))
    return members


def stop_session(sid: int, grace: float = 3.0) -> None:
    """SIGTERM every process of session ``sid``, then SIGKILL what is left after ``grace``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        members = _session_members(sid)
        for pid in members:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while members and time.monotonic() < deadline:
            time.sleep(0.1)
            members = _session_members(sid)
        if not members:
            return


def run_contained(cmd: list[str], **kwargs) -> int:
    """Run ``cmd`` in a session of its own; stop the whole session on a signal or when this
    process's parent goes away. The command's exit code (128 + signal when stopped)."""
    child = subprocess.Popen(cmd, start_new_session=True, **kwargs)
    stopped: list[int] = []

    def on_signal(signum, frame):
        stopped.append(signum)
        stop_session(child.pid)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM,
                                                          signal.SIGHUP)}
    parent = os.getppid()
    done = threading.Event()

    def watch_parent():
        while not done.wait(0.5):
            if os.getppid() != parent:  # re-parented: whoever started us is gone
                stopped.append(signal.SIGHUP)
                stop_session(child.pid)
                return

    threading.Thread(target=watch_parent, daemon=True).start()
    try:
        code = child.wait()
    finally:
        done.set()
        stop_session(child.pid, grace=1.0)  # anything asv left behind after it exited
        for s, handler in previous.items():
            signal.signal(s, handler)
    return 128 + stopped[0] if stopped else code


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    record = "--record" in args
    args = [a for a in args if a != "--record"] or ["run", "--python=same"]
    if not machine_known():
        print("asv: no machine information for this host yet: asv machine --yes", flush=True)
        code = run_contained([sys.executable, "-m", "asv", "machine", "--yes"], cwd=ROOT,
                             stdout=subprocess.DEVNULL)
        if code:
            print(f"asv machine --yes failed (exit code {code})", file=sys.stderr)
            return code
    config = CONFIG if record else scratch_config()
    cmd = [sys.executable, "-m", "asv", *with_config(args, config)]
    where = "reports/asv/results (recording)" if record else (
        ".asv/results (scratch; --record to write reports/asv/results)")
    print(f"+ {' '.join(cmd[1:])}   # results: {where}", flush=True)
    code = run_contained(cmd, cwd=ROOT)
    from benchtools.asv_results import stabilise

    results = ROOT / json.loads(config.read_text())["results_dir"]  # absolute stays absolute
    if results.is_dir():
        for path in stabilise(results):
            print(f"stabilised {path.relative_to(ROOT)}")
    if code > 128:
        print(f"asv stopped by signal {code - 128}; no asv process is left", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
