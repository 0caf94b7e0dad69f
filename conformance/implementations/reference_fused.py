"""The reference's prioritized replay with its tree walks fused into one C call each
(``impls.fused_tree``, issue #45): a second implementation of §5, selected with
``--impl conformance.implementations.reference_fused:IMPLEMENTATION``. It provides the replay
area only; the eager reference (``reference``) stays what the specs test by default."""

from __future__ import annotations

from conformance import __version__
from conformance.implementations.adapter import LazyAdapter
from conformance.implementations.reference import own_impls
from conformance.interface import Untestable


def kernel_loaded() -> None:
    """Untestable unless the suite's ``impls`` is imported and its C kernel compiled and loaded
    here: without a compiler the fused classes fall back to the eager code, and a pass would then
    say nothing about the fused walks."""
    own_impls()
    from impls import fused_tree

    if fused_tree.FUSED_ERROR is not None:
        raise Untestable(f"the fused tree's C kernel is not available here: {fused_tree.FUSED_ERROR}")


IMPLEMENTATION = LazyAdapter(
    "reference-fused",
    __version__,
    "conformance.implementations.reference_fused_areas",
    precondition=kernel_loaded,
)
