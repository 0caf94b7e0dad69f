"""Our fixed reference implementations (``impls``), seen through the interface.

``impls`` is the folder the project's brief names, and the wheel installs it under that name,
beside ``conformance``. A generic top-level name can be another project's too: before any area
is used, the ``impls`` Python imports must be this suite's (beside its ``conformance``), else the
reference is NOT TESTED with the path of the one found, never measured as ours.
"""

from __future__ import annotations

from pathlib import Path

from conformance import __version__, paths
from conformance.implementations.adapter import LazyAdapter
from conformance.interface import Untestable


def own_impls() -> None:
    """Untestable unless ``import impls`` gives the suite's own package."""
    import impls

    found = Path(getattr(impls, "__file__", None) or next(iter(impls.__path__), "")).resolve().parent
    if found != (paths.ROOT / "impls").resolve():
        raise Untestable(f"the `impls` package Python imports ({found}) is not this suite's "
                         f"({paths.ROOT / 'impls'}): another project installs a top-level `impls`; "
                         "use a separate environment for torchrl-conformance")


IMPLEMENTATION = LazyAdapter(
    "reference", __version__, "conformance.implementations.reference_areas", precondition=own_impls
)
