"""The reference SAC losses with one edit of ``impls/sac_done_states.py``, made the way a
mutation tool makes them (``tests/mutants/source.py``): what survived while no spec gave a batch
without a terminated entry or looked at the caller's batch after a loss call.

- ``TARGET_WRITES_INPUT`` / ``DISCRETE_TARGET_WRITES_INPUT``: the target's shallow copy of the
  batch deleted: the next-state value lands in the caller's batch (``("next", "state_value")``);
- ``NEUTRALISE_WITH_ZEROS``: terminal next states replaced by zeros, not by the current
  states: no terminal state reaches the networks, but a state the batch does not hold does;
- ``NO_DONE_FALLBACK``: without a terminated entry nothing is skipped (the done next states
  reach the networks).
"""

from __future__ import annotations

from tests.mutants import implementation
from tests.mutants.source import mutated_module

MUTANTS = {
    "TARGET_WRITES_INPUT": (
        "        tensordict = tensordict.clone(False)\n        with torch.no_grad():\n"
        "            next_td, mask = self._skippable_next(tensordict)\n            with set_",
        "        with torch.no_grad():\n"
        "            next_td, mask = self._skippable_next(tensordict)\n            with set_"),
    "DISCRETE_TARGET_WRITES_INPUT": (
        "        tensordict = tensordict.clone(False)\n        with torch.no_grad():\n"
        "            next_td, mask = self._skippable_next(tensordict)\n            with self.",
        "        with torch.no_grad():\n"
        "            next_td, mask = self._skippable_next(tensordict)\n            with self."),
    "NEUTRALISE_WITH_ZEROS": ("value.shape), tensordict.get(key), value)",
                              "value.shape), torch.zeros_like(value), value)"),
    "NO_DONE_FALLBACK": ("            mask = next_td.get(self.tensor_keys.done)\n",
                         "            mask = torch.zeros((), dtype=torch.bool)\n"),
}


def reference_with_edit(name: str, old: str, new: str):
    from conformance.implementations.torchrl_areas.sac_done_states import TorchRLSACDoneStates

    module = mutated_module("impls.sac_done_states", old, new, tag=name)
    area = TorchRLSACDoneStates(module.SACLoss, module.DiscreteSACLoss, library=f"mutant {name}")
    return implementation(name.lower().replace("_", "-"), sac_done_states=area)


TARGET_WRITES_INPUT = reference_with_edit("TARGET_WRITES_INPUT", *MUTANTS["TARGET_WRITES_INPUT"])
DISCRETE_TARGET_WRITES_INPUT = reference_with_edit("DISCRETE_TARGET_WRITES_INPUT",
                                                   *MUTANTS["DISCRETE_TARGET_WRITES_INPUT"])
NEUTRALISE_WITH_ZEROS = reference_with_edit("NEUTRALISE_WITH_ZEROS",
                                           *MUTANTS["NEUTRALISE_WITH_ZEROS"])
NO_DONE_FALLBACK = reference_with_edit("NO_DONE_FALLBACK", *MUTANTS["NO_DONE_FALLBACK"])
UNMUTATED = reference_with_edit("UNMUTATED", "", "")
