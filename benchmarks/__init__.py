"""asv's benchmarks: one ``bench_<area>.py`` per area, nothing else (the harness they are built
with is ``benchtools``)."""

import sys
from pathlib import Path

# With `asv run --python=same` (or an existing environment) the project is not installed and
# asv drops PYTHONPATH: fall back on the checkout (appended, so an installed build wins).
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.append(_ROOT)

# asv's forkserver imports this package once and forks every point from it: torch, TorchRL and
# the implementations are loaded here, once, not in each point (benchtools.registry.preload)
from benchtools.registry import preload  # noqa: E402

preload()
