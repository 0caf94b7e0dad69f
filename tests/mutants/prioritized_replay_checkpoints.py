"""Mutants for the §5 checkpoint specs (``conformance/test_prioritized_replay_checkpoints.py``).

The family mutant, TorchRL 0.14.1's sampler with one method put back as it was:

- ``LEGACY_MAX_TAKEN_RAW``: before pytorch/rl#4014, ``loads`` / ``load_state_dict`` of a
  version-less checkpoint (written by 0.13.0 - 0.13.2, whose in-buffer maximum was stored as
  ``(p + eps) ** alpha``) kept that value as the raw maximum: the recomputation from the trees
  is a no-op here.

The reference broken one line at a time, as a mutation tool does (``tests/mutants/source.py``):

- ``RAW_NOT_INVERTED`` (``impls/replay_checkpoint.py``): TorchRL's tree values are taken as
  raw priorities, not inverted (``q ** (1 / alpha) - eps``);
- ``EMPTY_MIN_SLOTS_ZERO``: ``mintree.memmap`` holds 0, not the neutral value, in empty slots;
- ``TREES_NOT_WRITTEN``: the TorchRL trees of ``state_dict`` are built but never filled;
- ``CAPACITY_NOT_CHECKED``: a TorchRL state of another capacity is read as far as it goes;
- ``NO_MAXIMUM_FILL_TWO``: the items of a TorchRL checkpoint at alpha 0 without a maximum get
  priority 2, not the initial 1;
- ``LOAD_KEEPS_OWN_EPS`` (``impls/prioritized_replay.py``): ``load_state_dict`` (which
  ``loads`` calls) keeps the loading buffer's eps;
- ``RAW_FILE_NOT_READ``: ``loads`` ignores ``raw_priority.pt`` and recovers the priorities
  from TorchRL's files (lost at alpha 0);
- ``HISTORICAL_NOT_RESTORED``: ``load_state_dict`` keeps the loading buffer's largest
  priority ever given (a buffer without in-buffer tracking).
- ``RAW_FILE_UNPICKLED``: ``loads`` unpickles ``raw_priority.pt`` with ``weights_only=False``
  (code in a tampered file runs).
"""

from __future__ import annotations

from torchrl.data import PrioritizedSampler

from conformance.implementations.torchrl_areas.prioritized_replay import PrioritizedReplayArea
from tests.mutants import implementation
from tests.mutants.source import mutated_module

EXAMPLE_CLASSES = ("PrioritizedReplayBuffer", "TensorDictPrioritizedReplayBuffer")


class LegacyMaxTakenRaw(PrioritizedSampler):
    """pytorch/rl#4014 undone: a version-less checkpoint's maximum is kept as it was stored."""

    def _recompute_max_priority_from_tree(self) -> None:
        return


CHECKPOINT_MUTANTS = {
    "RAW_NOT_INVERTED": ("        raw = (q.pow(1.0 / alpha) - eps).clamp_min(0.0)\n",
                         "        raw = q.clamp_min(0.0)\n"),
    "EMPTY_MIN_SLOTS_ZERO": ("zeros, bigs = torch.zeros_like(q), torch.full_like(q, big)",
                             "zeros, bigs = torch.zeros_like(q), torch.zeros_like(q)"),
    "TREES_NOT_WRITTEN": ("        sum_tree[index] = values\n        min_tree[index] = values\n",
                          "        pass\n"),
    "CAPACITY_NOT_CHECKED": ("    if len(sum_tree) != capacity:\n", "    if False:\n"),
    "NO_MAXIMUM_FILL_TWO": ("torch.full_like(q, 1.0 if max_priority is None",
                            "torch.full_like(q, 2.0 if max_priority is None"),
}
SAMPLER_MUTANTS = {
    "LOAD_KEEPS_OWN_EPS": ('        self._eps = float(state_dict["_eps"])\n', ""),
    "RAW_FILE_NOT_READ": ("        raw = torch.load(raw_file, weights_only=True) if raw_file.exists() else None\n",
                          "        raw = None\n"),
    "HISTORICAL_NOT_RESTORED": (
        "        self._historical = torch.full_like(self._historical, -math.inf if m is None else m)\n",
        ""),
    "RAW_FILE_UNPICKLED": ("torch.load(raw_file, weights_only=True)",
                           "torch.load(raw_file, weights_only=False)"),
}


def _impl(name: str, sampler_cls, example_classes=None):
    area = PrioritizedReplayArea(sampler_cls, default_is_raw=True, cuda_problem=lambda: None)
    area.example_classes = example_classes
    return implementation(name.lower().replace("_", "-"), prioritized_replay=area)


def _reference(name: str):
    if name in CHECKPOINT_MUTANTS:
        converter = mutated_module("impls.replay_checkpoint", *CHECKPOINT_MUTANTS[name], tag=name)
        sampler = mutated_module("impls.prioritized_replay", tag=name, checkpoint=converter)
    else:
        sampler = mutated_module("impls.prioritized_replay", *SAMPLER_MUTANTS.get(name, ("", "")),
                                 tag=name)
    # the drop-in buffer classes holding this very sampler (the example-buffer checkpoints)
    buffers = mutated_module("impls.prioritized_buffers", tag=name,
                             PrioritizedSampler=sampler.PrioritizedSampler)
    return _impl(name, sampler.PrioritizedSampler,
                 {n: getattr(buffers, n) for n in EXAMPLE_CLASSES})


LEGACY_MAX_TAKEN_RAW = _impl("LEGACY_MAX_TAKEN_RAW", LegacyMaxTakenRaw)  # no example classes
RAW_NOT_INVERTED = _reference("RAW_NOT_INVERTED")
EMPTY_MIN_SLOTS_ZERO = _reference("EMPTY_MIN_SLOTS_ZERO")
TREES_NOT_WRITTEN = _reference("TREES_NOT_WRITTEN")
LOAD_KEEPS_OWN_EPS = _reference("LOAD_KEEPS_OWN_EPS")
CAPACITY_NOT_CHECKED = _reference("CAPACITY_NOT_CHECKED")
NO_MAXIMUM_FILL_TWO = _reference("NO_MAXIMUM_FILL_TWO")
RAW_FILE_NOT_READ = _reference("RAW_FILE_NOT_READ")
HISTORICAL_NOT_RESTORED = _reference("HISTORICAL_NOT_RESTORED")
RAW_FILE_UNPICKLED = _reference("RAW_FILE_UNPICKLED")
UNMUTATED = _reference("UNMUTATED")
