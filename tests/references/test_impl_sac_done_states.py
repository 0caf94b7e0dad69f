"""Unit tests of the reference SAC losses (impls.sac_done_states), including drop-in use with TorchRL."""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torchrl.modules import MLP, OneHotCategorical, ProbabilisticActor, TanhNormal
from torchrl.objectives import SACLoss as UpstreamSACLoss
from torchrl.objectives import SoftUpdate

from impls import DiscreteSACLoss, SACLoss
from impls.sac_done_states import align_mask

B, OBS, A, NA = 6, 4, 2, 3
pytestmark = pytest.mark.filterwarnings("ignore:No target network updater")


class LocScale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = MLP(in_features=OBS, out_features=2 * A, num_cells=[8])

    def forward(self, obs):
        loc, s = self.net(obs).chunk(2, -1)
        return loc, torch.nn.functional.softplus(s) + 1e-2


class FixedBatch(torch.nn.Module):
    def __init__(self, inner, batch):
        super().__init__()
        self.inner, self.batch = inner, batch

    def forward(self, obs):
        assert obs.shape[:-1] == self.batch, f"batch {tuple(obs.shape[:-1])}"
        assert not torch.isnan(obs).any(), "NaN observation"
        return self.inner(obs)


def _continuous(cls=SACLoss, wrap=lambda m: m, **kw):
    torch.manual_seed(0)
    actor = ProbabilisticActor(
        TensorDictModule(wrap(LocScale()), ["observation"], ["loc", "scale"]),
        in_keys=["loc", "scale"], distribution_class=TanhNormal,
        distribution_kwargs={"low": -1.0, "high": 1.0},
    )
    q = TensorDictModule(
        MLP(in_features=OBS + A, out_features=1, num_cells=[8]), ["observation", "action"],
        ["state_action_value"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(actor, q, target_entropy=-float(A), **kw)


def _batch(seed=1, terminated_rows=(1,), truncated_rows=(), nan=False):
    g = torch.Generator().manual_seed(seed)
    nobs = torch.randn(B, OBS, generator=g)
    term = torch.zeros(B, 1, dtype=torch.bool)
    term[list(terminated_rows)] = True
    done = term.clone()
    done[list(truncated_rows)] = True
    if nan:
        nobs[term.squeeze(-1)] = math.nan
    return TensorDict({
        "observation": torch.randn(B, OBS, generator=g),
        "action": torch.rand(B, A, generator=g) * 2 - 1,
        "next": {"observation": nobs, "reward": torch.randn(B, 1, generator=g),
                 "done": done, "terminated": term},
    }, [B])


def test_drop_in_training_step_with_target_updater():
    loss = _continuous(skip_done_states=True)
    updater = SoftUpdate(loss, eps=0.9)
    opt = torch.optim.Adam(loss.parameters(), lr=1e-2)
    td = _batch(nan=True)
    before = [p.clone() for p in loss.qvalue_network_params.values(True, True)]
    out = loss(td)
    assert set(out.keys()) >= {"loss_actor", "loss_qvalue", "loss_alpha", "alpha", "entropy"}
    total = out["loss_actor"] + out["loss_qvalue"] + out["loss_alpha"]
    assert torch.isfinite(total)
    total.backward()
    opt.step()
    updater.step()
    after = list(loss.qvalue_network_params.values(True, True))
    assert any(not torch.equal(a, b) for a, b in zip(after, before, strict=True))
    assert isinstance(loss, UpstreamSACLoss)


def test_flag_off_is_upstream_number_for_number():
    td = _batch(truncated_rows=(3,))
    ours, theirs = _continuous(), _continuous(UpstreamSACLoss)
    theirs.load_state_dict(ours.state_dict())
    assert ours.skip_done_states is False
    torch.manual_seed(5)
    a = ours(td.clone())
    torch.manual_seed(5)
    b = theirs(td.clone())
    for key in ("loss_actor", "loss_qvalue", "loss_alpha"):
        assert torch.equal(a[key], b[key]), key


def test_skip_keeps_shapes_and_leaves_the_input_alone():
    loss = _continuous(skip_done_states=True, wrap=lambda m: FixedBatch(m, (B,)))
    td = _batch(terminated_rows=(0, 4), truncated_rows=(2,), nan=True)
    snapshot = td.clone()
    out = loss(td)  # the actor asserts the full batch shape and no NaN
    assert torch.isfinite(out["loss_qvalue"])
    assert set(td["next"].keys(True, True)) == set(snapshot["next"].keys(True, True))
    assert torch.equal(td["next", "observation"].nan_to_num(7.0),
                       snapshot["next", "observation"].nan_to_num(7.0))


def test_skip_true_equals_skip_false_when_networks_are_defined_everywhere():
    td = _batch(terminated_rows=(0, 4), truncated_rows=(2,))
    on, off = _continuous(skip_done_states=True), _continuous(skip_done_states=False)
    off.load_state_dict(on.state_dict())
    torch.manual_seed(3)
    a = on(td.clone())
    torch.manual_seed(3)
    b = off(td.clone())
    for key in ("loss_actor", "loss_qvalue"):
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0)


@pytest.mark.parametrize(("mask_shape", "leaf_shape", "expected"), [
    ((4, 1), (4, 5), [True, False, True, False]),
    ((4, 3, 1), (4, 3, 5), None),
    ((4, 3, 1), (4, 7), [True, False, False, False]),  # a per-row input: all agents terminated
    ((4,), (4, 3, 1), [True, False, True, False]),
])
def test_align_mask(mask_shape, leaf_shape, expected):
    mask = torch.zeros(mask_shape, dtype=torch.bool)
    if len(mask_shape) == 3:
        mask[0] = True
        mask[2, 1] = True
    else:
        mask[0] = mask[2] = True
    out = align_mask(mask, torch.Size(leaf_shape))
    assert out.shape == torch.Size(leaf_shape)
    if expected is None:
        assert torch.equal(out[..., 0], mask.squeeze(-1))
    else:
        assert out.reshape(leaf_shape[0], -1)[:, 0].tolist() == expected


class MaskedLogits(torch.nn.Module):
    """Action 0 is impossible (probability exactly 0)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(OBS, NA)

    def forward(self, obs):
        logits = self.lin(obs)
        return torch.cat([torch.full_like(logits[..., :1], -math.inf), logits[..., 1:]], -1)


@pytest.mark.parametrize("skip", [False, True])
def test_discrete_target_is_exact_with_impossible_actions(skip):
    torch.manual_seed(0)
    actor = ProbabilisticActor(TensorDictModule(MaskedLogits(), ["observation"], ["logits"]),
                               in_keys=["logits"], distribution_class=OneHotCategorical)
    q = TensorDictModule(torch.nn.Linear(OBS, NA), ["observation"], ["action_value"])
    loss, other = (DiscreteSACLoss(actor, q, action_space="one-hot", num_actions=NA,
                                   skip_done_states=flag) for flag in (skip, not skip))
    other.load_state_dict(loss.state_dict())
    td = _batch(nan=skip)  # terminal NaN next states only where they are skipped
    td["action"] = torch.nn.functional.one_hot(torch.arange(B) % NA, NA).float()
    target = loss._compute_target(td)
    assert torch.isfinite(target).all()
    # rows without a terminal next state: the same value whichever mode
    td["next", "observation"] = td["next", "observation"].nan_to_num(0.0)
    keep = ~td["next", "terminated"].squeeze(-1)
    torch.testing.assert_close(target[keep], other._compute_target(td)[keep])


# ---------------------------------------------------------------- the adapter on old releases


class NoFlagSACLoss(UpstreamSACLoss):
    """The constructor of torchrl <= 0.6 (no skip_done_states, no **kwargs)."""

    def __init__(self, actor_network, qvalue_network, *, num_qvalue_nets=2,
                 loss_function="smooth_l1", alpha_init=1.0, fixed_alpha=False,
                 target_entropy="auto"):
        super().__init__(actor_network, qvalue_network, num_qvalue_nets=num_qvalue_nets,
                         loss_function=loss_function, alpha_init=alpha_init,
                         fixed_alpha=fixed_alpha, target_entropy=target_entropy)


class ForwardingSACLoss(SACLoss):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)


def test_adapter_detects_the_flag_and_names_the_release_without_it():
    from conformance.implementations.torchrl_areas.sac_done_states import (
        TorchRLSACDoneStates,
        accepts,
    )
    from conformance.test_sac_done_states import ALPHA, GAMMA, batch, networks

    assert accepts(SACLoss, "skip_done_states") and accepts(DiscreteSACLoss, "skip_done_states")
    assert accepts(ForwardingSACLoss, "skip_done_states")
    assert not accepts(NoFlagSACLoss, "skip_done_states")
    area = TorchRLSACDoneStates(NoFlagSACLoss, None, library="torchrl 0.6.0")
    nets, _ = networks("continuous")
    b = batch("continuous", "single", "mixed")
    with pytest.raises(AssertionError, match=r"no skip_done_states argument \(added in torchrl 0.7.0"):
        area.loss(networks=nets, batch=b, skip_done_states=True, alpha=ALPHA, gamma=GAMMA,
                  target_entropy=-1.5)
    out = area.loss(networks=nets, batch=b, skip_done_states=None, alpha=ALPHA, gamma=GAMMA,
                    target_entropy=-1.5)
    assert set(out.losses) == {"loss_actor", "loss_qvalue", "loss_alpha"}


@pytest.mark.slow
def test_discrete_sac_select_out_keys_before_torchrl_class_is_ever_built():
    """A fresh interpreter, where TorchRL's DiscreteSACLoss was never instantiated (tensordict
    converts its class-level out_keys list lazily): select_out_keys must work."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent('''
        import warnings
        warnings.simplefilter("ignore")
        import torch
        from tensordict.nn import TensorDictModule
        from torchrl.data import OneHot
        from torchrl.modules import OneHotCategorical, ProbabilisticActor
        from impls import DiscreteSACLoss
        actor = ProbabilisticActor(TensorDictModule(torch.nn.Linear(3, 4), ["observation"],
                                                    ["logits"]), in_keys=["logits"],
                                   distribution_class=OneHotCategorical, spec=OneHot(4))
        q = TensorDictModule(torch.nn.Linear(3, 4), ["observation"], ["action_value"])
        loss = DiscreteSACLoss(actor, q, num_actions=4, action_space="one-hot")
        loss.select_out_keys("loss_actor", "loss_alpha")
        print(loss.out_keys)
    ''')
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "['loss_actor', 'loss_alpha']"
