"""Failure messages that fit on one screen: the call, its parameters, expected vs actual, the
likely cause and a link (Gymnasium's env-checker style)."""

from __future__ import annotations

import math

import numpy as np

#: the run's device as failure messages name it (set by ``conformance.device.use``)
DEVICE = "cpu"


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
        f"  device:     {DEVICE}",
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


def _as_float64(value) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor, possibly attached to a graph or on a device
        value = value.detach().cpu().double().numpy()
    return np.asarray(value, dtype=np.float64)


def assert_close(what: str, actual, expected, *, params: dict, rtol: float = 0.0, atol=0.0,
                 cause: str | None = None, link: str | None = None) -> None:
    """|actual - expected| <= atol + rtol |expected| element-wise (NaN matches NaN).

    ``atol`` may be an array of expected's shape: a per-element tolerance (error bounds that
    scale with each element, as for log-probs of heads of different sizes)."""
    __tracebackhide__ = True
    a = _as_float64(actual)
    e = _as_float64(expected)
    tol = _as_float64(atol)
    if a.shape != e.shape:
        raise AssertionError(message(what + " (shape differs)", params=params,
                                     expected=e.shape, actual=a.shape, cause=cause, link=link))
    ok = (np.abs(a - e) <= tol + rtol * np.abs(e)) | (np.isnan(a) & np.isnan(e))
    if not ok.all():
        bad = np.argwhere(~ok)
        idx = tuple(int(i) for i in bad[0])
        detail = None
        if a.ndim:
            detail = (f"{len(bad)} of {a.size} elements differ; first at index {idx}: "
                      f"expected {_fmt(float(e[idx]))}, got {_fmt(float(a[idx]))}")
            if tol.ndim:
                detail += f" (tolerance {float(np.broadcast_to(tol, e.shape)[idx]):.3g})"
        bounds = (f" (rtol={rtol:g}, atol={float(tol):g})" if tol.ndim == 0
                  else " (per-element tolerance)")
        scalar = a.ndim == 0
        raise AssertionError(message(
            what + bounds, params=params,
            expected=float(e) if scalar else e, actual=float(a) if scalar else a,
            detail=detail, cause=cause, link=link,
        ))


def is_finite(x) -> bool:
    return all(math.isfinite(v) for v in np.asarray(x, dtype=np.float64).ravel())


def assert_refused_naming(build, name: str, value: float, *, params: dict) -> None:
    """``build()`` must raise, with an error whose words name the parameter and the value
    given (any error type: the words are the spec), not build something from a bad value."""
    __tracebackhide__ = True
    try:
        build()
    except Exception as exc:  # noqa: BLE001 - any error type, its words are the spec
        text = str(exc)
        if name in text and f"{value:g}" in text:
            return
        raise AssertionError(message(
            f"the error for {name} = {value:g} does not name the parameter and its value",
            params=params, expected=f"a message holding {name!r} and {value:g}",
            actual=f"{type(exc).__name__}: {text}")) from exc
    raise AssertionError(message(f"a buffer was built with {name} = {value:g}", params=params,
                                 expected="an error naming the parameter", actual="no error"))
