"""Equivalence probes for mutants of ``impls/prioritized_buffers.py`` classified "equivalent" in
``tests/mutants/classified/prioritized_replay_checkpoints.json``: each edit, applied to the
module as the mutation tool applies it, leaves both buffer classes observably the same, with
``sync`` on and off and with and without a constructor ``generator``: same sampler type and
parameters, tree values, default priority, and seeded draws and weights.

Why they are equivalent: the arguments TorchRL's own constructors pass to a sampler they build
are dropped with that sampler (``_swap_sampler`` replaces it; ``PrioritizedReplayBuffer`` uses a
given ``sampler=`` as is), TorchRL's buffers always set ``_sync``, and TorchRL's ``Sampler``
always has ``_rng``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.mutants.source import mutated_module

TD_SUPER = "super().__init__(alpha=alpha, beta=beta, eps=eps, reduction=reduction, **kwargs)"
PLAIN_SUPER = "super().__init__(alpha=alpha, beta=beta, eps=eps, dtype=dtype, sampler=sampler,"

#: the probe's name -> (old, new): the edits of the classified mutants
EDITS = {
    "td-super-eps-none": (TD_SUPER, TD_SUPER.replace("eps=eps,", "eps=None,")),
    "td-super-reduction-none": (TD_SUPER, TD_SUPER.replace("reduction=reduction,", "reduction=None,")),
    "td-super-eps-dropped": (TD_SUPER, TD_SUPER.replace("eps=eps, ", "")),
    "td-super-reduction-dropped": (TD_SUPER, TD_SUPER.replace("reduction=reduction, ", "")),
    "plain-super-alpha-none": (PLAIN_SUPER, PLAIN_SUPER.replace("alpha=alpha", "alpha=None")),
    "plain-super-beta-none": (PLAIN_SUPER, PLAIN_SUPER.replace("beta=beta", "beta=None")),
    "plain-super-eps-none": (PLAIN_SUPER, PLAIN_SUPER.replace("eps=eps", "eps=None")),
    "plain-super-dtype-none": (PLAIN_SUPER, PLAIN_SUPER.replace("dtype=dtype", "dtype=None")),
    "plain-super-eps-dropped": (PLAIN_SUPER, PLAIN_SUPER.replace("eps=eps, ", "")),
    "plain-super-dtype-dropped": (PLAIN_SUPER, PLAIN_SUPER.replace("dtype=dtype, ", "")),
    "sync-default-none": ('getattr(buffer, "_sync", True)', 'getattr(buffer, "_sync", None)'),
    "sync-default-dropped": ('getattr(buffer, "_sync", True)', 'getattr(buffer, "_sync", )'),
    "sync-default-false": ('getattr(buffer, "_sync", True)', 'getattr(buffer, "_sync", False)'),
    "rng-default-dropped": ('getattr(old, "_rng", None)', 'getattr(old, "_rng", )'),
}
NAMES = ("TensorDictPrioritizedReplayBuffer", "PrioritizedReplayBuffer")


def _observe(module, name: str, sync: bool, seeded: bool) -> list:
    from tensordict import TensorDict
    from torchrl.data import LazyTensorStorage

    kwargs = {"generator": torch.Generator().manual_seed(3)} if seeded else {}
    rb = getattr(module, name)(alpha=0.6, beta=0.4, eps=1e-3, storage=LazyTensorStorage(16),
                               sync=sync, **kwargs)
    items = torch.arange(10)
    rb.extend(TensorDict({"item": items}, [10]) if name.startswith("TensorDict") else items)
    priority = torch.as_tensor(np.random.default_rng(5).integers(1, 640, 10) / 64.0,
                               dtype=torch.float32)
    rb.update_priority(torch.arange(10), priority)
    sampler = rb._sampler if sync else rb._prioritized_sampler
    np.random.seed(7)
    torch.manual_seed(7)
    _, info = rb.sample(32, return_info=True)
    weight = info.get("priority_weight")
    return [type(sampler).__module__, sampler._alpha, sampler._beta, sampler._eps,
            sampler.dtype, sampler._rng is not None,
            sampler._sum_tree[torch.arange(10)].tolist(), float(sampler.default_priority),
            torch.as_tensor(info["index"]).tolist(),
            None if weight is None else torch.as_tensor(weight).tolist()]


@pytest.mark.parametrize("edit", list(EDITS))
def test_edit_is_not_observable(edit):
    reference = mutated_module("impls.prioritized_buffers", tag="probe_reference")
    mutant = mutated_module("impls.prioritized_buffers", *EDITS[edit], tag=f"probe_{edit}")
    for name in NAMES:
        for sync in (True, False):
            # only the tensordict class takes a generator (TorchRL 0.14.1)
            for seeded in (False, True) if name.startswith("TensorDict") else (False,):
                want = _observe(reference, name, sync, seeded)
                got = _observe(mutant, name, sync, seeded)
                assert got == want, (edit, name, sync, seeded)
