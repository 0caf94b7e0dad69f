"""Libraries with one bug added, plugged in with ``--impl tests.libraries.mutants:NAME``."""

from __future__ import annotations

from types import SimpleNamespace


def _cpprb_fallback():
    import numpy as np
    from cpprb import PrioritizedReplayBuffer

    from conformance.implementations.cpprb_areas.prioritized_replay import PrioritizedReplayArea

    class FallbackBuffer(PrioritizedReplayBuffer):
        """Every new item gets priority 1.0 instead of cpprb's running maximum."""

        def add(self, **kwargs):
            n = len(np.atleast_1d(kwargs["id"]))
            return super().add(priorities=np.ones(n, np.float32), **kwargs)

    return PrioritizedReplayArea(FallbackBuffer)


class _Lazy(SimpleNamespace):
    def __init__(self, name, **factories):
        super().__init__(name=name, version="mutant")
        self._factories = factories

    def __getattr__(self, area):
        factories = self.__dict__.get("_factories", {})
        if area in factories:
            value = factories[area]()
            setattr(self, area, value)
            return value
        raise AttributeError(area)


CPPRB_FALLBACK = _Lazy("CPPRB_FALLBACK", prioritized_replay=_cpprb_fallback)


# --------------------------------------------------------------------------- §3 SAC: truncation
# Each library with one bug added where truncated transitions enter its loss: they are treated
# as terminal (no bootstrap), the bug the truncated-transition spec names.


def _sb3_no_timeout_handling():
    import functools

    from stable_baselines3 import SAC

    from conformance.implementations.sb3_areas.rows import quiet_logger
    from conformance.implementations.sb3_areas.sac_done_states import SB3SAC, sac_env

    # a real SB3 option: without it the buffer keeps done for time-limit truncations
    sac = functools.partial(SAC, replay_buffer_kwargs={"handle_timeout_termination": False})
    return SB3SAC(sac, sac_env, quiet_logger)


def _skrl_truncation_as_termination():
    import types

    from skrl.agents.torch.sac import SAC, SAC_CFG
    from skrl.memories.torch import RandomMemory
    from skrl.models.torch import DeterministicMixin, Model

    from conformance.implementations.skrl_areas.sac_done_states import SkrlSAC

    class TerminatingSAC(SAC):
        def record_transition(self, *, terminated, truncated, **kwargs):
            super().record_transition(terminated=terminated | truncated, truncated=truncated,
                                      **kwargs)

    return SkrlSAC(types.SimpleNamespace(SAC=TerminatingSAC, SAC_CFG=SAC_CFG,
                                         RandomMemory=RandomMemory,
                                         DeterministicMixin=DeterministicMixin, Model=Model))


def _tianshou_truncation_as_termination():
    from tianshou.data import ReplayBuffer

    from conformance.implementations.tianshou import IMPLEMENTATION

    class TerminatingBuffer(ReplayBuffer):
        def add(self, batch, buffer_ids=None):
            batch.terminated = bool(batch.terminated) or bool(batch.truncated)
            batch.truncated = False
            return super().add(batch, buffer_ids)

    area = IMPLEMENTATION.sac_done_states
    mutant = type(area)(SimpleNamespace(**{**vars(area.ts), "ReplayBuffer": TerminatingBuffer}))
    return mutant


SB3_NO_TIMEOUT_HANDLING = _Lazy("SB3_NO_TIMEOUT_HANDLING",
                                sac_done_states=_sb3_no_timeout_handling)
SKRL_TRUNCATION_AS_TERMINATION = _Lazy("SKRL_TRUNCATION_AS_TERMINATION",
                                       sac_done_states=_skrl_truncation_as_termination)
TIANSHOU_TRUNCATION_AS_TERMINATION = _Lazy("TIANSHOU_TRUNCATION_AS_TERMINATION",
                                           sac_done_states=_tianshou_truncation_as_termination)


# ----------------------------------------------------------- §2 composite: averaged heads
# The joint log-prob averaged over the heads instead of summed.


def _sb3_mean_of_heads():
    from stable_baselines3 import PPO
    from stable_baselines3.common.distributions import MultiCategoricalDistribution

    from conformance.implementations.sb3_areas.composite_log_prob import SB3MultiCategorical
    from conformance.implementations.sb3_areas.rows import quiet_logger, rows_env

    class MeanOfHeads(MultiCategoricalDistribution):
        def log_prob(self, actions):
            return super().log_prob(actions) / len(self.action_dims)

    return SB3MultiCategorical(MeanOfHeads, PPO, rows_env, quiet_logger)


def _skrl_mean_of_heads():
    import types

    from skrl.models.torch import Model, MultiCategoricalMixin

    from conformance.implementations.skrl_areas.composite_log_prob import SkrlMultiCategorical

    class MeanReduction(MultiCategoricalMixin):
        # skrl's own reduction="mean" where the adapter asks for its default "sum"
        def __init__(self, *, reduction="sum", **kwargs):
            super().__init__(reduction="mean" if reduction == "sum" else reduction, **kwargs)

    return SkrlMultiCategorical(types.SimpleNamespace(Model=Model,
                                                      MultiCategoricalMixin=MeanReduction))


SB3_MEAN_OF_HEADS = _Lazy("SB3_MEAN_OF_HEADS", composite_log_prob=_sb3_mean_of_heads)
SKRL_MEAN_OF_HEADS = _Lazy("SKRL_MEAN_OF_HEADS", composite_log_prob=_skrl_mean_of_heads)
