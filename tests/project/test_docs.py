"""The README and docs/ claim only what exists, and quote no number a report does not hold.

- every relative link resolves to a file (and a ``#anchor`` into Markdown to one of its headings),
  and every page of docs/ is reachable from the README;
- every ``nox -s NAME`` is a session of ``noxfile.py`` (read with ``ast``: nox is not importable
  here); every ``python -m MODULE`` of the project answers ``--help`` with exit status 0, and any
  other module named is one of the few tools the docs use; every ``python path.py`` exists;
- every backticked project path exists (``<placeholders>`` and ``*`` match anything), and every
  backticked dotted name of the project (``conformance.interface.Untestable``) imports;
- the README stays under 12 000 bytes, lists the areas in their one order, holds the two
  commands, and CI runs the second; no page names this checkout's absolute path.

Measured numbers (``MEASURED``: a time, a size, a factor, a percentage, a count of outcomes; and
``DECIMAL``: a bare decimal in prose, which reads as a ratio) are flagged everywhere except:

- inside a *verified report excerpt*: a fenced block right after a line
  ``<!-- excerpt: reports/FILE -->``, every line of which (``…`` elisions aside) must be a line of
  that committed report, so it cannot carry a number the report does not;
- where the paragraph links a committed file under reports/ that holds the same text as a whole
  token ("76 known failure" vouches for "76 known failures", not for "6 known failures"); a
  regenerated report that changes the number then fails this test instead of letting it drift;
- ``SETTINGS``: phrases that quote a setting (a default, a grace period), each rebuilt from the
  value in the code, so it is a design choice and fails here when the code changes;
- for ``DECIMAL`` only: versions (``X.Y.Z``, and ``X.Y`` of a version the project pins or runs or
  the Python it requires, ``_known_minors``), decimals inside code (fenced blocks, backticks: a
  literal such as ``clip_value=0.25`` in a quoted error message, not a measurement).
"""

from __future__ import annotations

import ast
import functools
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.paths import ROOT

README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_LIMIT = 12_000  # bytes (issue #25): the README points into docs/, it is not the manual

FENCE = re.compile(r"^(```|~~~)[^\n]*\n.*?^\1[ \t]*$", re.M | re.S)
EXCERPT = re.compile(r"^<!-- excerpt: (\S+) -->[ \t]*\n((```|~~~)[^\n]*\n(.*?)^\3[ \t]*$)",
                     re.M | re.S)
COMMENT = re.compile(r"<!--.*?-->", re.S)
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
ELISION = {"…", "..."}


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _without_comments(text: str) -> str:
    return COMMENT.sub("", text)


def _prose(text: str) -> str:
    """``text`` without comments and fenced blocks (links and paths in code are not links)."""
    return FENCE.sub("", _without_comments(text))


# --- links -----------------------------------------------------------------------------------

def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", _prose(_text(path)), flags=re.M)}


def _relative_links(path: Path) -> list[str]:
    return [t for t in LINK.findall(_prose(_text(path)))
            if not re.match(r"[a-z][a-z0-9+.-]*:", t) and not t.startswith("#")]


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_every_relative_link_resolves(doc):
    broken = []
    for target in _relative_links(doc):
        file, _, anchor = target.partition("#")
        resolved = (doc.parent / file).resolve()
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: no heading with anchor #{anchor}")
    assert not broken, f"{_id(doc)} links to what does not exist: {broken}"


def test_every_page_of_docs_is_linked_from_the_readme():
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in _relative_links(README)}
    orphans = [_id(p) for p in DOCS[1:] if p.resolve() not in linked]
    assert not orphans, f"README's map of docs/ misses {orphans}"


# --- commands --------------------------------------------------------------------------------

def _nox_sessions() -> set[str]:
    tree = ast.parse(_text(ROOT / "noxfile.py"))
    sessions = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                call = deco.func if isinstance(deco, ast.Call) else deco
                if ast.unparse(call) in ("nox.session", "session"):
                    sessions.add(node.name)
    return sessions


def _all_text() -> str:
    return "\n".join(_without_comments(_text(p)) for p in DOCS)


def test_every_nox_session_named_exists():
    sessions = _nox_sessions()
    assert {"conformance", "tests", "bench", "lint"} <= sessions, sessions  # the parse works
    named = set(re.findall(r"\bnox -s ([\w-]+)", _all_text()))
    assert named, "the docs name no nox session"
    assert not named - sessions, f"the docs name nox sessions that noxfile.py lacks: " \
                                 f"{sorted(named - sessions)}"


PROJECT_PACKAGES = ("conformance", "benchtools", "impls", "benchmarks", "tests")
#: third-party modules the docs run with ``python -m``; anything else must be the project's
TOOLS = {"pip", "nox", "pytest", "asv", "http.server"}  # http.server: the standard library's


def _modules_named() -> set[str]:
    return set(re.findall(r"\bpython -m ([A-Za-z_][\w.]*)", _all_text()))


def _project_modules() -> list[str]:
    return sorted(m for m in _modules_named() if m.split(".")[0] in PROJECT_PACKAGES)


def test_every_module_named_is_the_projects_or_a_known_tool():
    unknown = sorted(m for m in _modules_named()
                     if m.split(".")[0] not in PROJECT_PACKAGES and m not in TOOLS)
    assert not unknown, f"the docs run modules that are neither the project's nor {TOOLS}: " \
                        f"{unknown}"


@pytest.mark.parametrize("module", _project_modules())
def test_every_project_module_named_answers_help(module):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"python -m {module} --help: exit status {done.returncode}\n" \
                                 f"{done.stderr[-2000:]}"
    assert done.stdout.strip(), f"python -m {module} --help printed nothing"


def test_every_script_named_exists():
    scripts = set(re.findall(r"\bpython ((?:[\w.-]+/)*[\w.-]+\.py)\b", _all_text()))
    missing = sorted(s for s in scripts if not (ROOT / s).is_file())
    assert not missing, f"the docs run scripts that do not exist: {missing}"


# --- paths and names -------------------------------------------------------------------------

PATH_ROOTS = ("conformance", "benchtools", "benchmarks", "tests", "impls", "examples", "docs",
              ".ci", ".github")


def _as_glob(path: str) -> list[str]:
    """``a/{b,c}.md`` -> two globs; ``<name>`` -> ``*``."""
    path = re.sub(r"\*+", "*", re.sub(r"<[^>]*>", "*", path.rstrip("/")))  # <area>*: one *
    braces = re.search(r"\{([^}]*)\}", path)
    if not braces:
        return [path]
    return [g for option in braces.group(1).split(",")
            for g in _as_glob(path[:braces.start()] + option + path[braces.end():])]


def _paths_named(doc: Path) -> set[str]:
    spans = CODE_SPAN.findall(_without_comments(_text(doc)))
    return {s for s in spans if re.fullmatch(rf"(?:{'|'.join(map(re.escape, PATH_ROOTS))})/"
                                             r"[\w./<>{},*-]*", s)}


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_every_project_path_named_exists(doc):
    paths = _paths_named(doc)
    missing = [p for p in sorted(paths) if not all(any(ROOT.glob(g)) for g in _as_glob(p))]
    assert not missing, f"{_id(doc)} names paths that do not exist: {missing}"


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_every_dotted_project_name_imports(doc):
    names = {s for s in CODE_SPAN.findall(_without_comments(_text(doc)))
             if re.fullmatch(r"(?:conformance|benchtools|impls)(?:\.\w+)+", s)}
    missing = sorted(n for n in names if not _resolves(n))
    assert not missing, f"{_id(doc)} names what the project does not have: {missing}"


# --- the README --------------------------------------------------------------------------------

@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_no_path_of_this_checkout(doc):
    assert str(ROOT) not in _text(doc), f"{_id(doc)} names this checkout's absolute path"


def test_readme_is_short():
    size = len(README.read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes (limit {README_LIMIT}): move " \
                                 "detail into the page of docs/ for its task"


def test_the_two_commands_are_in_the_readme_and_ci_runs_the_second():
    text = _text(README)
    assert "python -m pip install nox && python -m nox -s conformance" in text
    assert "python -m pip install nox && python -m nox -s tests" in text
    assert "python -m nox -s tests" in _text(ROOT / ".ci" / "run")


def test_readme_lists_the_areas_in_their_one_order():
    from conformance.areas import ORDER

    rows = re.findall(r"^\| (\d) \| [^|]+ \| `conformance/test_(\w+)\.py` \|", _text(README),
                      flags=re.M)
    assert rows == [(str(a.number), a.name) for a in ORDER], rows


def test_every_reference_name_in_a_table_is_exported():
    import impls

    names = set()
    for doc in (README, ROOT / "docs" / "dropin.md"):
        # the last column of the area and drop-in tables: `Name`, `Name`
        names |= set(re.findall(r"`(\w+)`(?=[^|\n]*\|\s*$)", _text(doc), flags=re.M))
    names = {n for n in names if n[0].isupper() or "_" in n and n.islower()}
    assert {"TanhNormal", "PrioritizedSampler"} <= names, names  # the tables were read
    missing = sorted(n for n in names if n not in impls.__all__)
    assert not missing, f"the docs name reference implementations that impls lacks: {missing}"


# --- measured numbers --------------------------------------------------------------------------

NUMBER = r"\d+(?:[.,]\d+)?"
MEASURED = {
    "a time or a size": re.compile(
        rf"(?<![\w.]){NUMBER}\s?(?:ns|µs|us|ms|s|secs?|seconds?|mins?|minutes?|h|hours?|"
        r"[KMGT]i?B|bytes)(?!\w)"),
    "a factor": re.compile(rf"(?<![\w.]){NUMBER}\s?(?:x|×)(?!\w)|\b{NUMBER}\s+times\b"),
    "a percentage": re.compile(rf"(?<![\w.]){NUMBER}\s?%"),
    "a count of outcomes": re.compile(
        rf"(?<![\w.]){NUMBER}\s+(?:passed|failed|skipped|known failures?|unexpected \w+|"
        r"pass(?:es)?|failures?|tests?|self-tests?|specs?|cases|defects|points|runs)\b"),
}
#: a bare decimal in prose reads as a ratio or a measurement, unless it is a version
DECIMAL = re.compile(r"(?<![\w.+-])\d+\.\d+(?![\w.])")


@functools.cache
def _known_minors() -> set[str]:
    """X.Y of every version the project pins or runs, and the Python it requires."""
    texts = [_text(ROOT / p) for p in ("noxfile.py", "pyproject.toml",
                                        "conformance/libraries/registry.py",
                                        "conformance/upstream/sources.py")]
    versions = set(re.findall(r"\b\d+\.\d+(?=\.\d+\b)", "\n".join(texts)))
    versions |= set(re.findall(r'requires-python = ">=(\d+\.\d+)"', texts[1]))
    return versions


#: Settings the docs may quote: (phrase as written, what it is, the value read from the code).
#: Each is a design choice, not a measurement; the test fails if the code's value changes.
def _watchdog_default():
    from conformance.plugin.watchdog import DEFAULT_SECONDS

    return f"default {DEFAULT_SECONDS:g} s"


def _interrupt_grace():
    tree = ast.parse(_text(ROOT / "noxfile.py"))
    value = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                 and ast.unparse(n.targets[0]) == "INTERRUPT_GRACE")
    return f"{value:g} s (`INTERRUPT_GRACE` in `noxfile.py`)"


SETTINGS = {
    "the spec timeout's default (conformance/plugin/watchdog.py)": _watchdog_default,
    "the grace an interrupted nox run gets (noxfile.py)": _interrupt_grace,
}


def _excerpts(doc: Path):
    """(report path, fenced block, its inner lines) of every marked excerpt of ``doc``."""
    for m in EXCERPT.finditer(_text(doc)):
        yield m.group(1), m.group(2), m.group(4).splitlines()


def _committed(path: Path) -> bool:
    if not (ROOT / ".git").exists():
        return path.is_file()
    done = subprocess.run(["git", "ls-files", "--error-unmatch", str(path)], cwd=ROOT,
                          capture_output=True)
    return done.returncode == 0


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_report_excerpts_are_verbatim_lines_of_a_committed_report(doc):
    for name, _, lines in _excerpts(doc):
        report = (doc.parent / name).resolve()
        assert report.is_relative_to(ROOT / "reports") and _committed(report), \
            f"{_id(doc)}: an excerpt must come from a committed file under reports/, not {name}"
        have = {line.rstrip() for line in _text(report).splitlines()}
        invented = [line for line in lines if line.strip() not in ELISION and line.rstrip()
                    and line.rstrip() not in have]
        assert not invented, f"{_id(doc)}: excerpt lines not in {name} (regenerated? copy " \
                             f"them again): {invented}"


def _normalised(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[*`]", "", text)).lower()


def _paragraphs(text: str):
    """Blocks between blank lines; a fenced block is one paragraph of its own."""
    blocks, last = [], 0
    for m in FENCE.finditer(text):
        blocks += re.split(r"\n\s*\n", text[last:m.start()]) + [m.group(0)]
        last = m.end()
    return blocks + re.split(r"\n\s*\n", text[last:])


def measured_numbers(doc: Path) -> list[str]:
    """Every measured-looking number of ``doc`` that nothing vouches for."""
    text = _without_comments(_text(doc))
    for _, block, _ in _excerpts(doc):
        text = text.replace(block, "")
    for phrase in SETTINGS.values():
        text = text.replace(phrase(), "")
    found = []
    for paragraph in _paragraphs(text):
        reports = [(doc.parent / t.partition("#")[0]).resolve() for t in LINK.findall(paragraph)]
        quoted = _normalised(" ".join(_text(r) for r in reports
                                      if r.is_relative_to(ROOT / "reports") and r.is_file()))
        hits = [(kind, m.group(0)) for kind, rx in MEASURED.items()
                for m in rx.finditer(paragraph)]
        if not paragraph.lstrip().startswith(("```", "~~~")):
            prose = CODE_SPAN.sub("", paragraph)
            hits += [("a ratio", m.group(0)) for m in DECIMAL.finditer(prose)
                     if m.group(0) not in _known_minors()]
        for kind, hit in hits:
            said = _normalised(hit)
            if quoted and re.search(rf"(?<![\w.]){re.escape(said.rstrip('s'))}", quoted):
                continue  # read from the report this paragraph links (singular or plural)
            line = next(text for text in paragraph.splitlines() if hit in text)
            found.append(f"{kind} {hit!r} in: {line.strip()[:120]}")
    return found


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_no_measured_number_outside_reports(doc):
    found = measured_numbers(doc)
    assert not found, (
        f"{_id(doc)} quotes measured numbers that no report vouches for (link the report "
        f"instead, copy a verified excerpt, or name the setting in SETTINGS):\n  "
        + "\n  ".join(found))


def test_the_number_check_catches_what_drifted_before(tmp_path):
    """The check is not vacuous: the README's old drifted numbers are caught, a link to a report
    that does not hold them vouches for nothing, and an excerpt cannot invent a line."""
    (tmp_path / "reports").symlink_to(ROOT / "reports")
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "probe.md"
    lines = {
        "TanhNormal construction + mode: 25.6 against one tanh.": "a ratio",
        "The main job takes about 40 s warm.": "a time or a size",
        "The first run installs 5.8 GB.": "a time or a size",
        "PER extend is 1.57x TorchRL's.": "a factor",
        "Swapped: 2989 passed, 33 failed.": "a count of outcomes",
        "One in [the report](../reports/dropin.md) took 12 minutes.": "a time or a size",
        "Within ±20% of the first run.": "a percentage",
    }
    # a count the matrix holds (it vouches for it) and one it does not
    held = re.findall(r"\b(\d+) known failure", (ROOT / "reports" / "upstream.md").read_text())
    vouched = held[0]
    page.write_text("\n\n".join(lines) + "\n\nVersions 0.14 and 2.13, Python 3.10.\n\n"
                    f"As [the matrix](../reports/upstream.md) says: {vouched} known failures.\n\n"
                    "Not [the matrix](../reports/upstream.md)'s 6 known failures.\n")
    assert "6" not in held, "test design: pick a count the matrix does not hold"
    found = measured_numbers(page)
    for line, kind in lines.items():
        assert any(f.startswith(kind) and line[:30] in f for f in found), (line, found)
    assert not [f for f in found if "Versions" in f or f"'{vouched} " in f], found
    assert any("'6 known failures'" in f for f in found), found  # a number is a whole token
    page.write_text("<!-- excerpt: ../reports/upstream.md -->\n```\n"
                    "| torchrl 0.14.1 | conformant to expectations | 1 known failure |\n```\n")
    with pytest.raises(AssertionError, match="excerpt lines not in"):
        test_report_excerpts_are_verbatim_lines_of_a_committed_report(page)
