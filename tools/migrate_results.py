"""Rewrite committed per-source results of schema 1 as schema 2, without re-running them.

    python tools/migrate_results.py [RESULTS.json ...]     # default: reports/upstream/*.json

A one-off (run once, committed with its output): each document is read through the versioned
reader (``conformance.reporting.results_file``: a known failure's reason and link move from its
message into fields), then given what schema 1 did not record and can still be known here:

- the source's kind and argument from the runner's record beside it (``sources/<label>.json``);
- a git ref's full commit and committer day, from the repository its argument names (when it is
  on this machine);
- each known failure's catalogued defect (``conformance.plugin.catalogue``, as a run tags it).

The manifest digest stays None: the manifest the run was judged against is not known. Outcomes,
``expected`` and every other field are kept as they are: no verdict changes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance import outcomes, record  # noqa: E402
from conformance.plugin import catalogue  # noqa: E402
from conformance.reporting.results_file import read  # noqa: E402


def _git(repo: str, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


def migrate(path: Path) -> bool:
    """Rewrite ``path`` as schema 2 if it is of schema 1; whether it was rewritten."""
    if json.loads(path.read_text(encoding="utf-8")).get("schema") != 1:
        return False
    document = read(path)
    source = dict(document["source"])
    runner_record = path.parent / "sources" / path.name
    if runner_record.is_file():
        given = json.loads(runner_record.read_text(encoding="utf-8"))
        if given.get("kind") in record.KINDS:
            source["kind"] = given["kind"]
        source["argument"] = given.get("argument")
    argument = source.get("argument") or ""
    if source["kind"] == "git" and argument.startswith("git:"):
        repo, _, ref = argument[4:].rpartition("@")
        commit = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if commit:
            source["commit"] = commit
            source["date"] = _git(repo, "show", "-s", "--format=%cs", commit, "--")
    document["source"] = source
    for row in document["rows"]:
        if row["outcome"] == outcomes.KNOWN_FAILURE and row.get("link"):
            row["defect"] = catalogue.defect_slug(row["nodeid"], row["implementation"],
                                                  row["reason"], row["link"])
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return True


def main(argv: list[str]) -> int:
    paths = [Path(p) for p in argv] or sorted((ROOT / "reports" / "upstream").glob("*.json"))
    for path in paths:
        print(f"{path}: {'migrated to schema 2' if migrate(path) else 'not schema 1, kept'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
