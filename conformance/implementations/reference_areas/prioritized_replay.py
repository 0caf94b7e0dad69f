from conformance.implementations.torchrl_areas.prioritized_replay import (
    PrioritizedReplayArea,
    slice_sampler,
)


def make(adapter):
    from impls import PrioritizedSampler

    # pure torch trees (impls.segment_tree): they run wherever torch does
    area = PrioritizedReplayArea(PrioritizedSampler, default_is_raw=True,
                                 cuda_problem=lambda: None)
    # The reference has no slice sampler of its own: the pinned TorchRL's (0.14.1), which keeps
    # and restores its priorities (pytorch/rl#3990) and copies what it loads (#3966), serves
    # the §5 family specs. Its max-priority rule is upstream's, not impls.PrioritizedSampler's.
    area.slice_sampler_cls = slice_sampler()
    area.tree_factory = reference_trees()  # issue #31: impls.segment_tree as a user builds it
    # the drop-in buffer classes (impls/prioritized_buffers.py), as TorchRL's examples build them
    from impls import PrioritizedReplayBuffer, TensorDictPrioritizedReplayBuffer

    area.example_classes = {"PrioritizedReplayBuffer": PrioritizedReplayBuffer,
                            "TensorDictPrioritizedReplayBuffer": TensorDictPrioritizedReplayBuffer}
    return area


def reference_trees():
    from impls.segment_tree import SegmentTree

    # a sum tree as TorchRL's SumSegmentTreeFp32(size) is built: by its size alone
    return lambda size, reduce: SegmentTree(size) if reduce == "sum" else SegmentTree(size, reduce)
