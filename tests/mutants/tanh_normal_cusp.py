"""The reference TanhNormal's small-batch solve (at most ``SMALL_BATCH`` CPU elements, in Python
floats) with one line of its starting point edited: what a mutation tool left alive while no
spec asked for a mode near the cusp sigma^2 = 1/2, mu = 0, where the fixed number of Newton
steps does not wash a bad start out. The first two survive every other §1 spec.

- ``CUSP_Q_DIV``: the cubic model's constant term ``m * k`` becomes ``m / k``;
- ``CUSP_CUBE_ROOT``: the start's cube root becomes a square root;
- ``CUSP_P_SIGN``: the cubic model's linear coefficient ``(1 - 2 sigma^2) k`` changes sign;
- ``CUSP_ROOT_SIGN``: the start's root candidate changes sign.
"""

from __future__ import annotations

from tests.mutants import implementation
from tests.mutants.source import mutated_module

MUTANTS = {
    # the context after each edit makes it the float path's line (the vectorised solve has
    # the same arithmetic in tensor form)
    "CUSP_Q_DIV": ("    q = m * k\n    root = -math", "    q = m / k\n    root = -math"),
    "CUSP_CUBE_ROOT": ("q ** (1.0 / 3.0)))\n    slope0", "q ** (1.0 / 2.0)))\n    slope0"),
    "CUSP_P_SIGN": ("    p = (1.0 - two_s) * k\n    q = m * k\n    root = -math",
                    "    p = (1.0 + two_s) * k\n    q = m * k\n    root = -math"),
    "CUSP_ROOT_SIGN": ("    root = -math.copysign(math.sqrt(abs(p)), p)\n",
                       "    root = math.copysign(math.sqrt(abs(p)), p)\n"),
}


def reference_with_edit(name: str, old: str, new: str):
    from conformance.implementations.torchrl_areas.tanh_normal_mode import TanhNormalAPI

    module = mutated_module("impls.tanh_normal_mode", old, new, tag=name)
    return implementation(name.lower().replace("_", "-"),
                          tanh_normal_mode=TanhNormalAPI(module.TanhNormal))


CUSP_Q_DIV = reference_with_edit("CUSP_Q_DIV", *MUTANTS["CUSP_Q_DIV"])
CUSP_CUBE_ROOT = reference_with_edit("CUSP_CUBE_ROOT", *MUTANTS["CUSP_CUBE_ROOT"])
CUSP_P_SIGN = reference_with_edit("CUSP_P_SIGN", *MUTANTS["CUSP_P_SIGN"])
CUSP_ROOT_SIGN = reference_with_edit("CUSP_ROOT_SIGN", *MUTANTS["CUSP_ROOT_SIGN"])
UNMUTATED = reference_with_edit("UNMUTATED", "", "")
