"""Reading expectations files: the line format, version blocks and includes.

One entry a line; ``#`` starts a comment line; blank lines are ignored::

    <test-id prefix> | <reason> | <upstream link>               a known failure
    <test-id prefix> | <reason> | <upstream link> | <failure>   ... that fails this way only
    untestable: <test-id prefix> | <reason> | <upstream link>   expected "cannot be tested here"
    include <file> for <version>                                entries shared with other releases
    [<version range>]                                           (in an included file) a block

``include torchrl.txt for 0.9.2`` takes the entries of ``torchrl.txt`` (a file of the including
file's folder, else of the suite's ``conformance/expectations``; nothing outside them) that apply to version 0.9.2: the entries before the file's first block header
apply to every version, those under a header ``[>=0.7.2, <=0.13.3]`` (a PEP 440 version range)
to the versions inside it, up to the next header. Entries shared by several releases are so
written once. Includes do not nest, and a file with blocks is only read through an include: read
on its own it would not know which blocks apply.

``<failure>`` says what the known failure looks like, as pytest's ``xfail(raises=...)`` does:
``raises <ExceptionName>``, ``matching <regex>`` or ``raises <ExceptionName> matching <regex>``.
The exception must be of that class (or a subclass: the name of any class in its MRO, dotted
names compared by their last part), and the regex is searched (``re.search``) in
``"<ExceptionName>: <message>"`` of the failure. A listed test that fails another way is an
unexpected result, whose message shows what was expected and what happened.

Files are UTF-8 (a byte-order mark is accepted, and UTF-16 with a byte-order mark is read too);
anything else is a one-line error naming the file and line, never a misread prefix.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from conformance import paths
from conformance.plugin import pattern_budget

FAIL = "fail"  #: a known failure: a strict expected failure
UNTESTABLE = "untestable"  #: an expected "cannot be tested here"
KIND_MARKER = {UNTESTABLE: "untestable:"}

SUITE_EXPECTATIONS = paths.EXPECTATIONS
_FAILURE = re.compile(r"^(?:raises\s+(?P<raises>[A-Za-z_][\w.]*))?\s*"
                      r"(?:(?<=\s)matching\s+(?P<p1>.+)|^matching\s+(?P<p2>.+))?$")
_INCLUDE = re.compile(r"^include\s+(?P<file>\S+)\s+for\s+(?P<version>\S+)$")
_BLOCK = re.compile(r"^\[(?P<range>[^\]]*)\]$")


class ExpectationsError(pytest.UsageError):
    """Bad input in an expectations file: reported by pytest as one ``ERROR:`` line."""


@dataclass(frozen=True)
class Entry:
    prefix: str
    reason: str
    link: str
    source: str  # "file:line", for error messages and the pytest header
    impls: frozenset[str]
    kind: str = FAIL
    included_as: str = ""  # "for 0.9.2 by torchrl-0.9.2.txt:4" when read through an include
    failure: str = ""  # "raises AssertionError matching <regex>"; "": any failure

    @property
    def raises(self) -> str:
        match = _FAILURE.match(self.failure)
        return (match["raises"] or "") if match else ""

    @property
    def pattern(self) -> str:
        match = _FAILURE.match(self.failure)
        return (match["p1"] or match["p2"] or "") if match else ""

    def failed_otherwise(self, exc: BaseException) -> str | None:
        """None when ``exc`` is the failure this entry expects, else what happened instead."""
        if not self.failure:
            return None
        actual = f"{type(exc).__name__}: {_one_line(str(exc))}"
        names = {c.__name__ for c in type(exc).__mro__}
        if self.raises and self.raises.rsplit(".", 1)[-1] not in names:
            return actual
        if self.pattern and pattern_budget.search(self.pattern,
                                                  f"{type(exc).__name__}: {exc}") is None:
            return actual
        return None

    @property
    def where(self) -> str:
        return f"{self.source} ({self.included_as})" if self.included_as else self.source

    @property
    def line(self) -> str:
        """The entry as written in a file (the form the fold and the draft write)."""
        marker = KIND_MARKER.get(self.kind)
        failure = f" | {self.failure}" if self.failure else ""
        return f"{marker + ' ' if marker else ''}{self.prefix} | {self.reason} | {self.link}{failure}"


@dataclass
class Record:
    """One entry line of a file with what surrounds it, for tools that rewrite files."""

    entry: Entry
    block: str  # the block's version range as written, "" before the first header
    comments: list[str] = field(default_factory=list)  # the comment lines directly above


@dataclass
class Include:
    file: Path
    version: str
    source: str


@dataclass
class ParsedFile:
    path: Path
    header: list[str]  # the comment lines the file starts with
    includes: list[Include]
    records: list[Record]


def read_text(path: Path) -> str:
    """The text of an expectations file, or a one-line ExpectationsError."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ExpectationsError(f"cannot read expectations file {path}: {exc.strerror}") from None
    if data.startswith(codecs.BOM_UTF8):
        data, encoding = data[len(codecs.BOM_UTF8):], "utf-8"
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"  # the BOM says which byte order; a Windows editor's "Unicode"
    else:
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ExpectationsError(
            f"{path}:{line}: not {encoding.upper()} text (byte 0x{data[exc.start]:02x}); "
            "save the file as UTF-8"
        ) from None
    if "\x00" in text:  # UTF-16 or UTF-32 without a byte-order mark decodes as "valid" UTF-8
        line = text[: text.index("\x00")].count("\n") + 1
        raise ExpectationsError(
            f"{path}:{line}: contains NUL characters (UTF-16 or UTF-32 without a byte-order "
            "mark?); save the file as UTF-8"
        )
    return text


def _version_range(text: str, where: str) -> SpecifierSet:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise ExpectationsError(
            f"{where}: [{shown(text)}] is not a version range (PEP 440, e.g. [>=0.7.2, <=0.13.3])"
        ) from None


def _entry(stripped: str, where: str, impls: frozenset[str]) -> Entry:
    kind = FAIL
    for candidate, marker in KIND_MARKER.items():
        if stripped.startswith(marker):
            kind, stripped = candidate, stripped[len(marker):].strip()
    parts = [p.strip() for p in stripped.split("|", 3)]  # a failure's regex may hold "|"
    if len(parts) not in (3, 4) or not all(parts):
        raise ExpectationsError(
            f"{where}: expected '[untestable:] <test-id prefix> | <reason> | <upstream link>"
            f"[ | <failure>]', got {shown(stripped)}"
        )
    prefix, reason, link = parts[:3]
    failure = parts[3] if len(parts) == 4 else ""
    if not link.startswith(("http://", "https://")):
        raise ExpectationsError(f"{where}: the third field must be an upstream link, got "
                                f"{shown(link)}")
    if "::" not in prefix and not prefix.endswith(".py"):
        raise ExpectationsError(f"{where}: {shown(prefix)} is not a test id prefix "
                                "(path.py::test...)")
    if failure:
        _check_failure(failure, kind, where)
    return Entry(prefix, reason, link, where, impls, kind, failure=failure)


def _check_failure(failure: str, kind: str, where: str) -> None:
    match = _FAILURE.match(failure)
    if kind != FAIL:
        raise ExpectationsError(f"{where}: an untestable: entry names no failure (drop "
                                f"{shown(failure)})")
    if match is None or not (match["raises"] or match["p1"] or match["p2"]):
        raise ExpectationsError(
            f"{where}: the fourth field says how the test fails: 'raises <ExceptionName>', "
            f"'matching <regex>' or 'raises <ExceptionName> matching <regex>', got "
            f"{shown(failure)}")
    pattern = match["p1"] or match["p2"]
    if pattern:
        try:
            re.compile(pattern)
            pattern_budget.check(pattern)
        except re.error as exc:
            raise ExpectationsError(f"{where}: {shown(pattern)} is not a regular expression "
                                    f"({exc})") from None
        except (pattern_budget.PatternTooCostly, RecursionError) as exc:
            raise ExpectationsError(f"{where}: {shown(pattern)} could take unbounded time to "
                                    f"match ({exc or 'nested too deeply'}); simplify it") from None


def _one_line(text: str, limit: int = 300) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= limit else first[:limit] + "..."


def shown(text: str, limit: int = 120) -> str:
    """``repr`` of a piece of user input, cut to ``limit`` characters (with the full length)."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def read(path: Path, impls: frozenset[str] = frozenset()) -> ParsedFile:
    """The structure of one file, includes not followed."""
    path = Path(path)
    parsed = ParsedFile(path, [], [], [])
    block, comments, at_start = "", [], True
    for number, line in enumerate(read_text(path).splitlines(), 1):
        stripped = line.strip()
        where = f"{path}:{number}"
        if stripped.startswith("#"):
            (parsed.header if at_start else comments).append(stripped)
            continue
        at_start = False
        if not stripped:
            comments = []  # a comment belongs to the entry right below it
            continue
        if (match := _INCLUDE.match(stripped)) is not None:
            _version(match["version"], where)
            parsed.includes.append(Include(include_target(path, match["file"], where),
                                           match["version"], where))
        elif stripped.startswith("include "):
            raise ExpectationsError(f"{where}: expected 'include <file> for <version>', got "
                                    f"{shown(stripped)}")
        elif (match := _BLOCK.match(stripped)) is not None:
            _version_range(match["range"], where)
            block = match["range"].strip()
        else:
            parsed.records.append(Record(_entry(stripped, where, impls), block, comments))
        comments = []
    return parsed


def include_target(including: Path, name: str, where: str) -> Path:
    """The file ``include <name>`` takes in: a file of the including file's folder, else of the
    suite's expectations folder, and nothing outside those two (no absolute path, no ``..``, no
    link leading out), so that an expectations file can never read, or echo, another file."""
    own = including.resolve().parent
    candidate = (own / name).resolve()
    if not candidate.is_relative_to(own):  # absolute, "..", or a link leading out
        raise ExpectationsError(
            f"{where}: include {shown(name)}: only files of {own} or of the suite's "
            f"{SUITE_EXPECTATIONS} can be included")
    shared = (SUITE_EXPECTATIONS / name).resolve()
    if not candidate.is_file() and shared.is_relative_to(SUITE_EXPECTATIONS) and shared.is_file():
        return shared
    return candidate


def capped(problems: list[str], lines: int = 20, width: int = 300) -> list[str]:
    """At most ``lines`` problems of at most ``width`` characters each, then how many more."""
    shown_ = [p if len(p) <= width else f"{p[:width]}... ({len(p)} characters)"
              for p in problems[:lines]]
    if len(problems) > lines:
        shown_.append(f"... and {len(problems) - lines} more problem(s)")
    return shown_


def _version(text: str, where: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise ExpectationsError(f"{where}: {shown(text)} is not a version") from None


def applies(record: Record, version: str) -> bool:
    """Whether an entry of an included file applies to ``version`` (its block covers it)."""
    if not record.block:
        return True
    wanted = _version(version, record.entry.source)
    return _version_range(record.block, record.entry.source).contains(wanted, prereleases=True)


def entries_for(parsed: ParsedFile, version: str | None, included_as: str = "") -> list[Entry]:
    """The entries of a file that apply to ``version`` (None: a file read on its own)."""
    out = []
    for record in parsed.records:
        entry = record.entry
        if record.block and version is None:
            raise ExpectationsError(
                f"{entry.source}: a version block applies only through "
                f"'include {parsed.path.name} for <version>' in another file"
            )
        if version is not None and not applies(record, version):
            continue
        if included_as:
            entry = replace(entry, included_as=included_as)
        out.append(entry)
    return out


def parse(path: Path, impls: frozenset[str]) -> list[Entry]:
    """Every entry ``path`` holds for ``impls``: its own lines and those it includes."""
    parsed = read(path, impls)
    entries = entries_for(parsed, None)
    for include in parsed.includes:
        if not include.file.is_file():
            raise ExpectationsError(f"{include.source}: no such file to include: {include.file}")
        shared = read(include.file, impls)
        if shared.includes:
            raise ExpectationsError(f"{shared.includes[0].source}: includes do not nest "
                                    f"({include.file} is included by {include.source})")
        name = Path(include.source.rsplit(":", 1)[0]).name
        as_ = f"for {include.version} by {name}:{include.source.rsplit(':', 1)[1]}"
        entries += entries_for(shared, include.version, as_)
    return entries


def every_entry(path: Path) -> list[Entry]:
    """All entries of a file whatever their block, includes followed (for reusing reasons)."""
    parsed = read(path)
    entries = [r.entry for r in parsed.records]
    for include in parsed.includes:
        entries += [r.entry for r in read(include.file).records]
    return entries
