"""The optional capabilities of ``conformance.interface.CAPABILITIES``, as a spec asks for them.

An area object without the capability has the spec reported "not applicable" (never passed), one
whose capability falls short of its protocol has it reported NOT TESTED (the failure itself is
``conformance/test_interface.py``'s), exactly as for a whole area.
"""

from __future__ import annotations

import pytest

from conformance import outcomes
from conformance.interface import CAPABILITIES
from conformance.interface_check import problems
from conformance.plugin import keys


def require(request, impl, area: str, area_obj: object, method: str) -> object:
    """``area_obj`` itself, once it is known to provide ``method`` as its protocol says."""
    protocol = CAPABILITIES[area][method]
    if not callable(getattr(area_obj, method, None)):
        request.node.stash[keys.SKIP_OUTCOME] = outcomes.NOT_APPLICABLE
        what = protocol.__doc__.strip().splitlines()[0].replace("``", "").rstrip(".")
        pytest.skip(f"{outcomes.NOT_APPLICABLE_REASON}: {impl.id}'s {area} area does not "
                    f"provide {method}() ({what})")
    found = problems(area_obj, protocol)
    if found:
        request.node.stash[keys.SKIP_OUTCOME] = outcomes.NOT_TESTED
        pytest.skip(f"NOT TESTED: {impl.id}'s {area}.{method} does not satisfy "
                    f"conformance.interface.{protocol.__name__} ({'; '.join(found)}); see "
                    "conformance/test_interface.py")
    return area_obj
