"""A Categorical action stored as [B, 1] (the shape a Categorical spec with shape (1,) or an
env that keeps a trailing action dim gives) is broadcast against the [B, n] logits by
CompositeDistribution.log_prob: each head's log-prob is [B, B] and the aggregate sums rows of
other elements' log-probs. ClipPPOLoss re-scores stored actions this way, so the importance
ratio of an unchanged policy is ~1e-13 instead of 1.
"""
import sys

import torch
from tensordict import TensorDict
from tensordict.nn import CompositeDistribution, set_composite_lp_aggregate

B = 4
torch.manual_seed(0)
logits = {"a": torch.randn(B, 3), "b": torch.randn(B, 5)}
actions = {"a": torch.tensor([0, 1, 2, 0]), "b": torch.tensor([4, 3, 2, 1])}
dist = CompositeDistribution(
    TensorDict({k: {"logits": v} for k, v in logits.items()}, [B]),
    distribution_map={"a": torch.distributions.Categorical, "b": torch.distributions.Categorical})

# expected: per element, the sum over heads of Categorical(logits).log_prob(action)
expected = sum(torch.distributions.Categorical(logits=logits[k]).log_prob(actions[k]) for k in logits)
with set_composite_lp_aggregate(True):
    actual = dist.log_prob(TensorDict({k: v[:, None] for k, v in actions.items()}, [B]))

print(f"parameters: CompositeDistribution of 2 Categorical heads, batch [{B}], actions stored "
      f"as [{B}, 1], set_composite_lp_aggregate(True)")
print(f"expected:   {[round(x, 4) for x in expected.tolist()]}  (Categorical(logits).log_prob(action) "
      "summed over the heads)")
print(f"actual:     {[round(x, 4) for x in actual.reshape(-1).tolist()]}  (shape {list(actual.shape)})")
print(f"importance ratio exp(actual - expected) of an unchanged policy: "
      f"{torch.exp(actual.reshape(-1)[:B] - expected).numpy().tolist()}")
if actual.shape != expected.shape or not torch.allclose(actual, expected):
    print("BUG: [B, 1] actions are broadcast to [B, B] log-probs")
    sys.exit(1)
print("ok: [B, 1] actions are scored element by element")
