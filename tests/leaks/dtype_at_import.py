"""An implementation whose import makes float64 the default dtype (issue #22, item 3): beside
TorchRL it used to make 20 TorchRL rows fail, and the known-failure entries counted them."""

from __future__ import annotations

import torch

from tests.leaks.state import Leaky

torch.set_default_dtype(torch.float64)

IMPL = Leaky("dtype-at-import", lambda: None)
