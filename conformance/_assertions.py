"""Failure messages that fit on one screen: the call, its parameters, expected vs actual, the
likely cause and a link (Gymnasium's env-checker style)."""

from __future__ import annotations

import math

import numpy as np


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.10g}"
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=8, threshold=8, edgeitems=3)
    return repr(value)


def message(what: str, *, params: dict, expected, actual, cause: str | None = None,
            link: str | None = None, detail: str | None = None) -> str:
    lines = [
        f"{what}",
        "  parameters: " + ", ".join(f"{k}={_fmt(v)}" for k, v in params.items()),
        f"  expected:   {_fmt(expected)}",
        f"  actual:     {_fmt(actual)}",
    ]
    if detail:
        lines.append(f"  detail:     {detail}")
    if cause:
        lines.append(f"  likely cause: {cause}")
    if link:
        lines.append(f"  see: {link}")
    return "\n".join(lines)


def assert_close(what: str, actual, expected, *, params: dict, rtol: float, atol: float,
                 cause: str | None = None, link: str | None = None) -> None:
    __tracebackhide__ = True
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if a.shape != e.shape:
        raise AssertionError(message(what + " (shape differs)", params=params,
                                     expected=e.shape, actual=a.shape, cause=cause, link=link))
    ok = np.isclose(a, e, rtol=rtol, atol=atol) | (np.isnan(a) & np.isnan(e))
    if not ok.all():
        bad = np.argwhere(~ok)
        idx = tuple(bad[0])
        detail = None
        if a.ndim:
            detail = (f"{len(bad)} of {a.size} elements differ; first at index {idx}: "
                      f"expected {_fmt(float(e[idx]))}, got {_fmt(float(a[idx]))}")
        scalar = a.ndim == 0
        raise AssertionError(message(
            what + f" (rtol={rtol:g}, atol={atol:g})", params=params,
            expected=float(e) if scalar else e, actual=float(a) if scalar else a,
            detail=detail, cause=cause, link=link,
        ))


def is_finite(x) -> bool:
    return all(math.isfinite(v) for v in np.asarray(x, dtype=np.float64).ravel())
