"""The reference broken one line at a time (as a mutation tool breaks it, ``tests/mutants/
source.py``), seen through the §5 option specs (``conformance/test_prioritized_replay_options.py``):

``impls/prioritized_buffers.py``
- ``STORAGE_IGNORED``: ``PrioritizedReplayBuffer`` sizes its sampler as if no ``storage=`` were
  given (1000 slots under a storage of 3000);
- ``DEFAULT_STORAGE_1001``: without ``storage=`` the sampler gets 1001 slots, not 1000;
- ``DTYPE_NOT_PASSED``: ``PrioritizedReplayBuffer`` does not hand ``dtype`` to its sampler;
- ``SYNC_IGNORED``: the sampler is swapped in as if ``sync`` were on: with ``sync=False`` the
  reference's sits unused beside the ``RandomSampler``, TorchRL's does the work;
- ``REDUCTION_NOT_PASSED``: ``TensorDictPrioritizedReplayBuffer`` does not hand ``reduction``
  to its sampler (the default ``"max"`` reduces every ``td_error``);

``impls/segment_tree.py``
- ``FLOAT32_TREE``: the tree's levels are built in the default dtype (float32), not float64;
- ``BOUNDARY_LOWER_BOUND_TOP`` / ``BOUNDARY_LOWER_BOUND_BELOW``: the search of the top level /
  of the levels below it takes the first child whose prefix sum reaches the mass (TorchRL's
  lower bound), not the first that exceeds it: a mass of 0 finds a leading leaf of weight 0;

``impls/replay_checkpoint.py``
- ``STATE_TREES_FLOAT32``: ``state_dict`` holds float32 TorchRL trees for a float64 sampler;
- ``FILES_ROUNDED_FOR_FLOAT64``: the dumped files of a float64 sampler are rounded to float32
  (the dtype test inverted);
- ``FILES_NOT_ROUNDED``: the dumped files of a float32 sampler hold float64 values.
"""

from __future__ import annotations

from tests.mutants import implementation
from tests.mutants.source import mutated_module

EXAMPLE_CLASSES = ("PrioritizedReplayBuffer", "TensorDictPrioritizedReplayBuffer")

BUFFER_MUTANTS = {
    "STORAGE_IGNORED": ('            storage = kwargs.get("storage")\n',
                        "            storage = None\n"),
    "DEFAULT_STORAGE_1001": ("capacity = 1_000 if storage is None",
                             "capacity = 1001 if storage is None"),
    "DTYPE_NOT_PASSED": ("PrioritizedSampler(capacity, alpha, beta, eps, dtype, device=",
                         "PrioritizedSampler(capacity, alpha, beta, eps, device="),
    "SYNC_IGNORED": ('    synced = getattr(buffer, "_sync", True)\n', "    synced = True\n"),
    "REDUCTION_NOT_PASSED": ("alpha, beta, eps, reduction=reduction, device=",
                             "alpha, beta, eps, device="),
}
TREE_MUTANTS = {
    "FLOAT32_TREE": ("for op in ops], dtype=dtype).unsqueeze(1)",
                     "for op in ops], dtype=None).unsqueeze(1)"),
    "BOUNDARY_LOWER_BOUND_TOP": (
        "k = torch.searchsorted(inclusive, mass, right=True).clamp_max_(len(top) - 1)",
        "k = torch.searchsorted(inclusive, mass, right=False).clamp_max_(len(top) - 1)"),
    "BOUNDARY_LOWER_BOUND_BELOW": (
        "k = torch.searchsorted(inclusive, mass, right=True).clamp_max_(b - 1)",
        "k = torch.searchsorted(inclusive, mass, right=False).clamp_max_(b - 1)"),
}
CHECKPOINT_MUTANTS = {
    "STATE_TREES_FLOAT32": ("    classes = _tree_classes(dtype)\n",
                            "    classes = _tree_classes(None)\n"),
    "FILES_ROUNDED_FOR_FLOAT64": (
        "    tree_dtype = torch.float64 if dtype == torch.float64 else torch.float32\n    big",
        "    tree_dtype = torch.float64 if dtype != torch.float64 else torch.float32\n    big"),
    "FILES_NOT_ROUNDED": ("q = q.cpu().to(tree_dtype).to(torch.float64)",
                          "q = q.cpu().to(None).to(torch.float64)"),
}
MUTANTS = {**BUFFER_MUTANTS, **TREE_MUTANTS, **CHECKPOINT_MUTANTS}


def reference(name: str):
    """The reference's replay area with one edit in one of its modules (none: ``UNMUTATED``),
    every module above it rebuilt on the mutated one."""
    from conformance.implementations.torchrl_areas.prioritized_replay import (
        PrioritizedReplayArea,
    )

    def edit(group):
        return group.get(name, ("", ""))

    tree = mutated_module("impls.segment_tree", *edit(TREE_MUTANTS), tag=name)
    converter = mutated_module("impls.replay_checkpoint", *edit(CHECKPOINT_MUTANTS), tag=name)
    sampler = mutated_module("impls.prioritized_replay", tag=name, SegmentTree=tree.SegmentTree,
                             _Channel=tree._Channel, checkpoint=converter)
    buffers = mutated_module("impls.prioritized_buffers", *edit(BUFFER_MUTANTS), tag=name,
                             PrioritizedSampler=sampler.PrioritizedSampler)
    area = PrioritizedReplayArea(sampler.PrioritizedSampler, default_is_raw=True,
                                 cuda_problem=lambda: None)
    area.example_classes = {n: getattr(buffers, n) for n in EXAMPLE_CLASSES}
    area.tree_factory = (lambda size, reduce: tree.SegmentTree(size) if reduce == "sum"
                         else tree.SegmentTree(size, reduce))
    return implementation(name.lower().replace("_", "-"), prioritized_replay=area)


STORAGE_IGNORED = reference("STORAGE_IGNORED")
DEFAULT_STORAGE_1001 = reference("DEFAULT_STORAGE_1001")
DTYPE_NOT_PASSED = reference("DTYPE_NOT_PASSED")
SYNC_IGNORED = reference("SYNC_IGNORED")
REDUCTION_NOT_PASSED = reference("REDUCTION_NOT_PASSED")
FLOAT32_TREE = reference("FLOAT32_TREE")
BOUNDARY_LOWER_BOUND_TOP = reference("BOUNDARY_LOWER_BOUND_TOP")
BOUNDARY_LOWER_BOUND_BELOW = reference("BOUNDARY_LOWER_BOUND_BELOW")
STATE_TREES_FLOAT32 = reference("STATE_TREES_FLOAT32")
FILES_ROUNDED_FOR_FLOAT64 = reference("FILES_ROUNDED_FOR_FLOAT64")
FILES_NOT_ROUNDED = reference("FILES_NOT_ROUNDED")
#: the same construction without an edit: the harness alone passes
UNMUTATED = reference("UNMUTATED")
