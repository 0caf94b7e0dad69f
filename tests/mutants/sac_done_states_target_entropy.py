"""The reference's automatic target entropy (``impls/sac_target_entropy.py``) with one edit,
made the way a mutation tool makes them (``tests/mutants/source.py``), each a historical or
plausible way to count the action's dimensions wrongly:

- ``ALWAYS_MINUS_ONE``: the wrapper's shape () is read instead of the action's (torchrl 0.6.0 -
  0.10.1, pytorch/rl#3291);
- ``AGENTS_COUNTED``: the actor's merged spec is read, whose agent group lost its shape (torchrl
  0.14.1 when the spec is given to the actor only);
- ``FIRST_HEAD_ONLY``: only the first head of a composite action is counted (torchrl 0.14.1
  with a summed composite log-probability);
- ``CONTAINER_KEPT``: the group's shape is not subtracted (before pytorch/rl#1494);
- ``LAST_DIM_ONLY``: the last dimension of the event shape only (-3 for (2, 3));
- ``NO_REFUSAL``: an action without a spec anywhere is not refused, so reading its missing
  shape fails inside the property (the user reads "no attribute target_entropy").
"""

from __future__ import annotations

from conformance.implementations.torchrl_areas.sac_done_states import TorchRLSACDoneStates
from tests.mutants import implementation
from tests.mutants.source import mutated_module

IMPORT = "from impls.sac_target_entropy import AutoTargetEntropy\n"
EDITS = {
    "ALWAYS_MINUS_ONE": ("    return container[leaf].shape[container.ndim:].numel()",
                         "    return container.shape[container.ndim:].numel()"),
    "AGENTS_COUNTED": ("        spec = loss.actor_network._last_module.spec",
                       "        spec = loss.actor_network.spec"),
    "FIRST_HEAD_ONLY": ("    return [unravel_key(k) for k in loss.actor_network.dist_sample_keys]",
                        "    return [unravel_key(k) for k in loss.actor_network.dist_sample_keys[:1]]"),
    "CONTAINER_KEPT": ("    return container[leaf].shape[container.ndim:].numel()",
                       "    return container[leaf].shape.numel()"),
    "LAST_DIM_ONLY": ("    return container[leaf].shape[container.ndim:].numel()",
                      "    return container[leaf].shape[-1]"),
    "NO_REFUSAL": ("    if container[leaf] is None:\n        refuse(key)\n", ""),
}


def reference_with_edit(name: str, old: str = "", new: str = ""):
    rule = mutated_module("impls.sac_target_entropy", old, new, tag=name)
    # the loss classes built on the edited mixin (the import names the edited module)
    losses = mutated_module("impls.sac_done_states", IMPORT,
                            f"from {rule.__name__} import AutoTargetEntropy\n", tag=name)
    area = TorchRLSACDoneStates(losses.SACLoss, losses.DiscreteSACLoss,
                                library=f"mutant {name}")
    return implementation(name.lower().replace("_", "-"), sac_done_states=area)


MUTANTS = list(EDITS)
ALWAYS_MINUS_ONE = reference_with_edit("ALWAYS_MINUS_ONE", *EDITS["ALWAYS_MINUS_ONE"])
AGENTS_COUNTED = reference_with_edit("AGENTS_COUNTED", *EDITS["AGENTS_COUNTED"])
FIRST_HEAD_ONLY = reference_with_edit("FIRST_HEAD_ONLY", *EDITS["FIRST_HEAD_ONLY"])
CONTAINER_KEPT = reference_with_edit("CONTAINER_KEPT", *EDITS["CONTAINER_KEPT"])
LAST_DIM_ONLY = reference_with_edit("LAST_DIM_ONLY", *EDITS["LAST_DIM_ONLY"])
NO_REFUSAL = reference_with_edit("NO_REFUSAL", *EDITS["NO_REFUSAL"])
UNMUTATED = reference_with_edit("UNMUTATED")
