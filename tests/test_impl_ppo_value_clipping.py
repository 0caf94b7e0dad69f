"""The reference ClipPPOLoss and clipped_value_loss as drop-ins."""

import pytest
import torch

from impls import ClipPPOLoss, clipped_value_loss


def test_clipped_value_loss_matches_hand_values():
    v, old = torch.tensor([1.0, 0.5]), torch.tensor([5.0, 0.0])
    R = torch.tensor([10.0, 0.0])
    loss, frac = clipped_value_loss(v, old, R, 0.2)
    assert loss.tolist() == pytest.approx([81.0, 0.25])
    assert float(frac) == 1.0


@pytest.mark.parametrize("bad", [-0.1, 0.0, float("nan"), float("inf"), torch.tensor([0.1, 0.2])])
def test_invalid_clip_value_is_rejected_with_a_clear_error(bad):
    from tensordict.nn import TensorDictModule
    from torchrl.modules import ProbabilisticActor

    actor = ProbabilisticActor(TensorDictModule(torch.nn.Linear(1, 2), ["observation"], ["p"]),
                               in_keys={"logits": "p"}, distribution_class=torch.distributions.Categorical)
    critic = TensorDictModule(torch.nn.Linear(1, 1), ["observation"], ["state_value"])
    with pytest.raises(ValueError, match="clip_value"):
        ClipPPOLoss(actor, critic, clip_value=bad)


def test_unknown_critic_loss_type_is_named():
    with pytest.raises(ValueError, match="loss_critic_type"):
        clipped_value_loss(torch.zeros(1), torch.zeros(1), torch.zeros(1), 0.1, "huber2")
