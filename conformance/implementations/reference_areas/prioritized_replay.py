from conformance.implementations.torchrl_areas.prioritized_replay import PrioritizedReplayArea


def make(adapter):
    from impls import PrioritizedSampler

    return PrioritizedReplayArea(PrioritizedSampler, default_is_raw=True)
