"""Probes of the TanhNormal mutants that ``tests/mutants/classified/tanh_normal_mode.json``
classifies as *equivalent*: each applies that very edit (``tanh_normal_edits``; the probe checks
that its key is the classification's) and runs the edited reference's ``TanhNormal.get_mode()``
over seeded inputs that cover every path of ``impls/tanh_normal_mode.py`` a CPU caller reaches:

- parameters: a wide random batch, extremes (|loc| up to 50 and the largest finite values,
  scales from 1e-3 to 16), the cusp neighbourhood (dense: where the start of the solve matters),
  ties (loc = 0 and -0.0);
- batches of 1, 8, 16 (the small-batch float path) and 17, 256 (the batched solve);
- float64, float32, float16, bfloat16;
- bounds as numbers (held by TanhNormal as 0-d tensors), per-dimension tensors, and a tensor
  low with a number high; scale broadcast over loc.

What "equivalent" means is one of three, per mutant:

- ``BITWISE``: every output bitwise identical to the unedited reference's (buffers reused or not,
  a conversion that copies anyway, a branch that computes the same values);
- ``ROUNDING``: the same solve reached another way (the small-batch path instead of the batched
  one, one Newton step more, another start that converges to the same root): at most 1e-12 r
  apart in float64 and one ulp of the output dtype otherwise, where the specs' tolerance is
  1e-9 r (float64) and 1e-4 r (float32): only speed differs;
- ``FLOAT32_SOLVE``: float64 bitwise identical; float32 parameters solved in float32 arithmetic
  instead of float64, within the specs' float32 tolerance (1e-4 r), which admits a float32 solve
  by design (measured: at most 5e-5 next to the cusp, where the root is nearly triple).
"""

from __future__ import annotations

import functools
import importlib
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.mutants.tanh_normal_edits import FILE, edited_module, key

pytestmark = pytest.mark.slow  # about 30 s on an idle core, more under load

CLASSIFIED = Path(__file__).with_name("classified") / "tanh_normal_mode.json"
BITWISE, ROUNDING, FLOAT32_SOLVE = "bitwise", "rounding", "float32-solve"
#: conformance/test_tanh_normal_mode.py's TOL_Y for the dtypes below float64
SPEC_TOL = {torch.float32: 1e-4, torch.float16: 4 * 2.0**-11, torch.bfloat16: 4 * 2.0**-8}
DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
BOUNDS = {"numbers": (-3.0, 7.0), "tensors": ([-0.3, 0.1, -2.5], [0.7, 2.9, 2.5]),
          "tensor-low": ([-2.0, 0.0, -1.0], 3.0)}


def _parameters() -> tuple[np.ndarray, np.ndarray]:
    """(mu, sigma), 1-D float64, seeded: ties, huge, wide, extreme, cusp (in that order: the
    small batches take the first few hundred)."""
    rng = np.random.default_rng(2031)
    wide = 1.5 * rng.standard_normal(300), rng.uniform(0.05, 2.0, 300)
    extreme = (rng.uniform(-50, 50, 200), 10 ** rng.uniform(-3, 1.2, 200))
    big = float(np.finfo(np.float32).max)
    huge = (np.array([1e305, -1e305, big, -big, 1e120, -1e120]), np.array([0.01, 1.0] * 3))
    n = 1500
    cusp_mu = np.concatenate([10 ** rng.uniform(-9, -3.5, n), 10 ** rng.uniform(-3.5, -2, n)])
    cusp_eps = np.concatenate([rng.normal(0, 3e-4, n), rng.uniform(-0.03, 0.03, n)])
    cusp = cusp_mu * rng.choice([-1.0, 1.0], 2 * n), np.sqrt(0.5 * (1 + cusp_eps))
    ties = np.array([0.0, -0.0, 0.0, -0.0]), np.array([0.5, 0.7, 1.0, 2.0])
    parts = (ties, huge, wide, extreme, cusp)
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))


def _calls():
    """(label, loc, scale, low, high): every call the probe makes, in a fixed order."""
    mu, sigma = _parameters()
    out = []
    for dtype in DTYPES:
        finite = np.abs(mu) <= float(torch.finfo(dtype).max)
        m, s = torch.tensor(mu[finite]).to(dtype), torch.tensor(sigma[finite]).to(dtype)
        for bounds, (low, high) in BOUNDS.items():
            if bounds != "numbers":
                low = torch.tensor(low, dtype=torch.float32)
                high = torch.tensor(high, dtype=torch.float32) if isinstance(high, list) else high
            # per-dimension bounds: batches of rows of 3; small batches: the first 12, but
            # batches of 16 cover everything (the cusp included) where the float path takes them
            for batch in (1, 8, 16, 17, 256) if bounds == "numbers" else (15, 18, 255):
                whole = batch > 200 or (batch == 16 and dtype in (torch.float64, torch.float32))
                limit = len(m) if whole else 12 * batch
                for start in range(0, min(len(m), limit) - batch + 1, batch):
                    loc, scale = m[start:start + batch], s[start:start + batch]
                    if bounds != "numbers":
                        loc, scale = loc.reshape(-1, 3), scale.reshape(-1, 3)
                    out.append((f"{dtype}-{bounds}-batch={batch}", loc, scale, low, high))
        # a scale broadcast over loc (state-independent scale), small and batched
        for rows in (4, 40):
            out.append((f"{dtype}-broadcast-{rows}x3", m[:3 * rows].reshape(rows, 3), s[:3], -1.0,
                        1.0))
        out.append((f"{dtype}-broadcast-3x(4x3)", m[:3], s[:12].reshape(4, 3), -1.0, 1.0))
    return out


def modes(module) -> list[torch.Tensor]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [module.TanhNormal(loc, scale, low=low, high=high).get_mode()
                for _, loc, scale, low, high in CALLS()]


CALLS = functools.cache(_calls)


@functools.cache
def reference_modes() -> list[torch.Tensor]:
    return modes(importlib.import_module("impls.tanh_normal_mode"))


def _allowed(ref: torch.Tensor, how: str, r: torch.Tensor) -> torch.Tensor:
    """Largest |difference| admitted per element."""
    if how == BITWISE:
        return torch.zeros_like(ref, dtype=torch.float64)
    if ref.dtype == torch.float64:
        return 1e-12 * r
    if how == FLOAT32_SOLVE:  # the specs' tolerance for the dtype (TOL_Y)
        return SPEC_TOL[ref.dtype] * r
    return torch.finfo(ref.dtype).eps * ref.double().abs().clamp_min(1.0)


def _radius(low, high, shape) -> torch.Tensor:
    lo, hi = torch.as_tensor(low, dtype=torch.float64), torch.as_tensor(high, dtype=torch.float64)
    return ((hi - lo) / 2).expand(shape)


#: (function, removed lines, added lines, what equivalent means for it, why): the survivors
#: of the full mutation run (reports/mutation.json) that these probes show equivalent
PROBES: list[tuple[str, list[str], list[str], str, str]] = [
    ('_Newton.residual', ['em = torch.mul(self.x, -2.0, out=self.neg_t).expm1_()'], ['em = torch.mul(self.x, -2.0, out=None).expm1_()'], BITWISE, 'a fresh tensor instead of a reused buffer: the same values'),
    ('_Newton.residual', ['em = torch.mul(self.x, -2.0, out=self.neg_t).expm1_()'], ['em = torch.mul(self.x, -2.0, ).expm1_()'], BITWISE, 'a fresh tensor instead of a reused buffer: the same values'),
    ('_Newton.residual', ['torch.div(em, torch.add(em, 2.0, out=self.u), out=self.neg_t)'], ['torch.div(em, torch.add(em, 2.0, out=None), out=self.neg_t)'], BITWISE, 'a fresh tensor instead of a reused buffer: the same values'),
    ('_Newton.residual', ['torch.div(em, torch.add(em, 2.0, out=self.u), out=self.neg_t)'], ['torch.div(em, torch.add(em, 2.0, ), out=self.neg_t)'], BITWISE, 'a fresh tensor instead of a reused buffer: the same values'),
    ('_Newton.tanh_after_last_step', ['sech2 = torch.mul(self.neg_t, self.neg_t, out=self.u).neg_().add_(1.0)'], ['sech2 = torch.mul(self.neg_t, self.neg_t, out=None).neg_().add_(1.0)'], BITWISE, 'a fresh tensor instead of a reused buffer: the same values'),
    ('_Newton.tanh_after_last_step', ['sech2 = torch.mul(self.neg_t, self.neg_t, out=self.u).neg_().add_(1.0)'], ['sech2 = torch.mul(self.neg_t, self.neg_t, ).neg_().add_(1.0)'], BITWISE, 'a fresh tensor instead of a reused buffer: the same values'),
    ('_cubic_model_guess', ['k = torch.reciprocal(s).mul_(1.5)'], ['k = torch.reciprocal(s).mul_(2.5)'], ROUNDING, 'another start of the solve (the rough guess in float64 or scaled): the fixed Newton steps reach the same root'),
    ('_cubic_model_guess', ['return torch.maximum(root, torch.minimum(q_over_p, cbrt, out=cbrt), out=root)'], ['return torch.maximum(root, torch.minimum(q_over_p, cbrt, out=cbrt), out=None)'], BITWISE, 'a fresh tensor instead of a reused buffer, or a conversion to float32 that copies anyway: the same values'),
    ('_cubic_model_guess', ['return torch.maximum(root, torch.minimum(q_over_p, cbrt, out=cbrt), out=root)'], ['return torch.maximum(root, torch.minimum(q_over_p, cbrt, out=cbrt), )'], BITWISE, 'a fresh tensor instead of a reused buffer, or a conversion to float32 that copies anyway: the same values'),
    ('_cubic_model_guess', ['return torch.maximum(root, torch.minimum(q_over_p, cbrt, out=cbrt), out=root)'], ['return torch.maximum(root, torch.minimum(q_over_p, cbrt, out=None), out=root)'], BITWISE, 'a fresh tensor instead of a reused buffer, or a conversion to float32 that copies anyway: the same values'),
    ('_cubic_model_guess', ['return torch.maximum(root, torch.minimum(q_over_p, cbrt, out=cbrt), out=root)'], ['return torch.maximum(root, torch.minimum(q_over_p, cbrt, ), out=root)'], BITWISE, 'a fresh tensor instead of a reused buffer, or a conversion to float32 that copies anyway: the same values'),
    ('_tanh_of_root', ['for _ in range(NEWTON_STEPS - 1):'], ['for _ in range(NEWTON_STEPS + 1):'], ROUNDING, 'one Newton step more than needed: only slower'),
    ('tanh_normal_mode', ['if (loc.device.type == "cpu" and scale.device.type == "cpu" and loc.numel() <= SMALL_BATCH'], ['if (loc.device.type != "cpu" and scale.device.type == "cpu" and loc.numel() <= SMALL_BATCH'], ROUNDING, 'another choice between the small-batch float path and the batched solve (same formulas): only speed differs'),
    ('tanh_normal_mode', ['if (loc.device.type == "cpu" and scale.device.type == "cpu" and loc.numel() <= SMALL_BATCH'], ['if (loc.device.type == "XXcpuXX" and scale.device.type == "cpu" and loc.numel() <= SMALL_BATCH'], ROUNDING, 'another choice between the small-batch float path and the batched solve (same formulas): only speed differs'),
    ('tanh_normal_mode', ['if (loc.device.type == "cpu" and scale.device.type == "cpu" and loc.numel() <= SMALL_BATCH'], ['if (loc.device.type == "CPU" and scale.device.type == "cpu" and loc.numel() <= SMALL_BATCH'], ROUNDING, 'another choice between the small-batch float path and the batched solve (same formulas): only speed differs'),
    ('tanh_normal_mode', ['if (loc.device.type == "cpu" and scale.device.type == "cpu" and loc.numel() <= SMALL_BATCH'], ['if (loc.device.type == "cpu" and scale.device.type != "cpu" and loc.numel() <= SMALL_BATCH'], ROUNDING, 'another choice between the small-batch float path and the batched solve (same formulas): only speed differs'),
    ('tanh_normal_mode', ['if (loc.device.type == "cpu" and scale.device.type == "cpu" and loc.numel() <= SMALL_BATCH'], ['if (loc.device.type == "cpu" and scale.device.type == "XXcpuXX" and loc.numel() <= SMALL_BATCH'], ROUNDING, 'another choice between the small-batch float path and the batched solve (same formulas): only speed differs'),
    ('tanh_normal_mode', ['if (loc.device.type == "cpu" and scale.device.type == "cpu" and loc.numel() <= SMALL_BATCH'], ['if (loc.device.type == "cpu" and scale.device.type == "CPU" and loc.numel() <= SMALL_BATCH'], ROUNDING, 'another choice between the small-batch float path and the batched solve (same formulas): only speed differs'),
    ('tanh_normal_mode', ['if (loc.device.type == "cpu" and scale.device.type == "cpu" and loc.numel() <= SMALL_BATCH'], ['if (loc.device.type == "cpu" and scale.device.type == "cpu" and loc.numel() < SMALL_BATCH'], ROUNDING, 'another choice between the small-batch float path and the batched solve (same formulas): only speed differs'),
    ('tanh_normal_mode', ['and scale.numel() <= SMALL_BATCH and _is_cpu_scalar(low) and _is_cpu_scalar(high)):'], ['and scale.numel() < SMALL_BATCH and _is_cpu_scalar(low) and _is_cpu_scalar(high)):'], ROUNDING, 'another choice between the small-batch float path and the batched solve (same formulas): only speed differs'),
    ('tanh_normal_mode', ['and scale.numel() <= SMALL_BATCH and _is_cpu_scalar(low) and _is_cpu_scalar(high)):'], ['and scale.numel() <= SMALL_BATCH and _is_cpu_scalar(None) and _is_cpu_scalar(high)):'], ROUNDING, 'another choice between the small-batch float path and the batched solve (same formulas): only speed differs'),
    ('tanh_normal_mode', ['and scale.numel() <= SMALL_BATCH and _is_cpu_scalar(low) and _is_cpu_scalar(high)):'], ['and scale.numel() <= SMALL_BATCH and _is_cpu_scalar(low) and _is_cpu_scalar(None)):'], ROUNDING, 'another choice between the small-batch float path and the batched solve (same formulas): only speed differs'),
    ('tanh_normal_mode', ['small = _small_batch_mode(loc, scale, float(low), float(high), out_dtype)'], ['small = None'], ROUNDING, 'another choice between the small-batch float path and the batched solve (same formulas): only speed differs'),
    ('tanh_normal_mode', ['small = _small_batch_mode(loc, scale, float(low), float(high), out_dtype)'], ['small = _small_batch_mode(loc, scale, float(low), float(high), None)'], ROUNDING, 'another choice between the small-batch float path and the batched solve (same formulas): only speed differs'),
    ('_small_batch_mode', ['if dtype not in (torch.float32, torch.float64) or not high > low:'], ['if dtype not in (torch.float32, torch.float64) or high > low:'], ROUNDING, "another choice between the small-batch float path and the batched solve (same formulas), at limits TorchRL's parameters never reach or within them: only speed differs"),
    ('_small_batch_mode', ['if dtype not in (torch.float32, torch.float64) or not high > low:'], ['if dtype not in (torch.float32, torch.float64) or not high >= low:'], BITWISE, "differs only where high == low, which TorchRL's TanhNormal refuses"),
    ('_small_batch_mode', ['if not (_SMALL_MIN_S <= s <= _SMALL_MAX_M and m <= _SMALL_MAX_M):  # NaN fails too'], ['if not (_SMALL_MIN_S < s <= _SMALL_MAX_M and m <= _SMALL_MAX_M):  # NaN fails too'], ROUNDING, "another choice between the small-batch float path and the batched solve (same formulas), at limits TorchRL's parameters never reach or within them: only speed differs"),
    ('_small_batch_mode', ['if not (_SMALL_MIN_S <= s <= _SMALL_MAX_M and m <= _SMALL_MAX_M):  # NaN fails too'], ['if not (_SMALL_MIN_S <= s < _SMALL_MAX_M and m <= _SMALL_MAX_M):  # NaN fails too'], ROUNDING, "another choice between the small-batch float path and the batched solve (same formulas), at limits TorchRL's parameters never reach or within them: only speed differs"),
    ('_small_batch_mode', ['if not (_SMALL_MIN_S <= s <= _SMALL_MAX_M and m <= _SMALL_MAX_M):  # NaN fails too'], ['if not (_SMALL_MIN_S <= s <= _SMALL_MAX_M and m < _SMALL_MAX_M):  # NaN fails too'], ROUNDING, "another choice between the small-batch float path and the batched solve (same formulas), at limits TorchRL's parameters never reach or within them: only speed differs"),
    ('_tanh_of_root_float', ['k = (1.0 / s) * 1.5'], ['k = (2.0 / s) * 1.5'], ROUNDING, 'another start, or one Newton step more: the same root; only speed differs'),
    ('_tanh_of_root_float', ['k = (1.0 / s) * 1.5'], ['k = (1.0 / s) * 2.5'], ROUNDING, 'another start, or one Newton step more: the same root; only speed differs'),
    ('_tanh_of_root_float', ['for _ in range(NEWTON_STEPS - 1):'], ['for _ in range(NEWTON_STEPS + 1):'], ROUNDING, 'another start, or one Newton step more: the same root; only speed differs'),
    ('_tanh_of_root_float', ['return -(neg_t + (1.0 - neg_t * neg_t) * (h / dh))  # not clamped: see tanh_after_last_step'], ['return +(neg_t + (1.0 - neg_t * neg_t) * (h / dh))  # not clamped: see tanh_after_last_step'], BITWISE, 'the sign of t is discarded: the caller takes copysign(t, mu)'),
    ('_affine_inside', ['if _is_cpu_scalar(low) and _is_cpu_scalar(high):'], ['if _is_cpu_scalar(None) and _is_cpu_scalar(high):'], ROUNDING, 'numbers as bounds take the tensor branch (same formula): only speed differs'),
    ('_affine_inside', ['if _is_cpu_scalar(low) and _is_cpu_scalar(high):'], ['if _is_cpu_scalar(low) and _is_cpu_scalar(None):'], ROUNDING, 'numbers as bounds take the tensor branch (same formula): only speed differs'),
    ('_affine_inside', ['lo_w, hi_w = lo.to(t.dtype), hi.to(t.dtype)'], ['lo_w, hi_w = lo.to(t.dtype), hi.to(None)'], BITWISE, 'the float32 bound is promoted to float64 in the sum anyway (widening is exact)'),
    ('_is_cpu_scalar', ['return value.numel() == 1 and value.device.type == "cpu"'], ['return value.numel() == 1 and value.device.type != "cpu"'], ROUNDING, 'CPU 0-d bounds take the tensor branch and the batched solve (a CUDA 0-d bound would take float()): only speed differs'),
    ('_is_cpu_scalar', ['return value.numel() == 1 and value.device.type == "cpu"'], ['return value.numel() == 1 and value.device.type == "XXcpuXX"'], ROUNDING, 'CPU 0-d bounds take the tensor branch and the batched solve (a CUDA 0-d bound would take float()): only speed differs'),
    ('_is_cpu_scalar', ['return value.numel() == 1 and value.device.type == "cpu"'], ['return value.numel() == 1 and value.device.type == "CPU"'], ROUNDING, 'CPU 0-d bounds take the tensor branch and the batched solve (a CUDA 0-d bound would take float()): only speed differs'),
    ('_cubic_model_guess', ['root = p.to(torch.float32, copy=True).neg_().clamp_min_(0.0).sqrt_().to(m.dtype)'], ['root = p.to(None, copy=True).neg_().clamp_min_(0.0).sqrt_().to(m.dtype)'], ROUNDING, 'another start of the solve (the rough guess in float64 or scaled): the fixed Newton steps reach the same root'),
    ('_cubic_model_guess', ['root = p.to(torch.float32, copy=True).neg_().clamp_min_(0.0).sqrt_().to(m.dtype)'], ['root = p.to(copy=True).neg_().clamp_min_(0.0).sqrt_().to(m.dtype)'], ROUNDING, 'another start of the solve (the rough guess in float64 or scaled): the fixed Newton steps reach the same root'),
    ('_cubic_model_guess', ['root = p.to(torch.float32, copy=True).neg_().clamp_min_(0.0).sqrt_().to(m.dtype)'], ['root = p.to(torch.float32, ).neg_().clamp_min_(0.0).sqrt_().to(m.dtype)'], BITWISE, 'a fresh tensor instead of a reused buffer, or a conversion to float32 that copies anyway: the same values'),
    ('_cubic_model_guess', ['root = p.to(torch.float32, copy=True).neg_().clamp_min_(0.0).sqrt_().to(m.dtype)'], ['root = p.to(torch.float32, copy=False).neg_().clamp_min_(0.0).sqrt_().to(m.dtype)'], BITWISE, 'a fresh tensor instead of a reused buffer, or a conversion to float32 that copies anyway: the same values'),
    ('_cubic_model_guess', ['cbrt = q.to(torch.float32, copy=True).log2_().mul_(1.0 / 3.0).exp2_().to(m.dtype)'], ['cbrt = q.to(torch.float32, copy=True).log2_().mul_(1.0 / 3.0).exp2_().to(None)'], ROUNDING, 'another start of the solve (the rough guess in float64 or scaled): the fixed Newton steps reach the same root'),
    ('_cubic_model_guess', ['cbrt = q.to(torch.float32, copy=True).log2_().mul_(1.0 / 3.0).exp2_().to(m.dtype)'], ['cbrt = q.to(None, copy=True).log2_().mul_(1.0 / 3.0).exp2_().to(m.dtype)'], ROUNDING, 'another start of the solve (the rough guess in float64 or scaled): the fixed Newton steps reach the same root'),
    ('_cubic_model_guess', ['cbrt = q.to(torch.float32, copy=True).log2_().mul_(1.0 / 3.0).exp2_().to(m.dtype)'], ['cbrt = q.to(copy=True).log2_().mul_(1.0 / 3.0).exp2_().to(m.dtype)'], ROUNDING, 'another start of the solve (the rough guess in float64 or scaled): the fixed Newton steps reach the same root'),
    ('_cubic_model_guess', ['cbrt = q.to(torch.float32, copy=True).log2_().mul_(1.0 / 3.0).exp2_().to(m.dtype)'], ['cbrt = q.to(torch.float32, ).log2_().mul_(1.0 / 3.0).exp2_().to(m.dtype)'], BITWISE, 'a fresh tensor instead of a reused buffer, or a conversion to float32 that copies anyway: the same values'),
    ('_cubic_model_guess', ['cbrt = q.to(torch.float32, copy=True).log2_().mul_(1.0 / 3.0).exp2_().to(m.dtype)'], ['cbrt = q.to(torch.float32, copy=False).log2_().mul_(1.0 / 3.0).exp2_().to(m.dtype)'], BITWISE, 'a fresh tensor instead of a reused buffer, or a conversion to float32 that copies anyway: the same values'),
    ('_tanh_of_root', ['newton.x.abs_().nan_to_num_(nan=math.inf, posinf=math.inf)'], ['newton.x.abs_().nan_to_num_(nan=math.inf, posinf=None)'], BITWISE, '+inf after the first step kept or replaced by the largest float: the minimum with m + 2 s takes the same start wherever m + 2 s is finite, and both reach the same answer where it is not (checked also for infinite loc and scales up to inf)'),
    ('_tanh_of_root', ['newton.x.abs_().nan_to_num_(nan=math.inf, posinf=math.inf)'], ['newton.x.abs_().nan_to_num_(nan=math.inf, )'], BITWISE, '+inf after the first step kept or replaced by the largest float: the minimum with m + 2 s takes the same start wherever m + 2 s is finite, and both reach the same answer where it is not (checked also for infinite loc and scales up to inf)'),
    ('TanhNormal.__init__', ['if _deferrable(loc, scale, low, high, tanh_loc):'], ['if _deferrable(None, scale, low, high, tanh_loc):'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('TanhNormal.__init__', ['if _deferrable(loc, scale, low, high, tanh_loc):'], ['if _deferrable(loc, None, low, high, tanh_loc):'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('TanhNormal.__init__', ['if _deferrable(loc, scale, low, high, tanh_loc):'], ['if _deferrable(loc, scale, None, high, tanh_loc):'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('TanhNormal.__init__', ['if _deferrable(loc, scale, low, high, tanh_loc):'], ['if _deferrable(loc, scale, low, None, tanh_loc):'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('TanhNormal.get_mode', ['deferred = self.__dict__.get("_deferred")'], ['deferred = None'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('TanhNormal.get_mode', ['deferred = self.__dict__.get("_deferred")'], ['deferred = self.__dict__.get(None)'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('TanhNormal.get_mode', ['deferred = self.__dict__.get("_deferred")'], ['deferred = self.__dict__.get("XX_deferredXX")'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('TanhNormal.get_mode', ['deferred = self.__dict__.get("_deferred")'], ['deferred = self.__dict__.get("_DEFERRED")'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('_deferrable', ['and loc.device.type == "cpu" and scale.device.type == "cpu" and not tanh_loc'], ['and loc.device.type != "cpu" and scale.device.type == "cpu" and not tanh_loc'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('_deferrable', ['and loc.device.type == "cpu" and scale.device.type == "cpu" and not tanh_loc'], ['and loc.device.type == "XXcpuXX" and scale.device.type == "cpu" and not tanh_loc'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('_deferrable', ['and loc.device.type == "cpu" and scale.device.type == "cpu" and not tanh_loc'], ['and loc.device.type == "CPU" and scale.device.type == "cpu" and not tanh_loc'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('_deferrable', ['and loc.device.type == "cpu" and scale.device.type == "cpu" and not tanh_loc'], ['and loc.device.type == "cpu" and scale.device.type != "cpu" and not tanh_loc'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('_deferrable', ['and loc.device.type == "cpu" and scale.device.type == "cpu" and not tanh_loc'], ['and loc.device.type == "cpu" and scale.device.type == "XXcpuXX" and not tanh_loc'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('_deferrable', ['and loc.device.type == "cpu" and scale.device.type == "cpu" and not tanh_loc'], ['and loc.device.type == "cpu" and scale.device.type == "CPU" and not tanh_loc'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('_deferrable', ['and type(low) in (int, float) and type(high) in (int, float) and high > low'], ['and type(None) in (int, float) and type(high) in (int, float) and high > low'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('_deferrable', ['and type(low) in (int, float) and type(high) in (int, float) and high > low'], ['and type(low) in (int, float) and type(None) in (int, float) and high > low'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('_deferrable', ['and type(low) in (int, float) and type(high) in (int, float) and high > low'], ['and type(low) in (int, float) and type(high) not in (int, float) and high > low'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('_deferrable', ['and not torch.compiler.is_compiling())'], ['and torch.compiler.is_compiling())'], BITWISE, 'construction deferred or not: the mode is the same bit for bit (the deferred one reads number bounds as TorchRL holds them, float32 0-d tensors); only speed differs'),
    ('TanhNormal.__getattr__', ['on_class = any(name in klass.__dict__ for klass in type(self).__mro__)'], ['on_class = None'], BITWISE, "a property's own AttributeError retried once on a built distribution instead of raised: with this module's (working) properties the same values; only broken code would tell (tests/references/test_impl_tanh_normal_mode.py::test_an_error_inside_mode_is_not_retried_on_a_built_distribution)"),
    ('TanhNormal.__getattr__', ['on_class = any(name in klass.__dict__ for klass in type(self).__mro__)'], ['on_class = any(name in klass.__dict__ for klass in type(None).__mro__)'], BITWISE, "a property's own AttributeError retried once on a built distribution instead of raised: with this module's (working) properties the same values; only broken code would tell (tests/references/test_impl_tanh_normal_mode.py::test_an_error_inside_mode_is_not_retried_on_a_built_distribution)"),
    ('TanhNormal.__getattr__', ['kwargs = None if on_class else self.__dict__.pop("_deferred", None)'], ['kwargs = None if (on_class) and False else self.__dict__.pop("_deferred", None)'], BITWISE, "a property's own AttributeError retried once on a built distribution instead of raised: with this module's (working) properties the same values; only broken code would tell (tests/references/test_impl_tanh_normal_mode.py::test_an_error_inside_mode_is_not_retried_on_a_built_distribution)"),
]


def _id(probe) -> str:
    function, removed, added, how, _ = probe
    return key(function, removed, added).split(":", 1)[1]


def first_difference(function, removed, added, how) -> str | None:
    """The first call where the edited reference's mode differs from the unedited one by more
    than ``how`` admits (a message naming it), or None."""
    mutant = modes(edited_module(function, removed, added, tag="probe"))
    for (label, _, _, low, high), ref, got in zip(CALLS(), reference_modes(), mutant,
                                                   strict=True):
        if got.dtype != ref.dtype or got.shape != ref.shape:
            return f"{label}: dtype {got.dtype}, shape {tuple(got.shape)}"
        if how == FLOAT32_SOLVE and ref.dtype == torch.float64:
            allowed = torch.zeros_like(ref, dtype=torch.float64)
        else:
            allowed = _allowed(ref, how, _radius(low, high, ref.shape))
        diff = (got.double() - ref.double()).abs()
        bad = ~(diff <= allowed) & ~(got.isnan() & ref.isnan())
        if how == BITWISE:
            bad |= got.isnan() != ref.isnan()
        if bad.any():
            return (f"{label}: {int(bad.sum())} elements differ, max "
                    f"{diff[bad].nan_to_num(float('inf')).max():.3g}")
    return None


@pytest.mark.parametrize("probe", PROBES, ids=[_id(p) for p in PROBES])
def test_equivalent(probe, request):
    function, removed, added, how, why = probe
    entry = json.loads(CLASSIFIED.read_text()).get(key(function, removed, added))
    probe_id = f"tests/mutants/{Path(__file__).name}::{request.node.name}"
    assert entry == {"class": "equivalent", "probe": probe_id, "why": why}, entry
    found = first_difference(function, removed, added, how)
    assert found is None, f"{FILE}:{function}: {removed} -> {added}: {found}"


#: edits that are not equivalent, one per kind of probe: each must be told apart (a probe that
#: could not fail would prove nothing)
NOT_EQUIVALENT = [
    ("_cubic_model_guess",
     ["cbrt = q.to(torch.float32, copy=True).log2_().mul_(1.0 / 3.0).exp2_().to(m.dtype)"],
     ["cbrt = q.to(torch.float32, copy=True).log2_().mul_(1.0 / 4.0).exp2_().to(m.dtype)"], ROUNDING),
    ("_tanh_of_root", ["for _ in range(NEWTON_STEPS - 1):"],
     ["for _ in range(NEWTON_STEPS - 2):"], ROUNDING),
    ("_Newton.residual", ["torch.sub(self.x, self.m, out=self.h).add_(self.u)"],
     ["torch.sub(self.x, self.m, out=self.h).add_(self.u).mul_(1.0000001)"], BITWISE),
    ("tanh_normal_mode", ["work = _working_dtype(loc.device)"], ["work = None"], FLOAT32_SOLVE),
]


@pytest.mark.parametrize("edit", NOT_EQUIVALENT, ids=lambda e: f"{e[0]}-{e[3]}")
def test_the_probe_tells_a_non_equivalent_edit(edit):
    assert first_difference(*edit) is not None, edit
