"""The automatic target entropy oracle: -dim(A) counted by hand."""

from __future__ import annotations

import pytest

from conformance.oracles import sac_target_entropy as oracle


@pytest.mark.parametrize(("heads", "want"), [
    ({"action": (1,)}, -1.0),
    ({"action": (2,)}, -2.0),
    ({"action": (2, 3)}, -6.0),  # prod of the event shape
    ({"a1": (2,), "a2": (3,)}, -5.0),  # heads added up
    ({"a1": (2, 2), "a2": (1,)}, -5.0),
])
def test_minus_the_action_dimensions(heads, want):
    assert oracle.auto_target_entropy(heads) == want


def test_an_action_has_a_head():
    with pytest.raises(ValueError, match="at least one head"):
        oracle.auto_target_entropy({})


def test_the_known_wrong_rules_are_named():
    assert "every action counts as one" in oracle.diagnose(-1.0, {"action": (2,)}, None)
    assert "agents' dimension" in oracle.diagnose(-6.0, {"action": (2,)}, 3)
    assert "only one head" in oracle.diagnose(-2.0, {"a1": (2,), "a2": (3,)}, None)
    # the right value, or a value no rule gives, names nothing
    assert oracle.diagnose(-2.0, {"action": (2,)}, 3) is None
    assert oracle.diagnose(-7.0, {"action": (2,)}, None) is None
