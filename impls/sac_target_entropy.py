"""SAC's automatic target entropy, ``-dim(A)``, for every action TorchRL's SAC takes.

A mixin of ``impls.SACLoss`` (torchrl 0.14). Upstream's ``target_entropy="auto"`` subtracts the
action's container shape (the agents' group, pytorch/rl#1494) and sums the leaves of a
composite spec (pytorch/rl#3312), but:

- with no ``action_spec`` it reads the actor's merged ``spec``, where the agents' group has lost
  its shape (``ProbabilisticActor`` rebuilds the group as a ``Composite`` of shape ()): the
  agents are counted as action dimensions (-N * dim(A));
- a composite actor reports one sample key per head: upstream keys the action by the first of
  them when the log-probabilities are aggregated (one head counted), and by the list of them
  otherwise, which its constructor cannot hash (``_set_in_keys``: TypeError).

Here the spec is the one the loss is given, else the one of the module that writes the action
(the probabilistic module, which keeps the group's shape), and every head the actor draws is
counted: ``-(sum over the sample keys of the number of elements of one agent's action)``.

What is fixed is the construction and the target entropy. A forward pass of a composite actor
with several heads keyed by a list is not: no spec exercises one, and upstream does not run it
either (it cannot build the loss).

An action without a spec anywhere (neither the loss's ``action_spec`` nor the actor's ``spec``)
is refused as upstream refuses it: a RuntimeError that names ``target_entropy`` and the spec to
give (an AttributeError raised inside the property would reach the user as the loss "having no
attribute target_entropy").
"""

from __future__ import annotations

import torch
from tensordict import unravel_key


def action_keys(loss) -> list:
    """Every key the actor draws an action at (``dist_sample_keys``: each head of a composite
    actor). The loss's own action key is not read: for a composite actor it is the first head
    when the log-probabilities are aggregated, the list of heads otherwise."""
    return [unravel_key(k) for k in loss.actor_network.dist_sample_keys]


def _one_agents_elements(spec, key) -> int:
    """The elements of one agent's action at ``key``: the leaf's shape past the shape of the
    composite holding it (the agents' group, or the root)."""
    *group, leaf = key if isinstance(key, tuple) else (key,)
    # the root is the spec itself: indexing it by () would compute every entry's shape, and a
    # spec-less entry (None) has none
    container = spec[tuple(group)] if group else spec
    if container[leaf] is None:
        refuse(key)
    return container[leaf].shape[container.ndim:].numel()


def refuse(key) -> None:
    raise RuntimeError(
        f"target_entropy='auto' needs the spec of the action at {key!r}, and neither the loss "
        "(action_spec=...) nor the actor (spec=...) has one: give one of them the action's "
        "spec, or pass target_entropy explicitly")


def action_dimensions(loss) -> int:
    """The spec given to the loss, else the one of the module that draws the action (the
    actor's last: it keeps the group's shape, which the actor's merged spec loses). A spec
    without an action entry raises torchrl's KeyError naming it."""
    from torchrl.data import Composite

    keys = action_keys(loss)
    spec = loss._action_spec
    if spec is None:
        spec = loss.actor_network._last_module.spec
    if not isinstance(spec, Composite):
        spec = Composite({keys[0]: spec})
    return sum(_one_agents_elements(spec, key) for key in keys)


class AutoTargetEntropy:
    """``target_entropy="auto"`` as ``-dim(A)``, every head and no agent counted."""

    @property
    def target_entropy(self):
        held = self._buffers.get("_target_entropy", None)
        if held is not None:
            return held
        value = self._target_entropy
        if isinstance(value, str) and value == "auto":
            value = -float(action_dimensions(self))
        device = next(self.parameters()).device
        delattr(self, "_target_entropy")
        self.register_buffer("_target_entropy", torch.tensor(value, device=device))
        return self._target_entropy

    def _set_in_keys(self):
        """Upstream's keys with a composite actor's list of action keys spread out (a list
        cannot be hashed into upstream's set)."""
        key = self.tensor_keys.action
        if not isinstance(key, list):
            return super()._set_in_keys()
        try:
            self.tensor_keys.action = key[0]
            super()._set_in_keys()
        finally:
            self.tensor_keys.action = key
        self._in_keys = list(dict.fromkeys([*self._in_keys, *map(unravel_key, key)]))
        return None
