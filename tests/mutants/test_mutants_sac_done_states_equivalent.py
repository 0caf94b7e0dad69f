"""Probes for the mutation tool's edits of ``impls/sac_done_states.py`` that change nothing a
SAC user can observe (``tests/mutants/classified/sac_done_states.json`` names each probe).

Each probe applies the very edit (``tests/mutants/source.py``) and evaluates the edited and the
unedited reference through the same adapter as the specs, on the specs' seeded batches: every
layout, the flag off on a batch with truncated and terminated steps, the flag on with NaN
terminal next observations (an actor that raises on NaN); losses and gradients must be equal
bit for bit. Why each edit is invisible:

- ``clone-*``: a shallow copy (``clone(False)``) or a deep one (``True``, and ``None``, read as
  the default) of the batch: the loss only reads it, so the copy's depth changes nothing;
- ``preserve-*``: ``to_module(..., preserve_module_state=...)`` only decides whether the
  swapped-in parameters stay registered as parameters; gradients reach them either way;
- ``exploration-none``: ``get_dist`` builds the distribution and the draw is an explicit
  ``rsample``, so the exploration type is never read;
- ``fill-one`` / ``*-mask-none``: the next value of a terminated step is multiplied by
  ``1 - terminated = 0`` by the value estimator; it is a value at a real (current-step) state,
  finite wherever the rest of the loss is, since the target networks are copies of the online
  ones (the interface builds a fresh loss);
- ``terminated-get-no-default``: tensordict 0.14's ``get`` returns None for a missing key
  without a default too (probed on batches without a terminated entry).
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from conformance.implementations.torchrl_areas.sac_done_states import TorchRLSACDoneStates
from conformance.interface import SAC_LAYOUTS
from conformance.test_sac_done_states import (
    ALPHA,
    GAMMA,
    TARGET_ENTROPY,
    NaNGuardedActor,
    batch,
    networks,
)
from tests.mutants.source import mutated_module

_V2 = ("        tensordict = tensordict.clone({})\n        with torch.no_grad():\n"
       "            next_td, mask = self._skippable_next(tensordict)\n            with set_")
_D = ("        tensordict = tensordict.clone({})\n        with torch.no_grad():\n"
      "            next_td, mask = self._skippable_next(tensordict)\n            with self.")
_V2_PRESERVE = ("                self.actor_network, {}\n            ):\n"
                "                dist = self.actor_network.get_dist(next_td)\n                next_")
_D_PRESERVE = ("                self.actor_network, {}\n            ):\n"
               "                dist = self.actor_network.get_dist(next_td)\n            probs")
_ACTOR = ("to_module(self.actor_network, {}):\n"
          "            dist = self.actor_network.get_dist(tensordict.clone(False))")
_V2_BOOT = ("            next_value = (q - self._alpha * next_log_prob).amin(0)\n"
            "            return self._bootstrap(tensordict, next_value, {})")
_D_BOOT = ("            next_value = expected_q - self._alpha * neg_entropy\n"
           "            return self._bootstrap(tensordict, next_value, {})")
_PRESERVE = {"none": "preserve_module_state=None", "true": "preserve_module_state=True",
             "default": ""}

#: label -> (kinds it concerns, old text, new text)
EDITS = {
    **{f"v2-clone-{v.lower()}": (("continuous",), _V2.format("False"), _V2.format(v))
       for v in ("None", "True")},
    **{f"discrete-clone-{v.lower()}": (("discrete",), _D.format("False"), _D.format(v))
       for v in ("None", "True")},
    **{f"actor-clone-{v.lower()}": (("discrete",), "get_dist(tensordict.clone(False))",
                                    f"get_dist(tensordict.clone({v}))") for v in ("None", "True")},
    **{f"v2-preserve-{k}": (("continuous",),
                            _V2_PRESERVE.format("preserve_module_state=False"),
                            _V2_PRESERVE.format(v)) for k, v in _PRESERVE.items()},
    **{f"discrete-preserve-{k}": (("discrete",),
                                  _D_PRESERVE.format("preserve_module_state=False"),
                                  _D_PRESERVE.format(v)) for k, v in _PRESERVE.items()},
    **{f"actor-preserve-{k}": (("discrete",), _ACTOR.format("preserve_module_state=False"),
                               _ACTOR.format(v)) for k, v in _PRESERVE.items()},
    "exploration-none": (("continuous",), "set_exploration_type(ExplorationType.RANDOM)",
                         "set_exploration_type(None)"),
    "fill-one": (("continuous", "discrete"), "align_mask(mask, next_value.shape), 0.0)",
                 "align_mask(mask, next_value.shape), 1.0)"),
    "v2-mask-none": (("continuous",), _V2_BOOT.format("mask"), _V2_BOOT.format("None")),
    "discrete-mask-none": (("discrete",), _D_BOOT.format("mask"), _D_BOOT.format("None")),
    # run on batches without a terminated entry, the only ones that reach the line
    "terminated-get-no-default": (("continuous", "discrete"),
                                  "next_td.get(self.tensor_keys.terminated, None)",
                                  "next_td.get(self.tensor_keys.terminated)"),
}
#: edits probed on batches without a terminated entry
NO_TERMINATED = {"terminated-get-no-default"}


def _area(tag: str, old: str = "", new: str = "") -> TorchRLSACDoneStates:
    module = mutated_module("impls.sac_done_states", old, new, tag=tag)
    return TorchRLSACDoneStates(module.SACLoss, module.DiscreteSACLoss, library=tag)


def _evaluate(area, kind: str, layout: str, skip: bool, has_terminated: bool = True):
    b = batch(kind, layout, "mixed" if skip else "truncated", nan_terminal=skip)
    b = dataclasses.replace(b, has_terminated=has_terminated)
    nets = networks(kind, wrap=NaNGuardedActor if skip else None)[0]
    out = area.loss(networks=nets, batch=b, skip_done_states=skip, alpha=ALPHA, gamma=GAMMA,
                    target_entropy=TARGET_ENTROPY[kind])
    grads = {f"actor.{k}": v for k, v in out.actor_grad.items()}
    for i, g in enumerate(out.qvalue_grad):
        grads.update({f"q{i}.{k}": v for k, v in g.items()})
    return {**out.losses, **grads}


@pytest.fixture(scope="module")
def unedited():
    return _area("sac_probe_unedited")


@pytest.mark.parametrize("label", list(EDITS))
def test_edit_changes_nothing(unedited, label):
    kinds, old, new = EDITS[label]
    edited = _area(f"sac_probe_{label.replace('-', '_')}", old, new)
    for kind in kinds:
        for layout in SAC_LAYOUTS:
            for skip in (False, True):
                want, got = (_evaluate(a, kind, layout, skip, label not in NO_TERMINATED)
                             for a in (unedited, edited))
                assert want.keys() == got.keys()
                differ = [k for k in want if not torch.equal(want[k], got[k])]
                assert not differ, (label, kind, layout, skip, differ)


def test_the_probes_can_see_a_difference(unedited):
    """The probe itself is not blind: an edit that matters (the entropy term of the target
    doubled) is seen."""
    edited = _area("sac_probe_blind", "next_value = expected_q - self._alpha * neg_entropy",
                   "next_value = expected_q - 2 * self._alpha * neg_entropy")
    want, got = (_evaluate(a, "discrete", "single", False) for a in (unedited, edited))
    assert not torch.equal(want["loss_qvalue"], got["loss_qvalue"])
