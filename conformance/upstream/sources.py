"""What a TorchRL source given to ``nox -s upstream`` is, and what it must be installed with.

Accepted forms:
  ``0.13.3``                      a release from the package index
  ``path/to/torchrl-X-*.whl``     a wheel file
  ``path/to/rl``                  a local source checkout (its C++ extension is built from its own
                                  torchrl/csrc by ``extension.py``)
  ``git:REPO@REF``                a git ref of a repository (a URL or a local clone / mirror)
  ``nightly``, ``nightly:DATE``   a torchrl-nightly build (``nightly.py``); a nightly wheel file
                                  (``torchrl_nightly-2026.10.27-*.whl``) too

Pairing (measured when the matrix was built): tensordict from the same minor as torchrl (releases up
to 0.7 pin it loosely and break with a newer one); torch 2.14.1 for 0.14 (its C++ extension is
built for it), torch 2.13.0, a small CPU build, for 0.6 to 0.13, which import with it, and torch
2.4.0 (a CUDA build, run on the CPU) for 0.4 and 0.5, which do not import with 2.13.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from conformance import record
from conformance.upstream.text import safe

RELEASE = re.compile(r"^\d+\.\d+\.\d+$")
WHEEL = re.compile(r"torchrl-((\d+\.\d+\.\d+)[^-]*)-.*\.whl$")
#: what a checkout's version.txt may say (a label is made of it: no path separators, no '..')
CHECKOUT_VERSION = re.compile(r"^\d+\.\d+(?:\.\d+)?(?:[a-zA-Z0-9+_-]|\.(?!\.))*$")
NIGHTLY = re.compile(r"^nightly(?::(\d{4}\.\d{1,2}\.\d{1,2}))?$")
NIGHTLY_WHEEL = re.compile(r"^torchrl_nightly-(\d{4}\.\d{1,2}\.\d{1,2})-[^/]*\.whl$")


class SourceError(ValueError):
    pass


def minor(version: str) -> tuple[int, int]:
    major, minor_, *_ = (int(p) for p in re.findall(r"\d+", version)[:2])
    return major, minor_


def torch_for(version: str) -> str:
    if minor(version) >= (0, 14):
        return "2.14.1"
    # 0.4 / 0.5 do not import with torch 2.13 (tensordict: ForkingPickler); 2.4.0 measured
    return "2.13.0" if minor(version) >= (0, 6) else "2.4.0"


def extras_for(version: str) -> list[str]:
    """Dependencies installed next to torchrl/tensordict (both are installed without deps)."""
    m = minor(version)
    extras = []
    if (0, 9) <= m <= (0, 10):
        extras.append("pyvers==0.1.0")  # tensordict 0.9/0.10 need pyvers<0.2
    elif m >= (0, 11):
        extras.append("pyvers==0.2.3")
    if m >= (0, 13):
        extras.append("hoptorch>=0.1.4")
    return extras


def iso_day(day: str | None) -> str | None:
    """``2026.10.27`` / ``2024.11.5`` (a nightly's and a commit's day as the pairing rules spell
    it) -> ``2026-10-27``; None for None or anything else."""
    match = re.fullmatch(r"(\d{4})\.(\d{1,2})\.(\d{1,2})", day or "")
    return f"{int(match[1]):04d}-{int(match[2]):02d}-{int(match[3]):02d}" if match else None


@dataclass
class Source:
    """A TorchRL source given to the runner. One subclass per kind owns what differs between
    kinds: how it is resolved, its label, its default expectations, what goes on the path, how
    its import is checked and where its C++ sources come from. Nothing outside this module asks
    a source for its kind to decide what to do; ``kind`` is only recorded (``describe``)."""

    kind: ClassVar[str] = ""
    argument: str
    version: str  # torchrl version (for pairing and expectations)
    install: list[str] = field(default_factory=list)  # pip requirements / files, --no-deps
    path: Path | None = None  # checkout directory put on PYTHONPATH
    ref: str | None = None
    commit: str | None = None  # a git ref's resolved commit
    # set by a pairing rule chain (nightly.py) instead of the table keyed by the release minor
    tensordict_pin: str | None = None
    torch_pin: str | None = None
    extras: list[str] | None = None
    pairing: list[str] = field(default_factory=list)  # why each pin was chosen
    date: str | None = None  # a git commit's committer date, YYYY.M.D (the date rule)
    #: a wheel's whole version (``0.14.1+mybuild``): its column is never the release's
    full_version: str | None = None

    @property
    def label(self) -> str:
        # every part made safe: a label names files (no separator, no '..', resolved or not)
        return re.sub(r"\.{2,}", "_", self._label()).strip(".") or "source"

    def _label(self) -> str:
        """The column (and results file) name."""
        return f"{safe(self.version or 'unknown')}+{self.kind}"

    def describe(self, label: str | None = None) -> dict:
        """What a results document records of this source (``conformance.record``): its kind,
        label (the column: ``label`` when the runner numbered it), version, commit and date."""
        return record.describe(self.kind, label or self.label,
                               self.full_version or self.version or None, self.commit,
                               iso_day(self.date), self.argument)

    def resolve(self, work: Path, base_torches: list[str]) -> Source:
        """The source pinned down (a git ref extracted, a nightly paired); most are already."""
        return self

    def default_expectations(self, expectations: Path, nightly_file: Path) -> list[str]:
        """The expectations files it is judged against when none is given: none (pytest picks a
        release's own file by its version)."""
        return []

    @property
    def tree(self) -> Path | None:
        """A source tree put on PYTHONPATH ahead of what was installed (None: none)."""
        return None

    def imported_from(self, target: Path) -> Path:
        """Where ``import torchrl`` must load from for the source under test to be tested."""
        return self.tree or target

    @property
    def checked_version(self) -> str | None:
        """The version ``torchrl`` must report once imported (None: not checked)."""
        return None

    def tensordict_candidates(self, index_versions) -> list:
        """The rule chain's tensordict candidates, tried in order (``[None]``: the pin)."""
        return [None]

    def shipped_csrc(self) -> str:
        """What a ``torchrl/csrc`` found in the installed package is, for the build's log."""
        return f"the checkout's torchrl/csrc ({self.path})"

    @property
    def csrc_from_tag(self) -> bool:
        """Whether, shipping no ``torchrl/csrc``, its C++ sources are those of the git tag
        ``v<version>`` (a release's wheel: 0.4 to 0.9 ship none)."""
        return False

    @property
    def tensordict(self) -> str:
        if self.tensordict_pin:
            return self.tensordict_pin
        major, minor_ = minor(self.version)
        return f"tensordict=={major}.{minor_}.*"

    @property
    def torch(self) -> str:
        return self.torch_pin or torch_for(self.version)

    @property
    def helpers(self) -> list[str]:
        return extras_for(self.version) if self.extras is None else self.extras


def _own_or_nightly(version: str, expectations: Path, nightly_file: Path) -> list[str]:
    own = expectations / f"torchrl-{version}.txt"
    return [str(own if own.is_file() else nightly_file)]


@dataclass
class Release(Source):
    """``0.13.3``: a release from the package index."""

    kind: ClassVar[str] = "release"

    def _label(self) -> str:
        return safe(self.version or "unknown")

    @property
    def checked_version(self) -> str | None:
        return self.version

    def shipped_csrc(self) -> str:
        return f"torchrl {self.version}'s wheel (torchrl/csrc)"

    @property
    def csrc_from_tag(self) -> bool:
        return True


@dataclass
class Wheel(Release):
    """``path/to/torchrl-X-*.whl``: a wheel file, labelled by its whole version."""

    kind: ClassVar[str] = "wheel"

    def _label(self) -> str:
        return safe(self.full_version or self.version or "unknown")

    def shipped_csrc(self) -> str:
        return f"the wheel's torchrl/csrc ({self.argument})"


@dataclass
class Checkout(Source):
    """``path/to/rl``: a local source checkout, put on the path as it is (a development tree:
    judged against its release's expectations when there are some, else the nightly's)."""

    kind: ClassVar[str] = "checkout"

    @property
    def tree(self) -> Path | None:
        return self.path

    def default_expectations(self, expectations: Path, nightly_file: Path) -> list[str]:
        return _own_or_nightly(self.version, expectations, nightly_file)


@dataclass
class GitRef(Checkout):
    """``git:REPO@REF``: a git ref, resolved to a commit and extracted (``git_source.py``), then
    a checkout labelled by its commit (two refs of one version, or a ref before and after it
    moved, never share a column), paired by its committer date (``pairing.py``)."""

    kind: ClassVar[str] = "git"

    def _label(self) -> str:
        if self.commit:
            return f"{safe(self.version or 'unknown')}+git.{safe(self.commit[:7])}"
        return super()._label()

    def resolve(self, work: Path, base_torches: list[str]) -> Source:
        from conformance.upstream import git_source

        try:
            target, commit, date = git_source.extract(str(self.path), self.ref, work)
        except git_source.GitError as exc:
            raise SourceError(str(exc)) from None
        tree = parse(str(target))  # the extracted tree, checked as a checkout is
        return GitRef(self.argument, tree.version, path=tree.path, ref=self.ref, commit=commit,
                      date=date)

    def tensordict_candidates(self, index_versions) -> list:
        from conformance.upstream import pairing

        return pairing.candidates(self.path, self.commit, self.date, index_versions) or [None]

    def shipped_csrc(self) -> str:
        return f"torchrl/csrc of {self.argument}"


@dataclass
class Nightly(Source):
    """``nightly``, ``nightly:DATE`` or a nightly wheel file: a torchrl-nightly build, labelled
    and dated by its day, paired by its rule chain (``nightly.py``)."""

    kind: ClassVar[str] = "nightly"

    def _label(self) -> str:
        return f"nightly-{safe(self.version) if self.version else 'unresolved'}"

    def describe(self, label: str | None = None) -> dict:
        described = super().describe(label)
        described["date"] = iso_day(self.version)  # a nightly's version is its build day
        return described

    def resolve(self, work: Path, base_torches: list[str]) -> Source:
        import sys

        from conformance.upstream import nightly

        return nightly.resolve(self, nightly.Index(sys.executable), base_torches, work / "wheels")

    def default_expectations(self, expectations: Path, nightly_file: Path) -> list[str]:
        return [str(nightly_file)]

    def shipped_csrc(self) -> str:
        return f"the nightly wheel's torchrl/csrc ({self.argument})"


#: every kind the runner accepts, by the name its results record
KINDS = {cls.kind: cls for cls in (Release, Wheel, Checkout, GitRef, Nightly)}


def _checkout_version(path: Path) -> str:
    version_file = path / "version.txt"
    if not version_file.is_file():
        raise SourceError(f"{path} has no version.txt: is it a pytorch/rl checkout?")
    if not (path / "torchrl" / "__init__.py").is_file():
        # without this, `import torchrl` would silently find the base environment's torchrl
        raise SourceError(f"{path} has no torchrl/__init__.py: is it a pytorch/rl checkout?")
    version = version_file.read_text(encoding="utf-8", errors="replace").strip()
    if not CHECKOUT_VERSION.match(version) or len(version) > 64:
        raise SourceError(f"{version_file} says {version[:40]!r}, not a version such as 0.14.0")
    return version


def _check_wheel(path: Path, argument: str) -> None:
    """A wheel is a zip archive with a .dist-info/METADATA: checked before pip sees it."""
    if not zipfile.is_zipfile(path):
        raise SourceError(f"{argument} is not a wheel: not a zip archive")
    with zipfile.ZipFile(path) as archive:
        if not any(name.endswith(".dist-info/METADATA") for name in archive.namelist()):
            raise SourceError(f"{argument} is not a wheel: no .dist-info/METADATA inside")


GIT_REF = re.compile(r"^[\w][\w./+~^-]*$")  # what a branch, tag or sha looks like; no shell syntax
MAX_ARGUMENT = 1000


def shown(argument: str) -> str:
    """The argument as messages quote it: whole unless absurdly long."""
    return argument if len(argument) <= 200 else f"{argument[:60]}... ({len(argument)} characters)"


def parse(argument: str) -> Source:
    try:
        return _parse(argument)
    except OSError as exc:  # e.g. a name longer than the file system allows
        raise SourceError(f"{shown(argument)!r}: {exc.strerror or exc}") from None


def _parse(argument: str) -> Source:
    if len(argument) > MAX_ARGUMENT or "\x00" in argument or "\n" in argument:
        raise SourceError(f"{shown(argument)!r} is too long or not one line")
    if RELEASE.match(argument):
        return Release(argument, argument, [f"torchrl=={argument}"])
    nightly_match = NIGHTLY.match(argument)
    if nightly_match:
        return Nightly(argument, nightly_match.group(1) or "")
    if argument.startswith("git:"):
        repo, sep, ref = argument[4:].rpartition("@")
        if not sep or not repo or not ref:
            raise SourceError(f"{shown(argument)!r}: expected git:REPO@REF")
        if repo.startswith("-") or ref.startswith("-"):  # git would read it as an option
            raise SourceError(f"{shown(argument)!r}: a repository or ref cannot start with '-'")
        if not GIT_REF.match(ref):
            raise SourceError(f"{shown(argument)!r}: {ref!r} is not a branch, tag or commit name")
        return GitRef(argument, "unknown", path=Path(repo), ref=ref)
    path = Path(argument)
    if NIGHTLY_WHEEL.match(path.name):
        if not path.is_file():
            raise SourceError(f"no such wheel file: {shown(argument)}")
        _check_wheel(path, argument)
        return Nightly(argument, NIGHTLY_WHEEL.match(path.name).group(1), [str(path.resolve())])
    if argument.endswith(".whl"):
        match = WHEEL.search(path.name)
        if not match:
            raise SourceError(f"{argument!r} is not a torchrl wheel file name")
        if not path.is_file():
            raise SourceError(f"no such wheel file: {argument}")
        _check_wheel(path, argument)
        return Wheel(argument, match.group(2), [str(path.resolve())], full_version=match.group(1))
    if path.is_dir():
        return Checkout(argument, _checkout_version(path), path=path.resolve())
    raise SourceError(
        f"{shown(argument)!r} is neither a release (0.13.3), a wheel file, a checkout "
        "directory, nightly[:YYYY.MM.DD] nor git:REPO@REF"
    )
