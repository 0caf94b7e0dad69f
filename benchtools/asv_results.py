"""asv names an existing environment after its python's absolute path, so its result files (names
and ``env_name``/``python`` inside) carry the checkout's location, which means nothing on another
machine and leaks a local path into git. ``stabilise`` rewrites the checkout part as
``<checkout>``/``_checkout``: the same environment gets the same name wherever it ran.

    python -m benchtools.asv_results [RESULTS_DIR]   (default: reports/asv/results)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from conformance.paths import REPORTS, ROOT

RESULTS = REPORTS / "asv" / "results"
PLACEHOLDER = "<checkout>"


def _mangled(path: str) -> str:
    return path.replace(os.path.sep, "_")  # as asv turns a python's path into a name


def stabilise(results: Path = RESULTS, root: Path = ROOT) -> list[Path]:
    """Rewrite every result file under ``results`` that names ``root``; the files rewritten."""
    root_text, mangled = str(root), _mangled(str(root))
    stable = _mangled(PLACEHOLDER.strip("<>").join("//"))[:-1]  # "_checkout"
    done = []
    for path in sorted(results.glob("*/*.json")):
        if path.name == "machine.json" or (mangled not in path.name
                                           and root_text not in path.read_text()):
            continue
        # every string of the document (env_name, python, params' python, ...): JSON escapes
        # neither "/" nor "_", so a plain replacement rewrites exactly those strings
        text = path.read_text().replace(root_text, PLACEHOLDER).replace(mangled, stable)
        json.loads(text)  # still a document
        target = path.with_name(path.name.replace(mangled, stable))
        target.write_text(text)
        if target != path:
            path.unlink()
        done.append(target)
    return done


if __name__ == "__main__":
    import argparse

    cli = argparse.ArgumentParser(prog="python -m benchtools.asv_results", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("results", nargs="?", type=Path, default=RESULTS,
                     help="asv's results folder (default: reports/asv/results)")
    for rewritten in stabilise(cli.parse_args().results):
        print(f"stabilised {rewritten}")
