"""Writing report and results files so that a reader never sees half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` so that ``path`` holds either the old or the new content, never half.

    The file gets the mode a plain ``open(path, "w")`` would give it (0666 minus the umask):
    ``mkstemp`` creates 0600, which would hide shared reports from the rest of a CI team.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def replace_all(texts: dict[Path, str]) -> None:
    """Write several files as a set: every one is staged next to its target first, and only when
    all are staged are they moved into place, so a failure (disk full, no permission) leaves the
    old set whole instead of a mix of old and new files."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in texts.items():
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            staged.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o666 & ~_umask())
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    moved: list[tuple[Path, Path | None]] = []  # (target, where its old content went)
    try:
        for tmp, path in staged:
            old = None
            if path.is_file():  # a second name for the old content: the target is never absent
                old = path.with_name(f".{path.name}.old.{os.getpid()}")
                old.unlink(missing_ok=True)
                os.link(path, old)
            try:
                os.replace(tmp, path)
            except BaseException:
                if old is not None:
                    old.unlink()
                raise
            moved.append((path, old))
    except BaseException:
        for path, old in reversed(moved):  # put the old set back
            if old is not None:
                os.replace(old, path)
            else:
                path.unlink(missing_ok=True)
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    for _, old in moved:
        if old is not None:
            old.unlink(missing_ok=True)
