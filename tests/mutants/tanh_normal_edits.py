"""One mutmut edit of ``impls/tanh_normal_mode.py``, applied the way mutmut applies it: inside one
function, the removed lines (compared stripped) replaced by the added ones. The probes of
``test_mutants_tanh_normal_equivalent.py`` run the reference with such an edit and compare it with
the unedited reference; ``key`` names the edit exactly as ``tests/mutants/mutation.py`` keys its
classification (file, function, sha1 of the edit), so that a probe is tied to that very mutant.
"""

from __future__ import annotations

import hashlib
import re
import types

from tests.mutants.source import mutated_module, source_of

MODULE = "impls.tanh_normal_mode"
FILE = "impls/tanh_normal_mode.py"


def key(function: str, removed: list[str], added: list[str]) -> str:
    """``tests.mutants.mutation.key_of`` for this edit (its ``edit_of`` text, hashed)."""
    edit = "\n".join([f"-{line.strip()}" for line in removed] + [f"+{line.strip()}"
                                                                    for line in added])
    return f"{FILE}:{function}:{hashlib.sha1(edit.encode()).hexdigest()[:12]}"


def _function_span(source: str, function: str) -> tuple[int, int]:
    """Character span of ``function`` (``name`` or ``Class.method``) in the module source."""
    *owner, name = function.split(".")
    start = 0
    if owner:
        start = re.search(rf"^class {owner[0]}\b.*$", source, re.M).end()
    found = re.compile(rf"^(\s*)def {name}\(.*$", re.M).search(source, start)
    if found is None:
        raise AssertionError(f"{FILE}: no function {function}")
    indent = len(found.group(1))
    # the function ends at the next line indented as much as its def (or less), not blank
    end = re.compile(rf"^ {{0,{indent}}}\S", re.M).search(source, found.end())
    return found.start(), end.start() if end else len(source)


def edited_module(function: str, removed: list[str], added: list[str], *,
                  tag: str) -> types.ModuleType:
    """``impls.tanh_normal_mode`` with the edit made in ``function`` (the removed lines must
    occur exactly once there); no removed lines: the module unedited."""
    if not removed:
        return mutated_module(MODULE, tag=tag)
    _, source = source_of(MODULE)
    start, end = _function_span(source, function)
    body = source[start:end].split("\n")
    stripped = [line.strip() for line in body]
    hits = [i for i in range(len(body)) if stripped[i:i + len(removed)] == [
        line.strip() for line in removed]]
    if len(hits) != 1:
        raise AssertionError(f"{function}: the removed lines occur {len(hits)} times: {removed}")
    i = hits[0]
    indent = body[i][:len(body[i]) - len(body[i].lstrip())]
    body[i:i + len(removed)] = [indent + line.strip() for line in added]
    old = source[start:end]
    return mutated_module(MODULE, old, "\n".join(body), tag=tag)
