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

CLASSIFIED = Path(__file__).with_name("classified") / "tanh_normal_mode.json"
BITWISE, ROUNDING, FLOAT32_SOLVE = "bitwise", "rounding", "float32-solve"
DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
BOUNDS = {"numbers": (-3.0, 7.0), "tensors": ([-0.3, 0.1, -2.5], [0.7, 2.9, 2.5]),
          "tensor-low": ([-2.0, 0.0, -1.0], 3.0)}


def _parameters() -> tuple[np.ndarray, np.ndarray]:
    """(mu, sigma), 1-D float64, seeded: wide, extreme, cusp, ties."""
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
    parts = (wide, extreme, huge, cusp, ties)
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
            for batch in (1, 8, 16, 17, 256):
                if bounds != "numbers" and batch % 3:
                    continue  # per-dimension bounds: batches of rows of 3
                limit = len(m) if batch in (16, 256) else 64 * batch
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
    if how == FLOAT32_SOLVE and ref.dtype == torch.float32:
        return 1e-4 * r
    return torch.finfo(ref.dtype).eps * ref.double().abs().clamp_min(1.0)


def _radius(low, high, shape) -> torch.Tensor:
    lo, hi = torch.as_tensor(low, dtype=torch.float64), torch.as_tensor(high, dtype=torch.float64)
    return ((hi - lo) / 2).expand(shape)


#: (function, removed lines, added lines, what equivalent means for it, why): filled in below
PROBES: list[tuple[str, list[str], list[str], str, str]] = []


def _id(probe) -> str:
    function, removed, added, how, _ = probe
    return key(function, removed, added).split(":", 1)[1]


@pytest.mark.parametrize("probe", PROBES, ids=[_id(p) for p in PROBES])
def test_equivalent(probe, request):
    function, removed, added, how, why = probe
    entry = json.loads(CLASSIFIED.read_text()).get(key(function, removed, added))
    probe_id = f"tests/mutants/{Path(__file__).name}::{request.node.name}"
    assert entry == {"class": "equivalent", "probe": probe_id, "why": why}, entry
    mutant = modes(edited_module(function, removed, added, tag="probe"))
    worst = 0.0
    for (label, _, _, low, high), ref, got in zip(CALLS(), reference_modes(), mutant,
                                                   strict=True):
        assert got.dtype == ref.dtype and got.shape == ref.shape, (label, got.dtype, got.shape)
        if how == FLOAT32_SOLVE and ref.dtype == torch.float64:
            allowed = torch.zeros_like(ref)
        else:
            allowed = _allowed(ref, how, _radius(low, high, ref.shape))
        diff = (got.double() - ref.double()).abs()
        bad = ~(diff <= allowed) & ~(got.isnan() & ref.isnan())
        assert not bad.any(), (f"{FILE}:{function}: {removed} -> {added}: {label}: "
                               f"{int(bad.sum())} elements differ, max {diff[bad].max():.3g}")
        if how == BITWISE:
            assert torch.equal(got.isnan(), ref.isnan())
        worst = max(worst, float(diff.nan_to_num(0.0).max()) if diff.numel() else 0.0)
    print(f"{how}: max |difference| {worst:.3g}")
