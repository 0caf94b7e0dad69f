"""TanhNormal modes done wrong, the ways TorchRL did (or a plausible fix could) get them wrong.

Each mutant is a complete implementation of the ``tanh_normal_mode`` area (no other area: those
specs are "not applicable"): ``make`` returns a plain record of the Normal's location
(``upscale * tanh(loc / upscale)`` with ``tanh_loc=True``), scale and bounds; ``mode`` is wrong
in one historical way and otherwise deterministic.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import torch
from scipy.optimize import brentq

from tests.mutants import implementation


class _Mutant:
    def make(self, loc, scale, *, low=-1.0, high=1.0, upscale=5.0, tanh_loc=False):
        mu = upscale * torch.tanh(loc / upscale) if tanh_loc else loc
        return SimpleNamespace(loc=mu, scale=scale, low=float(low), high=float(high))

    @staticmethod
    def affine(d, t):
        return (d.high + d.low) / 2 + (d.high - d.low) / 2 * t


class TanhOfLoc(_Mutant):
    """torchrl <= 0.5.0 ``mode``: the transformed location c + r tanh(mu) (pytorch/rl#2186)."""

    def mode(self, d):
        return self.affine(d, torch.tanh(d.loc))


class BoundaryClamped(_Mutant):
    """get_mode() of pytorch/rl#2198 without its randomness: Adam (lr 1e-2, <= 200 steps) on
    -log_prob from deterministic_sample, clamped to [low, high], NaN steps reverted, stopping
    when the batch's step has norm < 1e-3. It overshoots onto the bound and stays there."""

    def mode(self, d):
        c, r = (d.high + d.low) / 2, (d.high - d.low) / 2
        mu, sigma = d.loc.detach(), d.scale.detach()
        y = torch.nn.Parameter(self.affine(d, torch.tanh(mu)).clone())
        optim = torch.optim.Adam([y], lr=1e-2)
        with torch.enable_grad():
            for _ in range(200):
                t = (y - c) / r
                log_prob = (torch.distributions.Normal(mu, sigma).log_prob(torch.atanh(t))
                            - math.log(r) - torch.log1p(-t * t))
                (-log_prob.mean()).backward()
                previous = y.detach().clone()
                y.grad.clamp_max_(1)
                optim.step()
                optim.zero_grad()
                with torch.no_grad():
                    y.clamp_(d.low, d.high)
                    y.copy_(torch.where(y.isnan(), previous, y))
                if (y.detach() - previous).norm() < 1e-3:
                    break
        return y.detach()


class WrongBranch(_Mutant):
    """Exact stationary points, but of the two local maxima of a bimodal density it keeps the
    one nearest to 0 in pre-tanh space, which is always the lower one when mu != 0."""

    def mode(self, d):
        mu = d.loc.detach().double().cpu().numpy()
        sigma = np.broadcast_to(d.scale.detach().double().cpu().numpy(), mu.shape)
        x = np.vectorize(self._nearest_maximum)(mu, sigma)
        return self.affine(d, torch.tanh(torch.as_tensor(x))).to(d.loc.dtype)

    @staticmethod
    def _nearest_maximum(mu, sigma):
        s = sigma * sigma

        def h(x):  # stationary points of g: x - mu = 2 s tanh(x)
            return x - mu - 2 * s * math.tanh(x)

        # every stationary point is within 2 s of mu; the margin survives rounding of mu +- 2 s
        lo, hi = mu - 2 * s - 1e-6, mu + 2 * s + 1e-6
        if s <= 0.5:
            return brentq(h, lo, hi, xtol=1e-15)
        xc = math.acosh(math.sqrt(2 * s))  # h decreases on (-xc, xc): maxima lie outside it
        maxima = []
        if h(-xc) >= 0:
            maxima.append(brentq(h, lo, -xc, xtol=1e-15))
        if h(xc) <= 0:
            maxima.append(brentq(h, xc, hi, xtol=1e-15))
        return min(maxima, key=abs)


class Float32Solve(_Mutant):
    """The exact method (monotone Newton on x - m = 2 s tanh x from m + 2 s, enough steps), but
    carried out in float32 whatever the input dtype: float64 inputs get float32 answers."""

    def mode(self, d):
        mu = d.loc.detach().to(torch.float32)
        s = d.scale.detach().to(torch.float32) ** 2
        m = mu.abs()
        x = m + 2 * s
        for _ in range(60):
            t = torch.tanh(x)
            slope = (1 - 2 * s * (1 - t * t)).clamp_min(1e-30)
            x = x - (x - m - 2 * s * t) / slope
        y = self.affine(d, torch.copysign(torch.tanh(x), mu))
        inner = (np.nextafter(np.float32(d.low), np.float32(d.high)),
                 np.nextafter(np.float32(d.high), np.float32(d.low)))
        return y.clamp(float(inner[0]), float(inner[1])).to(d.loc.dtype)


def _impl(name, area):
    return implementation(name, tanh_normal_mode=area)


TANH_OF_LOC = _impl("tanh-of-loc", TanhOfLoc())
BOUNDARY_CLAMPED = _impl("boundary-clamped", BoundaryClamped())
WRONG_BRANCH = _impl("wrong-branch", WrongBranch())
FLOAT32_SOLVE = _impl("float32-solve", Float32Solve())
