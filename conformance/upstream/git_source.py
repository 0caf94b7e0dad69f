"""A git ref of a TorchRL repository (``git:REPO@REF``): resolved to a commit, extracted once.

The ref is resolved now (a moved branch gives a new commit, so a new column), the commit's tree
extracted into ``WORK/src/<repo>-<sha>`` (``git archive`` of a local clone, a shallow fetch of a
URL), and then treated as a checkout labelled by its commit, with its committer date for the
pairing rules (``pairing.py``): ``sources.GitRef.resolve`` calls ``extract``. Repositories and
refs were checked by ``sources.parse`` (no leading ``-``, no shell syntax); every git command
also ends its options with ``--``. It imports nothing of ``sources`` (which imports it).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from conformance.upstream.text import last_line


class GitError(ValueError):
    """A ref that cannot be resolved or extracted (one line; the runner's SourceError)."""


def _git(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], capture_output=True, text=True, timeout=600, **kwargs)


def resolve_commit(repo: str, ref: str) -> str:
    """The commit a ref names now (a moved branch resolves to its new commit)."""
    if Path(repo).exists():
        proc = _git("-C", repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if proc.returncode:
            problem = _git("-C", repo, "rev-parse", "--git-dir")
            if problem.returncode:
                raise GitError(f"git:{repo}@{ref}: {repo} is not a git repository")
            raise GitError(f"git:{repo}@{ref}: no commit, branch or tag {ref!r} in {repo}")
        return proc.stdout.strip()
    proc = _git("ls-remote", "--", repo, ref)
    if proc.returncode:
        raise GitError(f"git ls-remote {repo}: {last_line(proc.stderr)}")
    found = [line.split("\t") for line in proc.stdout.splitlines() if "\t" in line]
    peeled = [sha for sha, name in found if name.endswith("^{}")]  # an annotated tag's commit
    if peeled or found:
        return (peeled or [found[0][0]])[0]
    if re.fullmatch(r"[0-9a-f]{40}", ref):
        return ref
    raise GitError(f"git:{repo}@{ref}: {repo} has no branch or tag {ref!r}")


def extract(repo: str, ref: str, work: Path) -> tuple[Path, str, str | None]:
    """Extract a git ref's tree into a folder keyed by its resolved commit (a ref that moved is
    extracted anew): (the folder, the commit, its committer date or None)."""
    commit = resolve_commit(repo, ref)
    name = re.sub(r"[^\w.-]+", "_", Path(repo.rstrip("/")).name.removesuffix(".git")) or "repo"
    target = work / "src" / f"{name}-{commit}"
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")  # never reused half-extracted
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        if Path(repo).exists():
            archive = subprocess.run(["git", "-C", repo, "archive", "--format=tar", commit],
                                     capture_output=True, timeout=600)
            if archive.returncode:
                shutil.rmtree(partial, ignore_errors=True)
                raise GitError(f"git archive {commit}: "
                                  f"{last_line(archive.stderr.decode(errors='replace'))}")
            subprocess.run(["tar", "-x", "-C", str(partial)], input=archive.stdout, check=True)
        else:
            for step in (("init", "-q"), ("fetch", "-q", "--depth", "1", "--", repo, commit),
                         ("-c", "advice.detachedHead=false", "checkout", "-q", "FETCH_HEAD")):
                proc = _git(*step, cwd=partial)
                if proc.returncode:
                    shutil.rmtree(partial, ignore_errors=True)
                    raise GitError(f"git {step[0]} {repo}@{ref}: "
                                      f"{last_line(proc.stderr)}")
        partial.rename(target)
    return target, commit, commit_date(repo, commit)


def commit_date(repo: str, commit: str) -> str | None:
    """The committer date as the nightlies spell theirs (2024.11.5), or None (a URL)."""
    if not Path(repo).exists():
        return None
    proc = _git("-C", repo, "show", "-s", "--format=%cs", commit, "--")
    if proc.returncode or not proc.stdout.strip():
        return None
    y, m, d = (int(p) for p in proc.stdout.strip().split("-"))
    return f"{y}.{m}.{d}"
