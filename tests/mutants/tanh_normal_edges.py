"""The reference TanhNormal with one line edited the way mutmut edits it (issue #31): the
survivors of the full mutation run that the specs written from them now catch. Each names the
spec of conformance/test_tanh_normal_mode.py that must fail (``test_mutants_tanh_normal_edges``).

- ``BATCH_START_FOURTH_ROOT``: the batched solve's cubic-model start takes q^(1/4), not q^(1/3):
  off by up to 4e-5 within 1e-3 of sigma^2 = 1/2, |mu| < 2e-4 (the cusp spec has 8 elements, so
  only the small-batch path was asked there);
- ``FLOAT_START_FOURTH_ROOT``: the same in the small-batch float path (16 elements);
- ``FLOAT_LAST_STEP_SIGN``: the float path's last step in tanh space takes 1 + t^2 for
  1 - t^2 (2.7e-8 off near the cusp);
- ``HUGE_LOC_NAN``: the first step's NaN kept into ``torch.minimum`` (no ``nan_to_num``: what
  ``torch.minimum`` alone did before these specs, when ``fmin`` replaced it): NaN for |loc| whose
  3 |loc| / (2 sigma^2) overflows;
- ``FLOAT_PATH_HUGE``: the small-batch float path takes exactly the inputs it must leave to the
  batched solve (|loc| > 1e100 overflows its cubic model: NaN), seen when all are that large;
- ``BOUNDS_CENTRE``: the tensor-bounds branch computes the centre as (high + low) * 1.5;
- ``BOUNDS_NO_UPPER_CLAMP``: the tensor-bounds branch no longer keeps the mode below high;
- ``SCALE_BROADCAST``: the small-batch path takes loc's shape for the broadcast shape;
- ``HALF_SMALL_PATH``: float16/bfloat16 small batches take the float path, whose float64
  answer rounds onto the bound.
"""

from __future__ import annotations

from tests.mutants import implementation
from tests.mutants.tanh_normal_edits import edited_module

#: name -> (function, removed line, added line, the spec it must fail, the ids that must fail)
MUTANTS = {
    "BATCH_START_FOURTH_ROOT": (
        "_cubic_model_guess",
        "cbrt = q.to(torch.float32, copy=True).log2_().mul_(1.0 / 3.0).exp2_().to(m.dtype)",
        "cbrt = q.to(torch.float32, copy=True).log2_().mul_(1.0 / 4.0).exp2_().to(m.dtype)",
        "test_near_the_cusp_seeded", {"batch=128-float64"}),
    "FLOAT_START_FOURTH_ROOT": (
        "_tanh_of_root_float",
        "x = max(root, min(q / max(p, _TINY64), q ** (1.0 / 3.0)))",
        "x = max(root, min(q / max(p, _TINY64), q ** (1.0 / 4.0)))",
        "test_near_the_cusp_seeded", {"batch=16-float64"}),
    "FLOAT_LAST_STEP_SIGN": (
        "_tanh_of_root_float",
        "return -(neg_t + (1.0 - neg_t * neg_t) * (h / dh))  # not clamped: see tanh_after_last_step",
        "return -(neg_t + (1.0 + neg_t * neg_t) * (h / dh))",
        "test_near_the_cusp_seeded", {"batch=16-float64"}),
    "HUGE_LOC_NAN": (
        "_tanh_of_root",
        "newton.x.abs_().nan_to_num_(nan=math.inf, posinf=math.inf)",
        "newton.x.abs_()",
        "test_largest_finite_locations", {"float64"}),
    "FLOAT_PATH_HUGE": (
        "_small_batch_mode",
        "if not (_SMALL_MIN_S <= s <= _SMALL_MAX_M and m <= _SMALL_MAX_M):  # NaN fails too",
        "if (_SMALL_MIN_S <= s <= _SMALL_MAX_M and m <= _SMALL_MAX_M):  # NaN fails too",
        "test_largest_finite_locations", {"float64"}),
    "BOUNDS_CENTRE": (
        "_affine_inside",
        "y = torch.addcmul((hi_w + lo_w) * 0.5, (hi_w - lo_w) * 0.5, t).to(dtype)",
        "y = torch.addcmul((hi_w + lo_w) * 1.5, (hi_w - lo_w) * 0.5, t).to(dtype)",
        "test_per_dimension_bounds", {"rows=30-tensor-float64", "rows=30-tensor-float32",
                                      "rows=4-number-float64", "rows=4-number-float32"}),
    "BOUNDS_NO_UPPER_CLAMP": (
        "_affine_inside",
        "return y.clamp_(torch.nextafter(lo, hi), torch.nextafter(hi, lo))",
        "return y.clamp_(torch.nextafter(lo, hi), None)",
        "test_per_dimension_bounds", {"rows=4-tensor-float64", "rows=30-tensor-float32"}),
    "SCALE_BROADCAST": (
        "_small_batch_mode",
        "shape = torch.broadcast_shapes(loc.shape, scale.shape)",
        "shape = torch.broadcast_shapes(loc.shape, )",
        "test_scale_broadcast_over_loc", {"3-4x3"}),
    "HALF_SMALL_PATH": (
        "_small_batch_mode",
        "if dtype not in (torch.float32, torch.float64) or not high > low:",
        "if dtype not in (torch.float32, torch.float64) and not high > low:",
        "test_half_precision", {"batch=12-float16", "batch=12-bfloat16"}),
}


def _reference_with_edit(name: str):
    from conformance.implementations.torchrl_areas.tanh_normal_mode import TanhNormalAPI

    if name == "UNMUTATED":
        module = edited_module("tanh_normal_mode", [], [], tag=name)
    else:
        function, removed, added, _, _ = MUTANTS[name]
        module = edited_module(function, [removed], [added], tag=name)
    return implementation(name.lower().replace("_", "-"),
                          tanh_normal_mode=TanhNormalAPI(module.TanhNormal))


BATCH_START_FOURTH_ROOT = _reference_with_edit("BATCH_START_FOURTH_ROOT")
FLOAT_START_FOURTH_ROOT = _reference_with_edit("FLOAT_START_FOURTH_ROOT")
FLOAT_LAST_STEP_SIGN = _reference_with_edit("FLOAT_LAST_STEP_SIGN")
HUGE_LOC_NAN = _reference_with_edit("HUGE_LOC_NAN")
FLOAT_PATH_HUGE = _reference_with_edit("FLOAT_PATH_HUGE")
BOUNDS_CENTRE = _reference_with_edit("BOUNDS_CENTRE")
BOUNDS_NO_UPPER_CLAMP = _reference_with_edit("BOUNDS_NO_UPPER_CLAMP")
SCALE_BROADCAST = _reference_with_edit("SCALE_BROADCAST")
HALF_SMALL_PATH = _reference_with_edit("HALF_SMALL_PATH")
UNMUTATED = _reference_with_edit("UNMUTATED")
