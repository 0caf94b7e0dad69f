"""The reference ClipPPOLoss and clipped_value_loss as drop-ins."""

import pytest
import torch

from impls import ClipPPOLoss, clipped_value_loss


def test_clipped_value_loss_matches_hand_values():
    v, old = torch.tensor([1.0, 0.5]), torch.tensor([5.0, 0.0])
    R = torch.tensor([10.0, 0.0])
    loss, frac = clipped_value_loss(v, old, R, 0.2, "l2")
    assert loss.tolist() == pytest.approx([81.0, 0.25])
    assert float(frac) == 1.0


@pytest.mark.parametrize("bad", [-0.1, -0.0001, float("nan"), float("inf"), torch.tensor([0.1, 0.2])])
def test_invalid_clip_value_is_rejected_with_a_clear_error(bad):
    from tensordict.nn import TensorDictModule
    from torchrl.modules import ProbabilisticActor

    actor = ProbabilisticActor(TensorDictModule(torch.nn.Linear(1, 2), ["observation"], ["p"]),
                               in_keys={"logits": "p"}, distribution_class=torch.distributions.Categorical)
    critic = TensorDictModule(torch.nn.Linear(1, 1), ["observation"], ["state_value"])
    with pytest.raises(ValueError, match="clip_value"):
        ClipPPOLoss(actor, critic, clip_value=bad)


def test_unknown_critic_loss_type_is_named():
    """The distance is TorchRL's (``distance_loss``): an unknown name raises its
    NotImplementedError naming it, as upstream's ClipPPOLoss does."""
    with pytest.raises(NotImplementedError, match="huber2"):
        clipped_value_loss(torch.zeros(1), torch.zeros(1), torch.zeros(1), 0.1, "huber2")


def test_the_missing_stored_value_message_is_torchrls():
    """TorchRL's own test (test/objectives/test_ppo.py::TestPPO::test_ppo_value_clipping)
    matches this message; the reference keeps it word for word."""
    from tensordict import TensorDict
    from tensordict.nn import TensorDictModule
    from torchrl.modules import ProbabilisticActor

    actor = ProbabilisticActor(TensorDictModule(torch.nn.Linear(1, 2), ["observation"], ["p"]),
                               in_keys={"logits": "p"}, distribution_class=torch.distributions.Categorical)
    critic = TensorDictModule(torch.nn.Linear(1, 1), ["observation"], ["state_value"])
    loss = ClipPPOLoss(actor, critic, clip_value=0.5)
    td = TensorDict({"observation": torch.zeros(3, 1), "value_target": torch.zeros(3, 1)}, [3])
    with pytest.raises(KeyError, match=f"clip_value is set to {loss.clip_value}, but the key "
                       "state_value was not found in the input tensordict. Make sure that the.*"
                       "passed to PPO exists in the input tensordict."):
        loss.loss_critic(td)


def test_zero_clip_value_means_off_as_in_torchrl():
    """TorchRL treats ``clip_value=0.0`` as "no value clipping"; configs written for it must
    keep working: the critic loss is the plain squared error, computed here by hand."""
    from tensordict import TensorDict
    from tensordict.nn import TensorDictModule
    from torchrl.modules import ProbabilisticActor

    torch.manual_seed(0)
    actor = ProbabilisticActor(TensorDictModule(torch.nn.Linear(3, 2), ["observation"], ["logits"]),
                               in_keys=["logits"], distribution_class=torch.distributions.Categorical,
                               return_log_prob=True)
    critic = TensorDictModule(torch.nn.Linear(3, 1), ["observation"], ["state_value"])
    n = 8
    td = TensorDict({"observation": torch.randn(n, 3), "action": torch.randint(2, (n,)),
                     "action_log_prob": torch.full((n,), -0.7), "advantage": torch.randn(n, 1),
                     "value_target": torch.randn(n, 1), "state_value": torch.randn(n, 1)}, [n])
    loss = ClipPPOLoss(actor, critic, clip_value=0.0, loss_critic_type="l2")
    out = loss(td)
    with torch.no_grad():
        expected = ((critic.module(td["observation"]) - td["value_target"]) ** 2).mean()
    assert float(out["loss_critic"]) == pytest.approx(float(expected) * float(loss.critic_coeff),
                                                      rel=1e-5)
    assert "value_clip_fraction" not in out.keys()
