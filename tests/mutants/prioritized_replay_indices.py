"""The reference sampler broken one line at a time in how ``update_priority`` / ``mark_update``
read their indices and priorities (issue #31: what a mutation tool left alive while every spec
passed one flat long tensor of distinct indices):

- ``MINUS_ONE_KEPT``: -1 entries (``TensorDictMaxValueWriter``'s) are not skipped;
- ``SLOT_ZERO_DROPPED``: skipping the -1 entries also drops slot 0;
- ``STALE_SCRATCH``: the repeat detection reads what an earlier call left in its scratch, so a
  slot named twice after a -1 loses its update;
- ``LONG_BATCH_CUT``: a batch longer than the buffer is deduplicated with positions cut at the
  capacity;
- ``INDEX_DTYPE_KEPT``: an int32 index is not converted to long;
- ``COORDINATES_COLUMN_MAJOR``: ``(row, col)`` coordinates are flattened column-major;
- ``PRIORITY_LENGTH_UNCHECKED``: priorities of another length than the index reach the tree;
- ``COORDINATES_WITHOUT_STORAGE``: coordinates without ``storage=`` fail on ``None.shape``;
- ``DEFAULT_NOT_SEEN``: without in-buffer tracking the default given to new items does not
  count as given;
- ``GIVEN_NOT_SEEN``: without in-buffer tracking a priority given by ``update_priority`` does
  not count as given;
- ``REPLACED_NOT_GIVEN``: without in-buffer tracking a priority that a later entry of the same
  call replaces does not count as given (the reference before issue #31);
- ``REPEATS_OF_MARK_UPDATE``: ``mark_update`` of a repeated slot (an extend that wraps the ring)
  fails on the missing priority;
- ``INDEX_CLAMPED``: an index past the capacity is clamped to the last slot instead of refused
  (it overwrites that slot's priority, as TorchRL's unchecked trees overwrite another slot's).
"""

from __future__ import annotations

from tests.mutants.prioritized_replay_edges import reference_with_sampler

MUTANTS = {
    "MINUS_ONE_KEPT": ("        if bool((index < 0).any()):\n", "        if False:\n"),
    "SLOT_ZERO_DROPPED": ("            keep = index >= 0\n", "            keep = index > 0\n"),
    "STALE_SCRATCH": ('position, "amax", include_self=False)', 'position, "amax", include_self=True)'),
    "LONG_BATCH_CUT": ("            position = torch.arange(n, device=index.device)\n",
                       "            position = self._positions[:n]\n"),
    "INDEX_DTYPE_KEPT": ("        index = torch.as_tensor(index, dtype=torch.long, device=self.device)\n",
                         "        index = torch.as_tensor(index, device=self.device)\n"),
    "COORDINATES_COLUMN_MAJOR": ("            flat = flat * size + column\n",
                                 "            flat = flat + column * size\n"),
    "PRIORITY_LENGTH_UNCHECKED": (
        "            if priority.numel() > 1 and priority.shape != index.shape:\n",
        "            if priority.numel() > 1 and priority.ndim != 1:\n"),
    "COORDINATES_WITHOUT_STORAGE": ("        if storage is None:\n            raise RuntimeError(",
                                    "        if False:\n            raise RuntimeError("),
    "DEFAULT_NOT_SEEN": ("            self._seen(default)\n", "            pass\n"),
    "GIVEN_NOT_SEEN": ("self._seen(given.max())", "pass"),
    "REPLACED_NOT_GIVEN": ("self._seen(given.max())", "self._seen(priority.max())"),
    "REPEATS_OF_MARK_UPDATE": (
        "            if priority is not None and priority.ndim:\n"
        "                priority, q = priority[last], q[last]\n",
        "            if priority.ndim:\n                priority, q = priority[last], q[last]\n"),
    "INDEX_CLAMPED": ("self._unique(index, priority.detach(), with_q=True)",
                      "self._unique(index.clamp(max=self._max_capacity - 1), priority.detach(), "
                      "with_q=True)"),
}

globals().update({name: reference_with_sampler(name, old, new)
                  for name, (old, new) in MUTANTS.items()})
UNMUTATED = reference_with_sampler("UNMUTATED", "", "")
