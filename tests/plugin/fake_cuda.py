"""A pytest plug-in for the device self-tests: what torch says about CUDA, decided by the test.

Loaded with ``-p tests.plugin.fake_cuda`` in the suite's subprocess, it patches, in that process
only and before the suite's plug-in reads them, ``torch.cuda.is_available`` / ``device_count``
/ ``get_device_name`` after ``$FAKE_CUDA``:

- ``none``: torch sees no CUDA device (on any machine, a GPU one included);
- ``one``: torch sees one device, ``cuda:0``, named "fake GPU (self-test)". The specs still
  compute on the CPU: ``conformance.device.target`` (where inputs are put and where outputs are
  expected) is replaced by the CPU, and only that; everything that *names* the device (the
  run's device, results rows, report headers, messages, the header line) says cuda.

``$FAKE_CUDA_LOST_IN`` (a node id substring) stages a lost CUDA context: from the call of the
first test whose node id holds it, ``conformance.plugin.cuda_context`` finds the context unusable
(a device-side assert cannot be triggered without a GPU).

What this proves: the guard, the option and variable, and that the device reaches the specs'
fixtures, the results rows and the reports. What it does not: that anything runs on a GPU.
"""

from __future__ import annotations

import os

import torch

import conformance.device

MODE = os.environ.get("FAKE_CUDA", "one")
if MODE == "none":
    torch.cuda.is_available = lambda: False
    torch.cuda.device_count = lambda: 0
elif MODE == "one":
    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 1
    torch.cuda.current_device = lambda: 0
    torch.cuda.get_device_name = lambda index=None: "fake GPU (self-test)"
    conformance.device.target = lambda: torch.device("cpu")
else:
    raise RuntimeError(f"FAKE_CUDA={MODE!r}: use none or one")

LOST_IN = os.environ.get("FAKE_CUDA_LOST_IN", "")
_lost: list[str] = []
if LOST_IN:
    from conformance.plugin import cuda_context

    cuda_context.lost = lambda where: (
        "AcceleratorError: CUDA error: device-side assert triggered (staged)" if _lost else None)

    def pytest_runtest_call(item):  # inside the plugin's wrapper: staged before its check
        if LOST_IN in item.nodeid and not _lost:
            _lost.append(item.nodeid)
