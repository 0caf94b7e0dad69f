"""asv benchmarks of §1 TanhNormal mode: the time of the mode and its error against scipy.

Inputs follow research/matrix.md probe 1: loc = 1.5 N(0, 1), scale = U(0.05, 2.0), shape [n, 1],
seeded. The mode is ``get_mode()`` where the distribution has it (TorchRL 0.5+ and the reference),
else ``mode``. ``TanhBaseline.time_tanh`` is one ``torch.tanh`` over the same batch, the unit
the issue measures the reference against.

Run as a script for the closing-note evidence (errors and time ratios, measured in one run)::

    python -m benchmarks.bench_tanh_normal_mode [--n 10000] [--repeats 30]
"""

from __future__ import annotations

from benchmarks.common import DEVICES, IMPLEMENTATIONS, SEED, require, synchronize

SIZES = [100, 1_000, 10_000, 100_000]
DTYPES = ["float32", "float64"]


def _inputs(n, device, dtype_name):
    import torch

    gen = torch.Generator().manual_seed(SEED)
    loc = 1.5 * torch.randn(n, 1, generator=gen, dtype=torch.float64)
    scale = 0.05 + 1.95 * torch.rand(n, 1, generator=gen, dtype=torch.float64)
    dtype = getattr(torch, dtype_name)
    return loc.to(device=device, dtype=dtype), scale.to(device=device, dtype=dtype)


def _distribution(implementation, loc, scale):
    if implementation == "reference":
        from impls import TanhNormal
    else:
        from torchrl.modules import TanhNormal
    return TanhNormal(loc, scale, low=-1.0, high=1.0)


def _mode(dist):
    get_mode = getattr(dist, "get_mode", None)
    return get_mode() if callable(get_mode) else dist.mode


class TanhNormalMode:
    params = [IMPLEMENTATIONS, DEVICES, SIZES, DTYPES]
    param_names = ["implementation", "device", "size", "dtype"]
    timeout = 600

    def setup(self, implementation, device, size, dtype):
        self.device = require(implementation, device)
        loc, scale = _inputs(size, self.device, dtype)
        self.dist = _distribution(implementation, loc, scale)

    def time_mode(self, implementation, device, size, dtype):
        _mode(self.dist)
        synchronize(self.device)


class TanhNormalModeAccuracy:
    """Largest |mode - scipy mode| over 2,000 seeded parameter sets (scipy: a few seconds)."""

    params = [IMPLEMENTATIONS, DEVICES, DTYPES]
    param_names = ["implementation", "device", "dtype"]
    unit = "abs error in y"
    timeout = 600

    def setup(self, implementation, device, dtype):
        self.device = require(implementation, device)
        self.loc, self.scale = _inputs(2_000, self.device, dtype)
        self.dist = _distribution(implementation, self.loc, self.scale)

    def track_max_error(self, implementation, device, dtype):
        return max_error(_mode(self.dist), self.loc, self.scale)


class TanhBaseline:
    """One torch.tanh over the same batch: the unit of the issue's "at most 30x" target."""

    params = [DEVICES, SIZES, DTYPES]
    param_names = ["device", "size", "dtype"]

    def setup(self, device, size, dtype):
        self.device = require("reference", device)
        self.loc, _ = _inputs(size, self.device, dtype)

    def time_tanh(self, device, size, dtype):
        import torch

        torch.tanh(self.loc)
        synchronize(self.device)


def max_error(mode, loc, scale, low=-1.0, high=1.0) -> float:
    """max |mode - scipy's mode|, a tie (loc = 0, scale^2 > 1/2) accepting either maximum."""
    import numpy as np

    from conformance.oracles import tanh_normal_mode as oracle

    as64 = lambda t: t.detach().cpu().double().numpy()  # noqa: E731
    exp = oracle.modes(as64(loc), as64(scale), low, high)
    got = as64(mode)
    err = np.abs(got - exp.y)
    tie = (exp.n_maxima == 2) & (exp.g - exp.g_other <= 1e-10)
    err = np.where(tie, np.minimum(err, np.abs(got - exp.y_other)), err)
    return float(err.max())


def _evidence(n: int, repeats: int) -> dict:
    """Errors against scipy and time ratios over one seeded batch, measured in one run.

    Times are the minimum over ``repeats`` alternating calls (reference, torch.tanh) on one
    thread, and over a few calls for TorchRL's get_mode() (~0.25 s each); the minimum is the
    least disturbed by other processes on a shared machine.
    """
    import time

    import torch

    torch.set_num_threads(1)
    out = {"n": n, "torch": torch.__version__}
    try:
        import torchrl

        out["torchrl"] = torchrl.__version__
    except Exception as exc:  # noqa: BLE001
        out["torchrl"] = f"not importable: {exc}"
    device = torch.device("cpu")
    for dtype in DTYPES:
        loc, scale = _inputs(n, device, dtype)
        ref = _distribution("reference", loc, scale)
        out[f"reference_max_error_{dtype}"] = max_error(ref.get_mode(), loc, scale)
        if "not importable" not in out["torchrl"]:
            upstream = _distribution("torchrl", loc, scale)
            torch.manual_seed(0)
            out[f"torchrl_get_mode_max_error_{dtype}"] = max_error(upstream.get_mode(), loc, scale)

    def best_of(fn, count):
        best = float("inf")
        for _ in range(count):
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
        return best

    for dtype in DTYPES:
        loc, scale = _inputs(n, device, dtype)
        ref = _distribution("reference", loc, scale)
        t_ref, t_tanh = float("inf"), float("inf")
        for _ in range(repeats):
            t_ref = min(t_ref, best_of(ref.get_mode, 5))
            t_tanh = min(t_tanh, best_of(lambda loc=loc: torch.tanh(loc), 5))
        out[f"time_reference_{dtype}_s"] = t_ref
        out[f"time_torch_tanh_{dtype}_s"] = t_tanh
        out[f"ratio_reference_over_tanh_{dtype}"] = t_ref / t_tanh
        if "not importable" not in out["torchrl"]:
            upstream = _distribution("torchrl", loc, scale)
            torch.manual_seed(0)
            t_up = best_of(upstream.get_mode, 5)
            out[f"time_torchrl_get_mode_{dtype}_s"] = t_up
            out[f"ratio_torchrl_get_mode_over_reference_{dtype}"] = t_up / t_ref
    return out


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    print(json.dumps(_evidence(args.n, args.repeats), indent=2))
