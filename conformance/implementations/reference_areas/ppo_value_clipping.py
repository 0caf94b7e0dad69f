from conformance.implementations.torchrl_areas.ppo_value_clipping import ClipPPOCritic


def make(adapter):
    from impls import ClipPPOLoss

    return ClipPPOCritic(ClipPPOLoss)
