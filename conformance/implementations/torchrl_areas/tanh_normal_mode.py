"""TanhNormal mode through TorchRL's ``TanhNormal`` API (also used for the reference drop-in).

Switches by release (read from the class, not the version string):
- bounds are ``low``/``high`` from 0.5.0 on and ``min``/``max`` before (0.6.0/0.6.1 still accept
  ``**kwargs`` but silently ignore ``min``/``max``, so the name must be the one the signature has);
- the mode is the ``mode`` property where it answers (0.4.0, 0.5.0: it is what ProbabilisticActor
  returns under ExplorationType.MODE, tanh(loc), the users' report) and ``get_mode()`` where the
  property raises ("has not analytical mode", 0.6.0 on).
"""

from __future__ import annotations

import torch

from conformance.implementations.introspect import first_accepted, quiet


class TanhNormalAPI:
    devices = ("cpu", "cuda")  # conformance.interface: the distribution follows loc's device

    def __init__(self, dist_cls):
        self.dist_cls = dist_cls
        # renamed min/max -> low/high across releases
        low = first_accepted(dist_cls, "low", "min")
        self.bound_names = ("low", "high") if low == "low" else ("min", "max")

    def make(self, loc: torch.Tensor, scale: torch.Tensor, *, low: float | torch.Tensor = -1.0,
             high: float | torch.Tensor = 1.0, upscale: float = 5.0, tanh_loc: bool = False):
        lo_name, hi_name = self.bound_names
        kwargs = {lo_name: low, hi_name: high, "upscale": upscale, "tanh_loc": tanh_loc}
        with quiet():
            return self.dist_cls(loc, scale, **kwargs)

    def make_with_scale_fn(self, loc: torch.Tensor, scale_fn, *, low: float = -1.0,
                           high: float = 1.0):
        """The callable handed over as the scale: TorchRL calls it on ``loc`` from 0.11 on
        (pytorch/rl#3296); before, the constructor refuses it (``torch.as_tensor`` or
        ``Normal``'s argument check)."""
        lo_name, hi_name = self.bound_names
        with quiet():
            return self.dist_cls(loc, scale_fn, **{lo_name: low, hi_name: high})

    def mode(self, dist) -> torch.Tensor:
        with quiet():
            try:
                return dist.mode
            except RuntimeError:
                if not callable(getattr(dist, "get_mode", None)):
                    raise
                return dist.get_mode()

    def sample_and_score(self, dist, *, seed: int):
        """What SACLoss trains on: ``rsample_and_log_prob`` (torchrl.modules.distributions.utils,
        pytorch/rl#4080) where the release has it, else ``rsample()`` then ``log_prob()``, the
        actor path of SACLoss before it."""
        try:
            from torchrl.modules.distributions.utils import rsample_and_log_prob
        except ImportError:
            rsample_and_log_prob = None
        torch.manual_seed(seed)
        with quiet():
            if rsample_and_log_prob is not None:
                return rsample_and_log_prob(dist)
            action = dist.rsample()
            return action, dist.log_prob(action)


def make(adapter):
    from torchrl.modules import TanhNormal

    return TanhNormalAPI(TanhNormal)
