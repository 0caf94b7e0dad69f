"""Our fixed reference implementations (``impls``), seen through the interface."""

from __future__ import annotations

from conformance import __version__
from conformance.implementations.adapter import LazyAdapter

IMPLEMENTATION = LazyAdapter(
    "reference", __version__, "conformance.implementations.reference_areas"
)
