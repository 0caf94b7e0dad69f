"""The nox sessions' worker count ($TORCHRL_CONFORMANCE_WORKERS) is bounded like the console's
--workers: digits only, from 0 to the machine's CPUs, anything else one line before work starts.

The stack environment the self-tests run in has no nox, so the noxfile's ``_workers`` is read
from its source and run against a stand-in session that records ``session.error``."""

from __future__ import annotations

import ast
import os
import types

import pytest

from tests.conftest import ROOT


class _Stopped(Exception):
    pass


class _Session:
    def error(self, message):
        raise _Stopped(message)


def _workers_function():
    source = (ROOT / "noxfile.py").read_text()
    node = next(n for n in ast.parse(source).body
                if isinstance(n, ast.FunctionDef) and n.name == "_workers")
    namespace = {"os": os, "nox": types.SimpleNamespace(Session=_Session)}
    exec(compile(ast.Module([node], []), "noxfile.py", "exec"), namespace)
    return namespace["_workers"]


@pytest.mark.parametrize("given", ["99999", "-1", "²", "+1", "", "auto", "2.0"])
def test_a_bad_worker_count_stops_the_session_in_one_line(monkeypatch, given):
    monkeypatch.setenv("TORCHRL_CONFORMANCE_WORKERS", given)
    with pytest.raises(_Stopped) as stopped:
        _workers_function()(_Session())
    message = str(stopped.value)
    assert "\n" not in message and message.startswith("TORCHRL_CONFORMANCE_WORKERS=")
    assert "a whole number from 0 to" in message


@pytest.mark.parametrize("given, expected", [(None, "2"), ("0", "0"), ("1", "1"), ("02", "2")])
def test_a_worker_count_within_the_machine_is_passed_on(monkeypatch, given, expected):
    if given is None:
        monkeypatch.delenv("TORCHRL_CONFORMANCE_WORKERS", raising=False)
    else:
        monkeypatch.setenv("TORCHRL_CONFORMANCE_WORKERS", given)
    assert _workers_function()(_Session()) == expected
