"""The reference CompositeDistribution as a drop-in, with TorchRL's own ProbabilisticActor and
ClipPPOLoss (and the reference ProbabilisticActor)."""

import warnings

import pytest
import torch
from tensordict import TensorDict
from tensordict.nn import CompositeDistribution as TensorDictComposite
from tensordict.nn import TensorDictModule, set_composite_lp_aggregate
from torch.distributions import Categorical, Normal

from impls import CompositeDistribution, ProbabilisticActor, composite_sample_keys

B, T = 6, 3
NESTED = {"action1": ("action", "action1"), "action2": ("action", "action2")}


def _params(batch=(B,), seed=0):
    g = torch.Generator().manual_seed(seed)
    return TensorDict({"action1": {"logits": torch.randn(*batch, 8, generator=g)},
                       "action2": {"logits": torch.randn(*batch, 3, generator=g)}}, list(batch))


def _dist(params):
    return CompositeDistribution(params, distribution_map={"action1": Categorical, "action2": Categorical},
                                 name_map=NESTED)


def _raw(params, a1, a2):
    """sum of log_softmax gathers: the joint log-prob by hand."""
    return sum(torch.log_softmax(params[h, "logits"], -1).gather(-1, a.unsqueeze(-1)).squeeze(-1)
               for h, a in (("action1", a1), ("action2", a2)))


def _actions(batch=(B,), seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(8, batch, generator=g), torch.randint(3, batch, generator=g)


def test_is_a_tensordict_composite_distribution():
    # TorchRL's losses switch on isinstance(dist, tensordict.nn.CompositeDistribution)
    assert isinstance(_dist(_params()), TensorDictComposite)


@pytest.mark.parametrize("sample_batch", [(B,), ()], ids=["sample-batch=[B]", "sample-batch=[]"])
def test_aggregate_has_the_distribution_batch_shape(sample_batch):
    params, (a1, a2) = _params(), _actions()
    sample = TensorDict({"action": {"action1": a1, "action2": a2}}, list(sample_batch))
    with set_composite_lp_aggregate(True):
        lp = _dist(params).log_prob(sample)
    torch.testing.assert_close(lp, _raw(params, a1, a2))


def test_fewer_sample_dims_than_the_distribution_are_not_summed_over():
    params, (a1, a2) = _params((B, T)), _actions((B, T))
    sample = TensorDict({"action": {"action1": a1, "action2": a2}}, [B])
    with set_composite_lp_aggregate(True):
        lp = _dist(params).log_prob(sample)
    assert lp.shape == (B, T)
    torch.testing.assert_close(lp, _raw(params, a1, a2))


def test_trailing_singleton_actions_are_not_broadcast():
    params, (a1, a2) = _params(), _actions()
    sample = TensorDict({"action": {"action1": a1[:, None], "action2": a2[:, None]}}, [B])
    dist = _dist(params)
    with set_composite_lp_aggregate(True):
        torch.testing.assert_close(dist.log_prob(sample), _raw(params, a1, a2))
    with set_composite_lp_aggregate(False):
        per_head = dist.log_prob(sample)
    assert per_head["action", "action1_log_prob"].shape == (B,)


def test_normal_head_keeps_its_elementwise_log_prob_and_is_summed_in_the_aggregate():
    g = torch.Generator().manual_seed(2)
    params = TensorDict({"c": {"logits": torch.randn(B, 4, generator=g)},
                         "n": {"loc": torch.randn(B, 2, generator=g), "scale": torch.ones(B, 2)}}, [B])
    dist = CompositeDistribution(params, distribution_map={"c": Categorical, "n": Normal})
    sample = TensorDict({"c": torch.randint(4, (B,), generator=g), "n": torch.randn(B, 2, generator=g)}, [B])
    with set_composite_lp_aggregate(False):
        per_head = dist.log_prob(sample)
    assert per_head["n_log_prob"].shape == (B, 2)
    with set_composite_lp_aggregate(True):
        agg = dist.log_prob(sample.clone())
    torch.testing.assert_close(agg, per_head["c_log_prob"] + per_head["n_log_prob"].sum(-1))


def test_log_prob_composite_include_sum_in_place():
    params, (a1, a2) = _params(), _actions()
    sample = TensorDict({"action": {"action1": a1, "action2": a2}}, [B])
    with set_composite_lp_aggregate(True):
        out = _dist(params).log_prob_composite(sample)
    assert out is sample
    torch.testing.assert_close(out["sample_log_prob"], _raw(params, a1, a2))


@pytest.mark.parametrize(("name_map", "match"), [
    ({"action1": ("action", "action1"), "actionX": ("action", "action2")}, "'actionX'"),
    ({"action1": ("action", "action1")}, "no entry for head 'action2'"),
    ({"action1": ("action", "a"), "action2": ("action", "a")}, "same key"),
])
def test_name_map_is_validated(name_map, match):
    with pytest.raises(KeyError, match=match):
        CompositeDistribution(_params(), distribution_map={"action1": Categorical, "action2": Categorical},
                              name_map=name_map)


def test_missing_parameters_name_the_head():
    with pytest.raises(KeyError, match="head 'action3'"):
        CompositeDistribution(_params(), distribution_map={"action1": Categorical, "action3": Categorical})


def test_missing_sample_entry_names_the_key():
    sample = TensorDict({"action": {"action1": _actions()[0]}}, [B])
    with set_composite_lp_aggregate(True), pytest.raises(KeyError, match="'action2'"):
        _dist(_params()).log_prob(sample)


def test_sample_keys_without_name_map_are_the_heads():
    assert composite_sample_keys({"a": Categorical, ("n", "b"): Normal}) == {"a": "a", ("n", "b"): ("n", "b")}


def test_mean_of_a_categorical_head_is_refused_naming_it():
    with pytest.raises(ValueError, match="'action1'"):
        _dist(_params()).mean  # noqa: B018 - the property raises


def test_deterministic_sample_is_argmax_without_warnings():
    params = _params()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        det = _dist(params).deterministic_sample
    assert torch.equal(det["action", "action1"], params["action1", "logits"].argmax(-1))


# ---------------------------------------------------------------- with TorchRL's classes

def _module():
    return TensorDictModule(lambda o1, o2: (o1, o2), in_keys=[("obs", "a1"), ("obs", "a2")],
                            out_keys=[("params", "action1", "logits"), ("params", "action2", "logits")])


def _obs(seed=3):
    g = torch.Generator().manual_seed(seed)
    return TensorDict({"obs": {"a1": torch.randn(B, 8, generator=g), "a2": torch.randn(B, 3, generator=g)}}, [B])


def _actor(actor_cls, **kw):
    return actor_cls(_module(), in_keys=["params"], distribution_class=CompositeDistribution,
                     distribution_kwargs={"distribution_map": {"action1": Categorical, "action2": Categorical},
                                          "name_map": NESTED},
                     return_log_prob=True, **kw)


@pytest.mark.parametrize("aggregate", [False, True], ids=lambda a: f"aggregate={a}")
def test_torchrl_probabilistic_actor_runs_with_the_reference(aggregate):
    from torchrl.envs.utils import ExplorationType, set_exploration_type
    from torchrl.modules import ProbabilisticActor as TorchRLActor

    with set_composite_lp_aggregate(aggregate):
        # upstream infers out_keys only for tensordict's class itself, so they are given
        actor = _actor(TorchRLActor, out_keys=list(NESTED.values()))
        for exploration in (ExplorationType.RANDOM, ExplorationType.DETERMINISTIC):
            with set_exploration_type(exploration):
                out = actor(_obs())
            expected = _raw(out["params"], out["action", "action1"], out["action", "action2"])
            got = out["action", "action1_log_prob"] + out["action", "action2_log_prob"]
            torch.testing.assert_close(got, expected)
            if aggregate:
                torch.testing.assert_close(out["sample_log_prob"], expected)


def test_reference_actor_infers_and_checks_out_keys():
    assert _actor(ProbabilisticActor).module[-1].dist_sample_keys == list(NESTED.values())
    with pytest.raises(KeyError, match="'action1'"):
        ProbabilisticActor(_module(), in_keys=["params"], out_keys=list(NESTED.values()),
                           distribution_class=CompositeDistribution,
                           distribution_kwargs={"distribution_map": {"action1": Categorical,
                                                                     "action2": Categorical}},
                           return_log_prob=True)


def test_out_keys_mismatch_with_a_name_map_does_not_ask_for_a_name_map():
    """With a name_map given, the error names where it writes the samples, instead of asking
    for the name_map the user already passed."""
    with pytest.raises(KeyError) as info:
        ProbabilisticActor(_module(), in_keys=["params"], out_keys=["action"],
                           distribution_class=CompositeDistribution,
                           distribution_kwargs={"distribution_map": {"action1": Categorical,
                                                                     "action2": Categorical},
                                                "name_map": NESTED},
                           return_log_prob=True)
    message = str(info.value)
    assert "pass a name_map" not in message
    assert "('action', 'action1')" in message and f"(name_map={NESTED})" in message


@pytest.mark.parametrize("trailing", [False, True], ids=lambda t: f"trailing-singleton={t}")
def test_clip_ppo_loss_ratio_is_one_for_an_unchanged_policy(trailing):
    from torchrl.envs.utils import ExplorationType, set_exploration_type
    from torchrl.modules import ProbabilisticActor as TorchRLActor
    from torchrl.objectives import ClipPPOLoss

    with set_composite_lp_aggregate(False):
        torch.manual_seed(0)
        actor = _actor(TorchRLActor, out_keys=list(NESTED.values()))
        with set_exploration_type(ExplorationType.RANDOM), torch.no_grad():
            data = actor(_obs())
        if trailing:
            for k in NESTED.values():
                data[k] = data[k].unsqueeze(-1)
        advantage = torch.linspace(-1.0, 2.0, B).unsqueeze(-1)
        data["advantage"] = advantage
        data["value_target"] = torch.zeros(B, 1)
        critic = TensorDictModule(lambda x: x[..., :1] * 0, in_keys=[("obs", "a1")], out_keys=["state_value"])
        loss = ClipPPOLoss(actor, critic, entropy_bonus=True)
        loss.set_keys(action=list(NESTED.values()),
                      sample_log_prob=[("action", "action1_log_prob"), ("action", "action2_log_prob")])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = loss(data)
    assert float(out["kl_approx"]) == 0.0 and float(out["clip_fraction"]) == 0.0
    torch.testing.assert_close(out["loss_objective"], -advantage.mean())
    assert torch.isfinite(out["entropy"]).all()


def test_out_of_range_action_is_refused_naming_the_head():
    a1, a2 = _actions()
    a2[0] = 3  # action2 has 3 categories
    sample = TensorDict({"action": {"action1": a1, "action2": a2}}, [B])
    with set_composite_lp_aggregate(True), pytest.raises(ValueError, match="'action2'"):
        _dist(_params()).log_prob(sample)
