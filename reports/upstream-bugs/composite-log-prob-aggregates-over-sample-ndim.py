"""CompositeDistribution.log_prob aggregates over the sample tensordict's batch dims instead of
the distribution's: the same [B] actions in a sample whose batch_size is [] (a tensordict
built without a batch size, or a sub-tensordict of a MARL batch) give one scalar, the sum over
the batch, instead of B per-element log-probs.
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

# expected: the sum over heads of each head's own log-prob, computed with torch.distributions
expected = sum(torch.distributions.Categorical(logits=logits[k]).log_prob(actions[k]) for k in logits)
with set_composite_lp_aggregate(True):
    actual = dist.log_prob(TensorDict(actions, batch_size=[]))

print(f"parameters: CompositeDistribution of 2 Categorical heads, batch [{B}], "
      "sample TensorDict(actions, batch_size=[]), set_composite_lp_aggregate(True)")
print(f"expected:   shape {list(expected.shape)} {[round(x, 4) for x in expected.tolist()]}  "
      "(Categorical(logits).log_prob(action) summed over the heads)")
print(f"actual:     shape {list(actual.shape)} {[round(x, 4) for x in actual.reshape(-1).tolist()]}")
if actual.shape != expected.shape or not torch.allclose(actual, expected):
    print("BUG: the aggregate depends on the sample's batch_size (summed over the batch)")
    sys.exit(1)
print("ok: one log-prob per batch element, whatever the sample's batch_size")
