"""Option values the plug-in cannot use are one-line errors: a spec timeout that is not finite, a
device index torch cannot read."""

from __future__ import annotations

import pytest

from conformance import device
from conformance.plugin import watchdog


@pytest.mark.parametrize("seconds", [float("nan"), float("inf"), 1e300, -1.0])
def test_spec_timeout_must_be_finite(seconds):
    """As tried: --spec-timeout nan disabled the limit, inf or 1e300 gave 30 tracebacks."""
    with pytest.raises(pytest.UsageError, match="a finite number of seconds"):
        watchdog.Watchdog(seconds, None, "main")


@pytest.mark.parametrize("text", ["cuda:99999999999999999999", "cuda:00", "cuda:\u0663",
                                  "cuda:-1", "cuda:1e3"])
def test_a_device_index_torch_cannot_read_is_one_line(text):
    """As tried: --device cuda:99999999999999999999 gave an INTERNALERROR."""
    with pytest.raises(device.DeviceError, match="not a device"):
        device.parse(text)
