"""asv result files are named and filled without the checkout's path."""

import json

from benchtools.asv_results import stabilise


def test_a_result_file_loses_the_checkout_path(tmp_path):
    root = tmp_path / "some" / "checkout"
    results = tmp_path / "results" / "vm"
    results.mkdir(parents=True)
    mangled = str(root).replace("/", "_")
    name = f"abc-existing-py{mangled}_.nox__stack_bin_python.json"
    (results / name).write_text(json.dumps({
        "env_name": f"existing-py{mangled}_.nox__stack_bin_python",
        "python": f"{root}/.nox/_stack/bin/python", "params": {"python": f"{root}/x"}}))
    (results / "machine.json").write_text("{}")
    [written] = stabilise(results.parent, root)
    assert written.name == "abc-existing-py_checkout_.nox__stack_bin_python.json"
    document = json.loads(written.read_text())
    assert document == {"env_name": "existing-py_checkout_.nox__stack_bin_python",
                        "python": "<checkout>/.nox/_stack/bin/python",
                        "params": {"python": "<checkout>/x"}}
    assert sorted(p.name for p in results.iterdir()) == sorted(["machine.json", written.name])
    assert stabilise(results.parent, root) == []  # nothing left to rewrite
