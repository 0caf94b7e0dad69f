"""Equivalence probes for the mutants of ``impls/ppo_value_clipping.py`` that
``tests/mutants/classified/ppo_value_clipping.json`` classifies as *equivalent*: each applies the
very edit mutmut made and shows that nothing a caller can observe changes, on seeded inputs,
in every combination of the options the edit could matter for (clipping on and off,
``separate_losses``, ``functional``, a trunk shared with the policy or not). Observed: the critic
loss, the clip fraction, the explained variance, the gradients of the critic's head and of the
trunk, and the trunk after the call (same Parameter objects, same values)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from conformance.implementations.torchrl_areas.ppo_value_clipping import PPOLossFamilyCritic
from conformance.interface import PPO_LOSS_CLASSES
from tests.mutants.source import mutated_module

#: the edits, as mutmut made them (``python -m tests.mutants.mutation`` prints the same diffs)
EDITS = {
    # the stored value fetched although clipping is off: ClipPPOLoss's _critic_loss_inputs is
    # the identity and the unclipped loss never reads it
    "old-value-fetched-when-off": (
        "old_value = tensordict.get(keys.value) if self.clip_value else None",
        "old_value = tensordict.get(keys.value) if (self.clip_value) or True else None"),
    # tensordict's preserve_module_state (default True) keeps Parameter registrations while the
    # functional copies are written in: the leaves written in are the loss's own Parameters, or
    # detached tensors for the parameters shared with the policy (separate_losses), and a
    # gradient that reaches a temporary registration never reaches the caller's module
    "functional-preserve-None": (
        "preserve_module_state=False)\n        if not self.separate_losses",
        "preserve_module_state=None)\n        if not self.separate_losses"),
    "functional-preserve-default": (
        "self.critic_network,\n"
        "                                                        preserve_module_state=False)",
        "self.critic_network,\n                                                        )"),
    "functional-preserve-True": (
        "preserve_module_state=False)\n        if not self.separate_losses",
        "preserve_module_state=True)\n        if not self.separate_losses"),
    "shared-detached-preserve-None": (
        "return params.to_module(self.critic_network, preserve_module_state=False)",
        "return params.to_module(self.critic_network, preserve_module_state=None)"),
    "shared-detached-preserve-default": (
        "return params.to_module(self.critic_network, preserve_module_state=False)",
        "return params.to_module(self.critic_network, )"),
    "shared-detached-preserve-True": (
        "return params.to_module(self.critic_network, preserve_module_state=False)",
        "return params.to_module(self.critic_network, preserve_module_state=True)"),
}

CASES = list(itertools.product([None, 0.25], [True, False], [True, False], [True, False]))


def _area(name, old="", new=""):
    module = mutated_module("impls.ppo_value_clipping", old, new, tag=f"probe_{name}")
    family = {cls: getattr(module, cls) for cls in PPO_LOSS_CLASSES}
    return PPOLossFamilyCritic(module.ClipPPOLoss, family)


def _linear():
    net = torch.nn.Linear(1, 1, dtype=torch.float64)
    with torch.no_grad():
        net.weight.fill_(1.0)
        net.bias.fill_(0.0)
    return net


def _observe(area, clip_value, separate_losses, functional, shared):
    rng = np.random.default_rng(31)
    old = rng.normal(0.0, 2.0, 32)
    v, R = old + rng.normal(0.0, 1.0, 32), old + rng.normal(0.0, 3.0, 32)
    col = lambda x: torch.as_tensor(x).reshape(-1, 1)  # noqa: E731
    trunk, head = _linear(), _linear()
    before = list(trunk.parameters())
    report = area.critic_loss_with(
        value_net=torch.nn.Sequential(trunk, head), observation=col(v), old_value=col(old),
        returns=col(R), clip_value=clip_value, critic_coeff=1.0, log_explained_variance=True,
        separate_losses=separate_losses, shared=trunk if shared else None, functional=functional)
    report.loss.backward()
    grads = [None if p.grad is None else p.grad.clone() for p in (*trunk.parameters(),
                                                                  *head.parameters())]
    return {"loss": float(report.loss.detach()), "clip_fraction": report.value_clip_fraction,
            "explained_variance": report.explained_variance.tolist(),
            "grads": [None if g is None else g.tolist() for g in grads],
            "trunk_same": all(a is b for a, b in zip(trunk.parameters(), before, strict=True)),
            "trunk": [p.detach().tolist() for p in trunk.parameters()]}


@pytest.fixture(scope="module")
def reference():
    area = _area("unmutated")
    return {case: _observe(area, *case) for case in CASES}


@pytest.mark.parametrize("edit", list(EDITS))
def test_the_edit_is_not_observable(reference, edit):
    area = _area(edit, *EDITS[edit])
    for case in CASES:
        assert _observe(area, *case) == reference[case], (edit, dict(zip(
            ("clip_value", "separate_losses", "functional", "shared"), case, strict=True)))


def test_the_probe_sees_an_observable_edit(reference):
    """The probe can fail: the edit that trains the shared trunk without functional
    parameters (TorchRL 0.14.1's behaviour) changes what it observes."""
    area = _area("observable", "        if not self.separate_losses:\n", "        if True:\n")
    changed = [case for case in CASES if _observe(area, *case) != reference[case]]
    assert changed == [(clip, True, False, True) for clip in (None, 0.25)], changed


#: the mask readers' edits that are equivalent on the pinned tensordict (0.14), whose
#: ``TensorDict.get(key)`` returns None for a missing key, as ``get(key, None)`` does (TorchRL
#: 0.14's own loss code relies on it: ``tensordict.get(self.tensor_keys.value)`` then ``is None``)
MASK_EDITS = {
    "valid-positions-get-without-default": ("found = tensordict.get(key, None)\n            if found is not None:\n",
                                            "found = tensordict.get(key)\n            if found is not None:\n"),
    "bool-masks-get-without-default": (
        "found = tensordict.get(key, None)\n            if found is not None and",
        "found = tensordict.get(key)\n            if found is not None and"),
}

#: (collector mask dtype, shifted_valid given): no mask at all is critic_loss_with's batch
MASK_CASES = [(None, False), (torch.bool, False), (torch.float32, False), (torch.bool, True),
              (torch.int64, True)]


def _observe_masked(area, dtype, shifted):
    """Loss, gradient and clip fraction of a seeded batch with these masks (none: the options
    batch, where every mask key is missing)."""
    if dtype is None:
        return _observe(area, 0.25, False, True, False)
    rng = np.random.default_rng(32)
    old = rng.normal(0.0, 2.0, 16)
    v, R = old + rng.normal(0.0, 1.0, 16), old + rng.normal(0.0, 3.0, 16)
    valid, other = rng.random(16) > 0.3, rng.random(16) > 0.3
    valid[0] = other[0] = True
    col = lambda x: torch.as_tensor(x).reshape(-1, 1)  # noqa: E731
    net = _linear()
    report = area.critic_loss_masked(
        value_net=net, observation=col(v), old_value=col(old), returns=col(R), clip_value=0.25,
        critic_coeff=1.0, valid=col(valid).to(dtype),
        shifted_valid=col(other).bool() if shifted else None)
    report.loss.backward()
    return {"loss": float(report.loss.detach()), "clip_fraction": report.value_clip_fraction,
            "grads": [p.grad.tolist() for p in net.parameters()]}


@pytest.mark.parametrize("edit", list(MASK_EDITS))
def test_the_mask_reading_edit_is_not_observable(edit):
    reference, mutant = _area(f"mask_unmutated_{edit}"), _area(edit, *MASK_EDITS[edit])
    for case in MASK_CASES:
        assert _observe_masked(mutant, *case) == _observe_masked(reference, *case), (edit, case)


def test_the_mask_probe_sees_an_observable_edit():
    """The probe can fail: masks ORed instead of ANDed change the clip fraction of the batch
    with two masks, and only of it."""
    reference = _area("mask_unmutated_or")
    mutant = _area("mask_ored", "mask = found if mask is None else mask & found",
                   "mask = found if mask is None else mask | found")
    changed = [case for case in MASK_CASES
               if _observe_masked(mutant, *case) != _observe_masked(reference, *case)]
    assert changed == [(torch.bool, True), (torch.int64, True)], changed
