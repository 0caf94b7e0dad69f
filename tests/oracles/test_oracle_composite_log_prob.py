"""The composite log-prob oracle against values computed by hand."""

import math

import pytest
import torch

from conformance.interface import CompositeHead
from conformance.oracles import composite_log_prob as oracle


def test_categorical_log_prob_by_hand():
    # logits (0, log 3): probabilities 1/4, 3/4
    logits = torch.tensor([[0.0, math.log(3.0)], [0.0, math.log(3.0)]], dtype=torch.float64)
    lp = oracle.categorical_log_prob(logits, torch.tensor([0, 1]))
    assert lp.dtype == torch.float64
    assert lp.tolist() == pytest.approx([math.log(0.25), math.log(0.75)], abs=1e-15)


def test_single_category_is_exactly_zero_for_any_logit():
    logits = torch.tensor([[-1e4], [0.0], [3.5], [1e4]])
    assert oracle.categorical_log_prob(logits, torch.zeros(4, dtype=torch.long)).tolist() == [0.0] * 4


def test_extreme_logits_stay_finite_and_exact():
    # logits (1e4, -1e4): the unlikely class has log-prob -2e4 - log1p(exp(-2e4)) = -2e4
    lp = oracle.categorical_log_prob(torch.tensor([[1e4, -1e4]]), torch.tensor([1]))
    assert lp.item() == -2e4


def test_normal_log_prob_by_hand():
    # standard normal at 0: -log(sqrt(2 pi)); N(1, 2) at 3: -1/2 - log 2 - log(sqrt(2 pi))
    lp = oracle.normal_log_prob(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]), torch.tensor([0.0, 3.0]))
    c = 0.5 * math.log(2 * math.pi)
    assert lp.tolist() == pytest.approx([-c, -0.5 - math.log(2.0) - c], abs=1e-15)


def _heads():
    return {
        "a": CompositeHead("categorical", {"logits": torch.tensor([[0.0, math.log(3.0)]], dtype=torch.float64)}),
        "b": CompositeHead("normal", {"loc": torch.tensor([[0.0, 1.0]]), "scale": torch.tensor([[1.0, 2.0]])}),
    }


def test_aggregate_sums_heads_and_normal_event_dims():
    heads = _heads()
    actions = {"a": torch.tensor([1]), "b": torch.tensor([[0.0, 3.0]])}
    c = 0.5 * math.log(2 * math.pi)
    expected = math.log(0.75) + (-c) + (-0.5 - math.log(2.0) - c)
    assert oracle.aggregate(heads, actions).tolist() == pytest.approx([expected], abs=1e-14)


def test_gradients_by_hand():
    # d log softmax(z)[a] / dz = onehot(a) - softmax(z) = (0, 1) - (1/4, 3/4); weight 2
    # d N(x; mu, s) / d mu = (x - mu) / s^2, / d s = (x - mu)^2 / s^3 - 1 / s
    heads = _heads()
    actions = {"a": torch.tensor([1]), "b": torch.tensor([[0.0, 3.0]])}
    g = oracle.gradients(heads, actions, torch.tensor([2.0]))
    assert g["a"]["logits"].flatten().tolist() == pytest.approx([-0.5, 0.5], abs=1e-14)
    assert g["b"]["loc"].flatten().tolist() == pytest.approx([0.0, 2 * 2 / 4], abs=1e-14)
    assert g["b"]["scale"].flatten().tolist() == pytest.approx([2 * (0 - 1.0), 2 * (4 / 8 - 1 / 2)], abs=1e-14)


def test_diagnose_names_each_wrong_aggregate_and_nothing_for_the_right_one():
    g = torch.Generator().manual_seed(0)
    heads = {"action1": CompositeHead("categorical", {"logits": 2 * torch.randn(6, 8, generator=g)}),
             "action2": CompositeHead("categorical", {"logits": 2 * torch.randn(6, 3, generator=g)})}
    actions = {h: torch.randint(x.params["logits"].shape[-1], (6,), generator=g) for h, x in heads.items()}
    for name, f in oracle.wrong_variants(heads).items():
        if "rl#2487" in name:
            continue  # coincides with the right aggregate when the sample batch is the batch
        assert oracle.diagnose(f(heads, actions, (6,)), heads, actions, (6,)) == name
    assert oracle.diagnose(oracle.aggregate(heads, actions), heads, actions, (6,)) is None
    # rl#2487: a batch_size=[] sample is summed over the batch; [B, 1] actions broadcast to [B, B]
    summed = oracle.aggregate(heads, actions).sum()
    assert "rl#2487" in oracle.diagnose(summed, heads, actions, ())
    trailing = {h: a.unsqueeze(-1) for h, a in actions.items()}
    rows = sum(oracle._stored_as_torch_broadcasts(heads[h], trailing[h]).sum(-1) for h in heads)
    assert "rl#2487" in oracle.diagnose(rows, heads, trailing, (6,))


def test_broadcast_of_a_trailing_singleton_is_the_outer_product():
    head = CompositeHead("categorical", {"logits": torch.log(torch.tensor([[0.5, 0.5], [0.25, 0.75]], dtype=torch.float64))})
    m = oracle._stored_as_torch_broadcasts(head, torch.tensor([[0], [1]]))
    # m[i, j] = log p_j(a_i)
    assert m.flatten().tolist() == pytest.approx([math.log(0.5), math.log(0.25), math.log(0.5), math.log(0.75)])


def test_diagnose_ratio():
    g = torch.Generator().manual_seed(1)
    heads = {"action1": CompositeHead("categorical", {"logits": 2 * torch.randn(5, 8, generator=g)})}
    actions = {"action1": torch.randint(8, (5,), generator=g)}
    stored = {"action1": actions["action1"].unsqueeze(-1)}
    rows = oracle._stored_as_torch_broadcasts(heads["action1"], stored["action1"]).sum(-1)
    right = oracle.aggregate(heads, actions)
    assert oracle.diagnose_ratio(torch.exp(rows - right), heads, stored) == oracle.RATIO_BROADCAST
    assert oracle.diagnose_ratio(torch.exp(rows - right.sum()), heads, stored) == oracle.RATIO_BROADCAST
    assert oracle.diagnose_ratio(torch.ones(5), heads, stored) is None
