"""The stack is pinned once (pyproject.toml's ``stack`` extra); what cannot read it agrees."""

import json

from conformance.paths import ROOT
from conformance.stack import pins


def test_pins_are_read_from_pyproject():
    assert set(pins()) == {"torch", "torchrl", "tensordict"}
    assert all(version[0].isdigit() for version in pins().values())


def test_asv_builds_the_pinned_stack():
    matrix = json.loads((ROOT / "asv.conf.json").read_text())["matrix"]["req"]
    assert {name: matrix[name] for name in pins()} == {n: [v] for n, v in pins().items()}, (
        "asv.conf.json's matrix must name the stack of pyproject.toml's `stack` extra")
