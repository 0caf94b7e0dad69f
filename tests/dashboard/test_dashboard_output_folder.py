"""The dashboard's -o (issue #44, item 5): checked before anything is built, a staging folder of
its own, nothing deleted that the command did not create, an oversized site never written."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conformance.dashboard.build import OverBudget, build
from tests.conftest import ROOT
from tests.manifest_rows import complete_rows


def _reports(tmp_path):
    reports = tmp_path / "reports"
    path = reports / "upstream" / "0.14.1.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"schema": 1, "started": 1_790_000_000.0, "finished": 1_790_000_001.0,
                                "partial": None, "rows": complete_rows()}))
    return reports


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "conformance.dashboard", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def _staging(folder):
    return sorted(p.name for p in folder.iterdir() if ".staging" in p.name)


def test_a_sibling_staging_folder_it_did_not_create_is_kept(tmp_path):
    """As tried: the dashboard's -o deleted a sibling folder named .<name>.staging."""
    reports = _reports(tmp_path)
    theirs = tmp_path / ".site.staging"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("someone else's")
    proc = _cli("-o", tmp_path / "site", "--reports", reports)
    assert proc.returncode == 0, proc.stderr
    assert (theirs / "notes.txt").read_text() == "someone else's"
    assert (tmp_path / "site" / "index.html").is_file()
    assert _staging(tmp_path) == [".site.staging"]


def test_o_on_a_symlink_is_one_line_and_leaves_no_staging_folder(tmp_path):
    """As tried: -o on a symlink gave a traceback and left its staging folder."""
    reports = _reports(tmp_path)
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "site").symlink_to(target)
    proc = _cli("-o", tmp_path / "site", "--reports", reports)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"python -m conformance.dashboard: error: -o {tmp_path / 'site'}: " \
                                  "a symbolic link; give the folder itself"
    assert _staging(tmp_path) == [] and list(target.iterdir()) == []


def test_an_oversized_site_is_never_written(tmp_path):
    """As tried: an oversized site stayed in -o, and the workflow uploaded it."""
    reports = _reports(tmp_path)
    with pytest.raises(OverBudget, match="over its 0.0 MB budget: not written"):
        build(reports, tmp_path / "site", budget=1000)
    assert not (tmp_path / "site").exists() and _staging(tmp_path) == []


def test_the_watch_uploads_only_a_site_that_was_built():
    import yaml

    steps = yaml.safe_load((ROOT / ".github" / "workflows" / "nightly-watch.yml").read_text())[
        "jobs"]["watch"]["steps"]
    (build_step,) = [s for s in steps if "conformance.dashboard" in s.get("run", "")]
    (upload,) = [s for s in steps if "upload-pages-artifact" in str(s.get("uses"))]
    assert f"steps.{build_step['id']}.outcome == 'success'" in upload["if"]
