"""TorchRL's prioritized-sampler checkpoint format, read and written by the reference sampler.

``torchrl.data.PrioritizedSampler`` (0.14) checkpoints the *transformed* priorities
``q = (p + eps) ** alpha``: ``state_dict`` holds its C++ sum and min trees as objects
(``_sum_tree``, ``_min_tree``), and ``dumps`` writes one float64 value per slot to
``sumtree.memmap`` / ``mintree.memmap`` next to ``sampler_metadata.json``. Slots never written
hold the trees' neutral values (0 in the sum tree, the dtype's largest finite value in the min
tree). The reference keeps raw priorities; this module converts between the two, so that a
buffer can switch classes without losing its priorities:

- reading TorchRL's format, raw priorities are recovered as ``q ** (1 / alpha) - eps`` (the
  inversion TorchRL itself uses when ``alpha`` changes); at ``alpha == 0`` every stored ``q``
  is 1 and the raw priorities are lost, so every stored item gets the checkpoint's maximum
  priority (the initial priority 1.0 when it has none), silently as in TorchRL, whose trees
  lose them the same way (sampling is uniform at ``alpha == 0`` either way);
- writing, the reference adds TorchRL's entries next to its own, so TorchRL's
  ``load_state_dict``/``loads`` restore the same sampling law. Without the C++ extension no
  tree object can be built: the entries are left out, and TorchRL's ``load_state_dict`` then
  fails with ``KeyError: '_sum_tree'`` rather than loading empty trees.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

SUM_FILE, MIN_FILE = "sumtree.memmap", "mintree.memmap"
METADATA_FILE = "sampler_metadata.json"  # TorchRL's
RAW_FILE = "raw_priority.pt"  # the reference's own, beside TorchRL's files


def _tree_classes(dtype: torch.dtype):
    """TorchRL's (sum, min) CPU tree classes for ``dtype``, or None without the extension."""
    try:
        from torchrl._torchrl import (
            MinSegmentTreeFp32,
            MinSegmentTreeFp64,
            SumSegmentTreeFp32,
            SumSegmentTreeFp64,
        )
    except ImportError:
        return None
    if dtype == torch.float64:
        return SumSegmentTreeFp64, MinSegmentTreeFp64
    return SumSegmentTreeFp32, MinSegmentTreeFp32


def torchrl_trees(q: torch.Tensor, written: torch.Tensor, dtype: torch.dtype):
    """TorchRL C++ (sum, min) trees holding ``q`` at the ``written`` slots, or None when the
    extension is unavailable."""
    classes = _tree_classes(dtype)
    if classes is None:
        return None
    capacity = q.numel()
    sum_tree, min_tree = classes[0](capacity), classes[1](capacity)
    index = torch.nonzero(written.cpu()).reshape(-1)
    if index.numel():
        tree_dtype = torch.float64 if dtype == torch.float64 else torch.float32
        values = q.cpu()[index].to(tree_dtype)
        sum_tree[index] = values
        min_tree[index] = values
    return sum_tree, min_tree


def _raw_from_q(q: torch.Tensor, alpha: float, eps: float, max_priority) -> torch.Tensor:
    """Raw priorities (NaN for empty slots) from TorchRL's transformed ones (float64, 0 when
    empty)."""
    written = q > 0
    if alpha == 0:  # every stored q is 1: the raw priorities are lost (see the module's doc)
        raw = torch.full_like(q, 1.0 if max_priority is None else max_priority)
    else:
        raw = (q.pow(1.0 / alpha) - eps).clamp_min(0.0)
    return torch.where(written, raw, math.nan)


def max_value(max_priority) -> float | None:
    """The value of TorchRL's ``_max_priority`` entry, ``(value, index)``."""
    value = max_priority[0]
    return None if value is None else float(value)


def raw_from_torchrl_state(state: dict, capacity: int) -> dict:
    """A reference ``state_dict`` (raw priorities) from a TorchRL sampler's ``state_dict``."""
    sum_tree = state["_sum_tree"]
    if len(sum_tree) != capacity:
        raise RuntimeError(f"capacity of the TorchRL state ({len(sum_tree)}) differs from "
                           f"max_capacity ({capacity})")
    q = torch.as_tensor(sum_tree[torch.arange(capacity)], dtype=torch.float64)
    return _reference_state(state, q)


def _reference_state(state: dict, q: torch.Tensor, raw: torch.Tensor | None = None) -> dict:
    """``q`` (float64) is kept as TorchRL's trees hold it, not recomputed; the raw priorities
    are recovered from it unless given."""
    alpha, eps = float(state["_alpha"]), float(state["_eps"])
    m = max_value(state["_max_priority"])
    if raw is None:
        raw = _raw_from_q(q, alpha, eps, m)
    return {"_alpha": alpha, "_beta": float(state["_beta"]), "_eps": eps,
            "_max_priority": (m, None), "_raw_priority": raw, "_q": q}


def write_torchrl_files(path: Path, q: torch.Tensor, written: torch.Tensor,
                        dtype: torch.dtype) -> None:
    """TorchRL's ``sumtree.memmap``/``mintree.memmap``: float64, one value per slot."""
    tree_dtype = torch.float64 if dtype == torch.float64 else torch.float32
    big = torch.finfo(tree_dtype).max
    q = q.cpu().to(tree_dtype).to(torch.float64)  # the values TorchRL's trees would hold
    zeros, bigs = torch.zeros_like(q), torch.full_like(q, big)
    torch.where(written.cpu(), q, zeros).numpy().tofile(path / SUM_FILE)
    torch.where(written.cpu(), q, bigs).numpy().tofile(path / MIN_FILE)


def read_torchrl_files(path: Path, metadata: dict, raw: torch.Tensor | None = None) -> dict:
    """A reference ``state_dict`` from a directory written by TorchRL's ``dumps`` (or by the
    reference's, with its raw priorities given)."""
    file = path / SUM_FILE
    if not file.exists():
        raise FileNotFoundError(f"{path} holds no {SUM_FILE}: not a sampler checkpoint")
    q = torch.from_file(str(file), size=int(metadata["_max_capacity"]), dtype=torch.float64)
    return _reference_state(metadata, q, raw)
