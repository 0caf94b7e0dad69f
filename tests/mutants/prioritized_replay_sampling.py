"""The reference sampler broken one line at a time where §5's sampling specs
(``conformance/test_prioritized_replay_sampling.py``) look, each edit one a mutation tool made
and no earlier spec noticed:

- ``ALPHA_ZERO_REFUSED``: ``alpha = 0`` (uniform replay) is refused at construction;
- ``GLOBAL_TORCH_STREAM``: draws come from torch's global generator, not the buffer's;
- ``EMPTY_REFUSAL_SILENT``: sampling an empty buffer fails without saying why;
- ``UPPER_ZERO_ACCEPTED``: an upper bound of 0 on the default priority is accepted;
- ``DEFAULT_EPS_ONE``: the default ``eps`` is 1.00000001 instead of TorchRL's 1e-8;
- ``DEFAULT_WITHIN_BUFFER``: in-buffer tracking is on by default (TorchRL's is off);
- ``WEIGHTS_IN_FLOAT64``: the weights ignore ``dtype`` (float64 whatever was asked);
- ``NUMPY_MASS_FROM_ONE``: numpy's masses start at 1 instead of 0;
- ``NEGATIVE_EPS_ACCEPTED``: a negative ``eps`` is accepted;
- ``INITIAL_ZERO_REFUSED``: ``initial_priority = 0`` is refused;
- ``ZERO_MASS_WORDS``: a buffer of total priority 0 is refused in other words than TorchRL's;
- ``INDEX_AS_TUPLE``: the indices of a one-dimensional storage come as a tuple of one tensor;
- ``REDUCTION_DEFAULT_UNKNOWN``: the default ``reduction`` is a name TorchRL's buffers do not
  know (``"MAX"``), so a tensordict buffer cannot reduce its ``td_error``;
- ``SWAP_DROPS_GENERATOR`` (``impls/prioritized_buffers.py``): the buffer classes' sampler
  loses the ``generator=`` the buffer was built with.
"""

from __future__ import annotations

from tests.mutants import implementation
from tests.mutants.source import mutated_module

SAMPLER = {
    "ALPHA_ZERO_REFUSED": ("        if alpha < 0:\n", "        if alpha <= 0:\n"),
    "GLOBAL_TORCH_STREAM": ("torch.rand(batch_size, device=device, generator=rng)",
                            "torch.rand(batch_size, device=device, generator=None)"),
    "EMPTY_REFUSAL_SILENT": ("raise RuntimeError(_EMPTY_STORAGE_ERROR)", "raise RuntimeError(None)"),
    "UPPER_ZERO_ACCEPTED": ("not upper_priority > 0:", "not upper_priority >= 0:"),
    "DEFAULT_EPS_ONE": ("        eps: float = 1e-8,\n", "        eps: float = 1.00000001,\n"),
    "DEFAULT_WITHIN_BUFFER": ("        max_priority_within_buffer: bool = False,\n",
                              "        max_priority_within_buffer: bool = True,\n"),
    "WEIGHTS_IN_FLOAT64": ("        self.dtype = dtype\n", "        self.dtype = None\n"),
    "NUMPY_MASS_FROM_ONE": ("np.random.uniform(0.0, total, size=batch_size)",
                            "np.random.uniform(1.0, total, size=batch_size)"),
    "NEGATIVE_EPS_ACCEPTED": ("        if eps < 0:\n", "        if eps < -1:\n"),
    "INITIAL_ZERO_REFUSED": ("if not initial_priority >= 0:", "if not initial_priority > 0:"),
    "ZERO_MASS_WORDS": ('raise RuntimeError("non-positive p_sum")',
                        'raise RuntimeError("NON-POSITIVE P_SUM")'),
    "INDEX_AS_TUPLE": ("        if storage.ndim > 1:\n", "        if storage.ndim >= 1:\n"),
    "REDUCTION_DEFAULT_UNKNOWN": ('        reduction: str = "max",\n',
                                  '        reduction: str = "MAX",\n'),
}
BUFFERS = {
    "SWAP_DROPS_GENERATOR": ('    sampler._rng = getattr(old, "_rng", None)\n',
                             "    sampler._rng = None\n"),
}
MUTANTS = {**SAMPLER, **BUFFERS}


def _reference(name: str, sampler_edit=("", ""), buffers_edit=("", "")):
    from conformance.implementations.torchrl_areas.prioritized_replay import (
        PrioritizedReplayArea,
    )

    sampler = mutated_module("impls.prioritized_replay", *sampler_edit, tag=name)
    buffers = mutated_module("impls.prioritized_buffers", *buffers_edit, tag=name,
                             PrioritizedSampler=sampler.PrioritizedSampler)
    area = PrioritizedReplayArea(sampler.PrioritizedSampler, default_is_raw=True,
                                 cuda_problem=lambda: None)
    area.example_classes = {
        "PrioritizedReplayBuffer": buffers.PrioritizedReplayBuffer,
        "TensorDictPrioritizedReplayBuffer": buffers.TensorDictPrioritizedReplayBuffer}
    return implementation(name.lower().replace("_", "-"), prioritized_replay=area)


for _name, _edit in SAMPLER.items():
    globals()[_name] = _reference(_name, sampler_edit=_edit)
for _name, _edit in BUFFERS.items():
    globals()[_name] = _reference(_name, buffers_edit=_edit)
UNMUTATED = _reference("UNMUTATED")
