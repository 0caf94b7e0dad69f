"""Implementations that fall short of the interface itself (not of a spec's numbers)."""

from __future__ import annotations

from tests.mutants import implementation
from tests.mutants.ppo_value_clipping import ClippedOnly


class _NoCriticLoss:
    critic_scale = 2.0


class _WrongKeyword(ClippedOnly):
    def critic_loss(self, *, value_net, observation, old_value, returns, clip_value,
                    clip_eps, critic_coeff):  # clip_eps: the interface says clip_epsilon
        raise AssertionError("never called: the interface check stops the specs first")


MISSING_METHOD = implementation("missing-method", ppo_value_clipping=_NoCriticLoss())
WRONG_KEYWORD = implementation("wrong-keyword", ppo_value_clipping=_WrongKeyword())
NO_AREA = implementation("no-area", ppo_value_cliping=ClippedOnly())  # misspelt area
NO_NAME = type("NoName", (), {"version": "1", "ppo_value_clipping": ClippedOnly()})()
