"""Shared pieces of the asv benchmarks (numpy/scipy conventions: params, setup that skips).

Every benchmark class is parametrised by ``implementation`` (reference / torchrl), ``device``
(cpu / cuda) and a size; ``setup`` raises ``NotImplementedError`` (asv shows "n/a") for an
implementation that does not load here or a device that is absent. Inputs are seeded.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

# With `asv run --python=same` the project is not installed and asv does not pass PYTHONPATH on:
# fall back on the checkout (appended, so an installed build of the project wins).
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.append(_ROOT)

IMPLEMENTATIONS = ["reference", "torchrl"]
DEVICES = ["cpu", "cuda"]
SEED = 20261122


def require(implementation: str, device: str):
    """Skip (asv: n/a) what cannot run here; return the torch device."""
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise NotImplementedError("no CUDA device")
    if implementation == "torchrl":
        try:
            importlib.import_module("torchrl")
        except Exception as exc:  # noqa: BLE001
            raise NotImplementedError(f"torchrl does not import: {exc}") from None
    torch.manual_seed(SEED)
    return torch.device(device)


def synchronize(device) -> None:
    import torch

    if getattr(device, "type", device) == "cuda":
        torch.cuda.synchronize()
