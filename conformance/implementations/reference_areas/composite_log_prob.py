from conformance.implementations.torchrl_areas.composite_log_prob import TensorDictComposite


def make(adapter):
    from impls import ClipPPOLoss, CompositeDistribution, ProbabilisticActor

    return TensorDictComposite(CompositeDistribution, ProbabilisticActor, ClipPPOLoss)
