"""What each selected implementation provides, looked up once per process before any test runs.

Per area: provided (with any way it falls short of its protocol), not provided ("not
applicable"), cannot be tested here (``Untestable``), or broken (the lookup itself raised). An
implementation none of whose areas can be exercised is NOT TESTED as a whole: every one of its
tests says why, and the run fails — a gate must never go green on what it did not test.
"""

from __future__ import annotations

import difflib
import inspect
from dataclasses import dataclass, field

from conformance import device
from conformance.areas import AREAS
from conformance.interface import PROTOCOLS, Untestable
from conformance.interface_check import problems

PROVIDED = "provided"
ABSENT = "absent"
UNTESTABLE = "untestable"
BROKEN = "broken"


class InvalidImplementation(ValueError):
    """The object named by --impl is not an implementation (a usage error, one line)."""


@dataclass
class AreaStatus:
    state: str
    obj: object = None
    reason: str = ""  #: why it is untestable or broken
    problems: list[str] = field(default_factory=list)  #: how it falls short of its protocol


@dataclass
class Survey:
    impl_id: str
    areas: dict[str, AreaStatus]

    @property
    def not_tested(self) -> str | None:
        """Why no area of this implementation can be exercised, or None."""
        if any(s.state == PROVIDED for s in self.areas.values()):
            return None
        reasons = list(dict.fromkeys(s.reason for s in self.areas.values() if s.reason))
        return "; ".join(reasons) if reasons else None


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def check_area_names(impl_id: str, obj: object) -> None:
    """No attribute that looks like a misspelt area (it would silently make the area n/a)."""
    public = [n for n in dir(obj) if not n.startswith("_") and n not in AREAS]
    for name in public:
        near = difflib.get_close_matches(name, list(AREAS), n=1, cutoff=0.8)
        if near:
            raise InvalidImplementation(
                f"implementation {impl_id!r} has attribute {name!r}, which is not an area; did you "
                f"mean {near[0]!r}? (areas: {', '.join(AREAS)})")


def check_identity(impl_id: str, obj: object) -> None:
    """``name`` and ``version`` present: reports and expectations files are keyed by them."""
    for attr in ("name", "version"):
        try:
            value = getattr(obj, attr, None)
        except Exception as exc:  # noqa: BLE001 - a broken property is a broken plug-in
            raise InvalidImplementation(
                f"implementation {impl_id!r}: reading .{attr} raised {_one_line(exc)}") from None
        if not isinstance(value, str) or not value.strip():
            raise InvalidImplementation(
                f"implementation {impl_id!r} has no {attr} (a non-empty str), got {value!r}; an "
                "implementation needs name, version and one attribute per area "
                f"({', '.join(AREAS)})")


def device_problems(area: object) -> list[str]:
    """How the area's optional device declaration (``conformance.interface``) is malformed."""
    declared = getattr(area, device.DEVICES, None)
    if declared is None:
        return []
    if (isinstance(declared, str) or not isinstance(declared, (tuple, list))
            or not declared or not all(t in device.TYPES for t in declared)):
        return [f".{device.DEVICES} must be a non-empty tuple of device types among "
                f"{', '.join(device.TYPES)}, got {declared!r}"]
    out = []
    why = getattr(area, device.DEVICES_WHY, None)
    if why is not None and not (isinstance(why, str) and why.strip()):
        out.append(f".{device.DEVICES_WHY} must be a non-empty str, got {why!r}")
    for name in device.KEYWORD_CALLS:
        method = getattr(area, name, None)
        if callable(method) and not accepts_keyword(method, "device"):
            out.append(f"{name}() does not accept keyword 'device', which an area that declares "
                       f".{device.DEVICES} receives")
    return out


def accepts_keyword(fn, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable: nothing to read, nothing to claim
        return True
    return any(p.kind is p.VAR_KEYWORD or (p.name == name and p.kind in (
        p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)) for p in params)


def survey(impl_id: str, obj: object) -> Survey:
    """Look every area up once; raise InvalidImplementation if ``obj`` provides no area at all."""
    areas: dict[str, AreaStatus] = {}
    for area in AREAS:
        try:
            value = getattr(obj, area, None)
        except Untestable as exc:
            areas[area] = AreaStatus(UNTESTABLE, reason=str(exc) or "no reason given")
            continue
        except Exception as exc:  # noqa: BLE001 - any failure to produce the area is reported
            areas[area] = AreaStatus(BROKEN, reason=f"looking up .{area} raised {_one_line(exc)}")
            continue
        if value is None:
            areas[area] = AreaStatus(ABSENT)
        else:
            found = problems(value, PROTOCOLS[area]) + device_problems(value)
            areas[area] = AreaStatus(PROVIDED, value, problems=found)
    result = Survey(impl_id, areas)
    if all(s.state == ABSENT for s in areas.values()):
        raise InvalidImplementation(
            f"implementation {impl_id!r} ({type(obj).__name__}) provides no recognised area; "
            f"give it one or more of: {', '.join(AREAS)}")
    return result
