"""Skip a library's self-tests, visibly, where the library is not installed."""

from __future__ import annotations

import pytest


def need(module: str):
    """``pytest.importorskip`` with a reason that says where the test does run."""
    return pytest.importorskip(
        module, reason=f"{module} is not installed here; `nox -s libraries` runs this test in "
                       "the library's layer")


def sac_truncation_mutant_fails(tmp_path, real: str, mutant: str) -> None:
    """``mutant`` (a library that stores truncated transitions as terminated) fails the
    truncated-transition spec, naming the bug, where the real library ``real`` passes it."""
    from tests.conftest import run_suite

    run = run_suite(tmp_path, "conformance/test_sac_done_states.py", "-k",
                    "truncated and continuous and single and False", "--impl",
                    f"{real},tests.libraries.mutants:{mutant}")
    passed = run.rows(implementation=real)
    failed = run.rows(implementation=mutant)
    assert passed and all(r["outcome"] == "pass" for r in passed), run.output[-3000:]
    assert failed and all(r["outcome"] == "fail" and "truncation is treated as termination"
                          in r["message"] for r in failed), failed


def composite_mean_mutant_fails(tmp_path, real: str, mutant: str) -> None:
    """``mutant`` (the library's multi-categorical model averaging its heads instead of summing
    them) fails the composite actor spec, naming the aggregate, where ``real`` passes it."""
    from tests.conftest import run_suite

    run = run_suite(tmp_path, "conformance/test_composite_log_prob.py", "-k",
                    "test_actor_log_probs_match_oracle and seed and random", "--impl",
                    f"{real},tests.libraries.mutants:{mutant}")
    assert [r["outcome"] for r in run.rows(implementation=real)] == ["pass"], run.output[-3000:]
    failed = run.rows(implementation=mutant)
    assert failed and all(r["outcome"] == "fail" and "aggregate log-prob" in r["message"]
                          for r in failed), failed


def identity_value_net():
    """A float64 value network that returns its input (weight 1, bias 0): the spec's value
    predictions reach the library's loss unchanged."""
    import torch

    net = torch.nn.Linear(1, 1, dtype=torch.float64)
    with torch.no_grad():
        net.weight.fill_(1.0)
        net.bias.fill_(0.0)
    return net


def sac_parameters(actor, critics) -> dict[str, list]:
    """The (name, parameter) pairs an SGD step is checked on: the actor's, and every critic's
    spec Q-network's as ``"<i>.<name>"``."""
    return {"actor": list(actor.named_parameters()),
            "critic": [(f"{i}.{n}", p) for i, c in enumerate(critics)
                       for n, p in c.q.named_parameters()]}


def assert_sgd_step_is_minus_the_gradient(named, before, out, *, critic_scale: float) -> None:
    """After one SGD step (lr 1) of the parameters ``named`` (actor's or critics', see
    ``sac_parameters``), each moved by minus the gradient the adapter reported; a critic's
    library loss is the spec's ``loss_qvalue`` divided by ``critic_scale``."""
    import torch

    for name, p in named:
        if name in out.actor_grad:
            expected = out.actor_grad[name]
        else:
            i, rest = name.split(".", 1)
            expected = out.qvalue_grad[int(i)][rest] / critic_scale
        torch.testing.assert_close(before[name] - p.detach(), expected, rtol=1e-10, atol=1e-12)
