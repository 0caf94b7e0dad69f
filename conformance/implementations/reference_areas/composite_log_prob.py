from conformance.implementations.torchrl_areas.composite_log_prob import TensorDictComposite


def make(adapter):
    from torchrl.objectives import ClipPPOLoss

    from impls import CompositeDistribution, ProbabilisticActor

    return TensorDictComposite(CompositeDistribution, ProbabilisticActor, ClipPPOLoss)
