"""The interface: each area an implementation provides satisfies its protocol.

``conformance/interface/`` declares, per area, the calls the specs make. Before any spec of an
area runs, its object is checked against that protocol (every method present and callable, every
parameter the specs pass accepted, every declared attribute present): an implementation that falls
short gets one failure here naming the area and what is missing, and that area's other specs
report NOT TESTED instead of failing with an AttributeError deep inside each of them.
"""

from __future__ import annotations

import pytest

from conformance import device, outcomes
from conformance._assertions import message
from conformance.areas import AREAS, NUMBER
from conformance.interface import CAPABILITIES, PROTOCOLS, PrioritizedBuffer
from conformance.interface_check import describe, problems
from conformance.plugin import keys
from conformance.pytest_plugin import area_status


def _fail_if(found: list[str], impl, area: str, protocol: type) -> None:
    __tracebackhide__ = True
    if found:
        raise AssertionError(message(
            f"{impl.id}'s {area} area (§{NUMBER[area]} {AREAS[area]}) does not satisfy "
            f"conformance.interface.{protocol.__name__}",
            params={"implementation": impl.id, "area": area},
            expected=describe(protocol), actual="; ".join(found)))


@pytest.mark.parametrize("area", list(AREAS), ids=lambda a: f"area={a}")
def test_area_satisfies_its_protocol(impl, area, request):
    status = area_status(request, impl, area)
    _fail_if(status.problems, impl, area, PROTOCOLS[area])


def test_prioritized_buffer_satisfies_its_protocol(impl, request):
    """The buffer that ``prioritized_replay.buffer(...)`` returns is an interface object too."""
    status = area_status(request, impl, "prioritized_replay")
    if status.problems:
        pytest.skip("the area itself does not satisfy its protocol (see the test above)")
    buffer = status.obj.buffer(capacity=4, alpha=0.6, beta=0.4, eps=1e-3,
                               **device.keyword(status.obj))
    _fail_if(problems(buffer, PrioritizedBuffer), impl, "prioritized_replay", PrioritizedBuffer)


_CAPABILITIES = [(a, m) for a, methods in CAPABILITIES.items() for m in methods]


@pytest.mark.parametrize("area,method", _CAPABILITIES, ids=lambda x: x)
def test_capability_satisfies_its_protocol(impl, area, method, request):
    """An optional capability (``conformance.interface.CAPABILITIES``) that an area provides
    satisfies its protocol; one it does not provide makes the family specs not applicable."""
    status = area_status(request, impl, area)
    if status.problems:
        pytest.skip("the area itself does not satisfy its protocol (see the test above)")
    if not callable(getattr(status.obj, method, None)):
        request.node.stash[keys.SKIP_OUTCOME] = outcomes.NOT_APPLICABLE
        pytest.skip(f"{outcomes.NOT_APPLICABLE_REASON}: {impl.id}'s {area} area does not "
                    f"provide {method}()")
    protocol = CAPABILITIES[area][method]
    _fail_if(problems(status.obj, protocol), impl, area, protocol)
