"""Where things are: the checkout (or the installed package), its reports and its work folders,
named once.

A leaf module (it imports nothing of the project). Every module that needs the project root or a
work folder takes it from here, so a checkout can move, and ``TORCHRL_CONFORMANCE_WORK`` can put
the large work folders (upstream environments, builds) elsewhere.

The suite runs from a checkout (``ROOT`` holds ``pyproject.toml`` and ``noxfile.py``) or from an
installed wheel (``ROOT`` is then ``site-packages``): an installed run writes under the folder
it was started from, never into ``ROOT`` (docs/check-your-torchrl.md).
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the package's own folder: what ``import conformance`` loaded
PACKAGE = ROOT / "conformance"
#: the shipped expectations files (data of the package: the plug-in, the runner and the
#: reports all read them)
EXPECTATIONS = PACKAGE / "expectations"
#: True in a checkout of this repository, False in an installed wheel
CHECKOUT = (ROOT / "pyproject.toml").is_file() and (ROOT / "noxfile.py").is_file()
REPORTS = ROOT / "reports"
#: large, disposable work folders (environments, builds): ``.nox`` unless told otherwise
WORK = Path(os.environ.get("TORCHRL_CONFORMANCE_WORK") or ROOT / ".nox")
#: where the repository's files are read when this copy has none (an installed wheel)
REPOSITORY = "https://github.com/torchrl-conformance/torchrl-conformance"


def shown(path: Path) -> str:
    """``path`` as a user reads it: relative to the checkout when inside it."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def scrub(text: str) -> str:
    """``text`` without this checkout's location (``/home/x/checkout/conformance/a.py`` ->
    ``conformance/a.py``): messages that reach committed reports hold no local path."""
    return text.replace(f"{ROOT}/", "")


def reports_folder(rootpath: Path, invocation_dir: Path) -> Path:
    """Where a run writes by default: the checkout's ``reports/`` when pytest's rootdir is the
    checkout, else ``reports/`` under the folder the run was started from."""
    if CHECKOUT and Path(rootpath).resolve() == ROOT:
        return REPORTS
    return Path(invocation_dir) / "reports"


def inside_install(path: Path) -> bool:
    """Whether ``path`` lies in the installed package's folder (``site-packages``): no run
    writes there (it would change the installation and vanish with the next upgrade)."""
    if CHECKOUT:
        return False
    try:
        Path(path).resolve().relative_to(ROOT)
    except ValueError:
        return False
    return True


def link(relative: str, out_dir: Path | None) -> str:
    """A link, from a report written to ``out_dir``, to the repository file ``relative``
    (``reports/upstream-bugs/x.md``): relative in a checkout, else to the suite's release on
    the web (an installed wheel does not hold ``reports/``)."""
    if CHECKOUT:
        return os.path.relpath(ROOT / relative, out_dir) if out_dir else relative
    from conformance import __version__  # a leaf module otherwise: imported only here

    return f"{REPOSITORY}/blob/v{__version__}/{relative}"
