"""The verdict block (conformance.reporting.verdict): two verdicts named apart, counts, a
TorchRL's defects by area with the reproducer, the first unexpected results, untestable specs
grouped by cause with the fix; read from fields, short for a conformant run."""

from conformance.reporting.verdict import GATE_OK, block, gate_verdict, user_verdict


def _row(spec, impl, outcome, *, area="tanh_normal_mode", expected=None, defect=None,
         message="", version="1"):
    return {"nodeid": f"conformance/test_{area}.py::{spec}[{impl}]", "area": area, "spec": spec,
            "implementation": impl, "implementation_version": version, "device": "cpu",
            "outcome": outcome, "message": message, "defect": defect,
            "expected": expected if expected is not None else outcome in (
                "pass", "known failure", "not applicable")}


AREAS = ["tanh_normal_mode", "composite_log_prob", "sac_done_states", "ppo_value_clipping",
         "prioritized_replay_trees"]


def conformant():
    rows = [_row(f"test_{i}", "reference", "pass", area=a) for i, a in enumerate(AREAS)]
    for i, area in enumerate(AREAS):
        rows.append(_row(f"test_{i}", "torchrl", "known failure", area=area,
                         defect=f"defect-{i}", message="AssertionError: x"))
        rows.append(_row(f"test_{i}b", "torchrl", "known failure", area=area,
                         defect=f"defect-{i}"))
    return {"partial": None, "rows": rows}


def test_a_conformant_run_names_both_verdicts_and_the_defects_in_few_lines():
    lines = block([conformant()])
    assert lines[0] == f"gate verdict: {GATE_OK}"
    assert lines[1] == ("your TorchRL: torchrl 1: 5 known defect(s) across the five areas; "
                        "the reference passes every spec")
    text = "\n".join(lines)
    assert "python -m conformance.upstream.bugs --reproduce SLUG" in text
    # the family file prioritized_replay_trees counts for its area
    assert "  prioritized_replay (1): defect-4" in lines
    assert len(lines) <= 25
    assert "unexpected results" not in text and "not tested here" not in text


def test_a_red_run_lists_the_first_unexpected_results_and_where_the_rest_are():
    doc = conformant()
    doc["rows"] += [_row(f"test_bad{i}", "torchrl", "fail", message=f"boom {i}\nmore")
                    for i in range(7)]
    lines = block([doc], where="out/conformance.md")
    assert lines[0] == "gate verdict: NOT CONFORMANT: 7 unexpected result(s)"
    head = next(i for i, line in enumerate(lines) if line.startswith("unexpected results"))
    assert lines[head] == "unexpected results (first 5 of 7; all of them: out/conformance.md):"
    assert lines[head + 2] == "      boom 0"  # the message's first line only


def test_untestable_specs_are_grouped_by_cause_with_the_fix_on_its_own_line():
    cause = ("cannot be tested here: TorchRL's C++ segment trees (torchrl._torchrl) do not load "
             "next to this torch — fix: torchrl-conformance --build-trees")
    doc = {"partial": None, "rows": [
        _row(f"test_{i}", "torchrl", "untestable", area="prioritized_replay", expected=False,
             message=cause) for i in range(179)]}
    lines = block([doc])
    assert lines[0] == "gate verdict: NOT CONFORMANT: 179 unexpected result(s)"
    at = lines.index("not tested here: 179 spec(s), 1 cause(s), one line each (the fix follows "
                     "the cause):")
    assert lines[at + 1].startswith("  torchrl 1, 179 spec(s): TorchRL's C++ segment trees")
    assert "      fix: torchrl-conformance --build-trees" in lines[at + 2:at + 4]
    assert "unexpected results (first" not in "\n".join(lines)  # not 179 near-identical lines
    assert "179 spec(s) not tested here" in user_verdict(doc["rows"])


def test_a_partial_run_is_no_verdict_and_results_without_defects_say_so():
    doc = {"partial": "filtered with -k ppo",
           "rows": [_row("test_a", "torchrl", "known failure")]}
    assert gate_verdict(doc["rows"], ["filtered with -k ppo"]).startswith(
        "PARTIAL RUN (filtered with -k ppo): not a conformance verdict")
    assert user_verdict(doc["rows"]) == "torchrl 1: 1 known failure(s) (these results name no defect)"


def test_a_reference_that_fails_is_not_said_to_pass():
    rows = [_row("test_a", "reference", "fail")]
    assert user_verdict(rows) == "the reference (reference 1) does not pass 1 spec(s)"


def test_the_upstream_runner_prints_the_block_of_its_sources(tmp_path, capsys):
    import json

    from conformance.upstream.runner import print_verdict_block

    path = tmp_path / "0.14.1.json"
    path.write_text(json.dumps(conformant()))
    print_verdict_block([path], tmp_path / "upstream.md")
    out = capsys.readouterr().out.splitlines()
    assert "conformance verdict" in out[0] and out[1] == f"gate verdict: {GATE_OK}"
    assert any(line.startswith("  tanh_normal_mode (1): defect-0") for line in out)
