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
"""

from __future__ import annotations

import torch
from tensordict import unravel_key


def _spec_of_the_action(actor, keys):
    """The spec of the module that writes the action (it keeps the groups' shapes), else the
    actor's own."""
    modules = list(getattr(actor, "module", []))
    for module in reversed(modules):
        spec = getattr(module, "spec", None)
        if spec is not None and all(_has(spec, k) for k in keys):
            return spec
    return getattr(actor, "spec", None)


def _has(spec, key) -> bool:
    try:
        return spec[key] is not None
    except (KeyError, IndexError, TypeError):
        return False


def _elements(spec, container) -> int:
    """The elements of one agent's action in ``spec`` (a leaf, or a composite of leaves)."""
    from torchrl.data import Composite

    if isinstance(spec, Composite):
        return sum(_elements(s, container) for s in spec.values() if s is not None)
    return spec.shape[len(container):].numel()


def action_keys(loss) -> list:
    """Every key the actor draws an action at: all the heads of a composite actor, else the
    loss's action key."""
    heads = [unravel_key(k) for k in getattr(loss.actor_network, "dist_sample_keys", []) or []]
    if len(heads) > 1:
        return heads
    key = loss.tensor_keys.action
    return [unravel_key(k) for k in key] if isinstance(key, list) else [unravel_key(key)]


def action_dimensions(loss) -> int:
    from torchrl.data import Composite

    keys = action_keys(loss)
    spec = loss._action_spec
    if spec is None:
        spec = _spec_of_the_action(loss.actor_network, keys)
    if spec is None:
        raise RuntimeError(
            "Cannot infer the dimensionality of the action. Consider providing the target "
            "entropy explicitly or provide the spec of the action tensor in the actor network.")
    if not isinstance(spec, Composite):
        if len(keys) != 1:
            raise RuntimeError(f"one action spec for {len(keys)} action keys {keys}")
        spec = Composite({keys[0]: spec})
    total = 0
    for key in keys:
        if not _has(spec, key):
            raise RuntimeError(f"the action spec has no entry {key!r}: give action_spec= or "
                               "target_entropy= to the loss")
        container = spec[key[:-1]].shape if isinstance(key, tuple) and len(key) > 1 else spec.shape
        total += _elements(spec[key], container)
    return total


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
