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
