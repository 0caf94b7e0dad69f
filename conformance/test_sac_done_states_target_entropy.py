"""§3 the automatic target entropy: ``-dim(A)``, every head and no agent counted.

SAC tunes its temperature so that the policy's entropy stays near a target; left to the loss
(TorchRL: ``target_entropy="auto"``, the default), the target is minus the number of action
dimensions (Haarnoja et al. 2018, arXiv:1812.05905, §5). TorchRL's ``SACLoss`` docstring
(torchrl 0.14.1): "Default is "auto", where target entropy is computed as
:obj:`-prod(n_actions)`." The threads:

- pytorch/rl#3291 / #3292 (2026-01): "target_entropy='auto' ignores action space
  dimensionality, always returns -1" for a ``Bounded`` spec of shape [2]; "The original paper
  state that target_entropy should be -dim(A) with A the action space." Fixed by reading the
  action leaf's shape.
- pytorch/rl#3312 (2026-01): "Handle composite action distributions in SACLoss.target_entropy
  by summing numel of all leaf specs".
- pytorch/rl#1494 (2023-09): in multi-agent settings the shape of the action "included the
  number of agents, which should not be the case": each agent has its own action.

The spec, one continuous SAC loss per action space, its target entropy left to the loss:

- a plain box action of event shape (A,) or (2, 3): ``-prod(event shape)`` (-1, -2, -4, -6),
  with the spec given to the loss or to the actor;
- an agent group of N = 3 agents with actions of shape (2,): -2, not -6, with the spec given
  to the loss or to the actor;
- a composite action: one head of shape (4,) gives -4; two heads of shapes (2,) and (3,) give
  -5, whether the actor reports one log-probability per head or their sum.

Optional capability ``auto_target_entropy`` (``conformance.interface.SACAutoTargetEntropy``); the
oracle is ``conformance/oracles/sac_target_entropy.py`` (arithmetic on the event shapes).
"""

from __future__ import annotations

import pytest

from conformance import capabilities
from conformance._assertions import message
from conformance.interface import SACActionSpace
from conformance.oracles import sac_target_entropy as oracle

RL_3291 = "https://github.com/pytorch/rl/issues/3291"
RL_3312 = "https://github.com/pytorch/rl/pull/3312"
RL_1494 = "https://github.com/pytorch/rl/pull/1494"

#: test id -> the action space
SPACES = {
    "A=1": SACActionSpace({"action": (1,)}),
    "A=2": SACActionSpace({"action": (2,)}),
    "A=4": SACActionSpace({"action": (4,)}),
    "A=(2,3)": SACActionSpace({"action": (2, 3)}),
    "A=3-spec-on-actor": SACActionSpace({"action": (3,)}, given_to="actor"),
    "agents=3-A=2": SACActionSpace({"action": (2,)}, agents=3),
    "agents=3-A=2-spec-on-actor": SACActionSpace({"action": (2,)}, agents=3, given_to="actor"),
    "composite-one-head": SACActionSpace({"a1": (4,)}, composite=True),
    "composite-two-heads": SACActionSpace({"a1": (2,), "a2": (3,)}, composite=True),
    "composite-two-heads-spec-on-actor": SACActionSpace({"a1": (2,), "a2": (3,)},
                                                        composite=True, given_to="actor"),
    "composite-two-heads-summed-log-prob": SACActionSpace({"a1": (2,), "a2": (3,)},
                                                          composite=True, summed_log_prob=True),
}


@pytest.fixture
def auto_entropy(request, impl, sac_done_states):
    return capabilities.require(request, impl, "sac_done_states", sac_done_states,
                                "auto_target_entropy")


def _link(space: SACActionSpace) -> str:
    return RL_3312 if space.composite else RL_1494 if space.agents else RL_3291


@pytest.mark.parametrize("case", list(SPACES))
def test_the_automatic_target_entropy_is_minus_the_action_dimensions(auto_entropy, case):
    """The loss's automatic target entropy equals -dim(A): the event shapes' products, summed
    over the heads of a composite action, for one agent."""
    space = SPACES[case]
    params = {"heads": space.heads, "composite": space.composite, "agents": space.agents,
              "spec given to": space.given_to, "summed log-prob": space.summed_log_prob}
    want = oracle.auto_target_entropy(space.heads)
    try:
        got = auto_entropy.auto_target_entropy(action_space=space)
    except (AssertionError, NotImplementedError):
        raise
    except Exception as exc:  # noqa: BLE001 - a loss that cannot be built fails the spec
        raise AssertionError(message(
            f"the SAC loss with an automatic target entropy raised {type(exc).__name__}",
            params=params, expected=want, actual=str(exc).splitlines()[0][:300] if str(exc)
            else type(exc).__name__,
            cause="the loss cannot be built for a composite action of several heads (its "
                  "action key becomes the list of the heads' keys)" if space.composite
            else None, link=_link(space))) from None
    if float(got) != want:
        raise AssertionError(message(
            "automatic target entropy != -dim(A)", params=params, expected=want,
            actual=float(got), cause=oracle.diagnose(float(got), space.heads, space.agents),
            link=_link(space)))


#: no spec anywhere: the automatic rule cannot know the action's size
NOWHERE = {
    "A=2": SACActionSpace({"action": (2,)}, given_to="nowhere"),
    "agents=3-A=2": SACActionSpace({"action": (2,)}, agents=3, given_to="nowhere"),
}


@pytest.mark.parametrize("case", list(NOWHERE))
def test_without_an_action_spec_the_automatic_target_entropy_is_refused(auto_entropy, case):
    """With no action spec on the loss or the actor, ``"auto"`` has nothing to count: the loss
    refuses it with an error that names the target entropy, never returns a number (a made-up
    size) and never fails as a missing attribute (an AttributeError inside the property reaches
    the user as the loss "having no attribute target_entropy")."""
    space = NOWHERE[case]
    params = {"heads": space.heads, "agents": space.agents, "spec given to": space.given_to}
    want = "an error naming the target entropy"
    try:
        got = auto_entropy.auto_target_entropy(action_space=space)
    except (AssertionError, NotImplementedError):
        raise
    except AttributeError as exc:
        raise AssertionError(message(
            "no action spec: the refusal is an AttributeError", params=params, expected=want,
            actual=f"AttributeError: {str(exc).splitlines()[0][:300] if str(exc) else ''}",
            link=RL_3291)) from None
    except Exception as exc:  # noqa: BLE001 - the refusal, of whatever type it is
        text = str(exc).lower().replace("_", " ")
        if "target entropy" not in text:
            raise AssertionError(message(
                "no action spec: the refusal does not name the target entropy", params=params,
                expected=want, actual=f"{type(exc).__name__}: {str(exc)[:300]}",
                link=RL_3291)) from None
        return
    raise AssertionError(message("no action spec, yet an automatic target entropy was given",
                                 params=params, expected=want, actual=float(got), link=RL_3291))
