"""The reference's prioritized replay with its tree walks fused into one C call each
(``impls.fused_tree``, issue #45): a second implementation of §5, selected with
``--impl conformance.implementations.reference_fused:IMPLEMENTATION``. It provides the replay
area only; the eager reference (``reference``) stays what the specs test by default."""

from __future__ import annotations

from conformance import __version__
from conformance.implementations.adapter import LazyAdapter
from conformance.implementations.reference import own_impls

IMPLEMENTATION = LazyAdapter(
    "reference-fused",
    __version__,
    "conformance.implementations.reference_fused_areas",
    precondition=own_impls,
)
