from conformance.implementations.torchrl_areas.prioritized_replay import (
    PrioritizedReplayArea,
    slice_sampler,
)


def make(adapter):
    from impls.fused_tree import FusedPrioritizedSampler, FusedSegmentTree

    # the eager reference's sampler and trees, their walks in the C kernel on the CPU (the
    # eager code on other devices)
    area = PrioritizedReplayArea(
        FusedPrioritizedSampler, default_is_raw=True, cuda_problem=lambda: None
    )
    area.slice_sampler_cls = slice_sampler()  # as the reference: TorchRL's own
    area.tree_factory = lambda size, reduce: (
        FusedSegmentTree(size) if reduce == "sum" else FusedSegmentTree(size, reduce)
    )
    from impls.fused_tree import PrioritizedReplayBuffer, TensorDictPrioritizedReplayBuffer

    area.example_classes = {
        "PrioritizedReplayBuffer": PrioritizedReplayBuffer,
        "TensorDictPrioritizedReplayBuffer": TensorDictPrioritizedReplayBuffer,
    }
    return area
