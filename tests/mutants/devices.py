"""Implementations that get the device wrong (``conformance.interface``: Devices), plugged in
with ``--impl tests.mutants.devices:<NAME>``.

On a machine without a GPU a tensor "on another device" is a tensor on torch's ``meta``
device: what an adapter that ignores the run's device returns on a GPU (a CPU tensor) fails
the same check (``conformance.device.host``) the same way, naming both devices.
"""

from __future__ import annotations

import torch

from conformance.implementations.reference import IMPLEMENTATION as REFERENCE
from conformance.interface import CriticLoss, Untestable
from tests.mutants import implementation

ELSEWHERE = torch.device("meta")


class _ReferencePPO:
    critic_scale = 2.0

    def critic_loss(self, **kwargs) -> CriticLoss:
        return REFERENCE.ppo_value_clipping.critic_loss(**kwargs)


class CpuOnlyPPO(_ReferencePPO):
    """Right numbers, no device declaration: a plug-in written before devices existed."""


class LossElsewhere(_ReferencePPO):
    """Declares CUDA and the CPU, but hands its loss back on another device."""

    devices = ("cpu", "cuda")

    def critic_loss(self, **kwargs) -> CriticLoss:
        out = super().critic_loss(**kwargs)
        return CriticLoss(out.loss.to(ELSEWHERE), out.value_clip_fraction)


class ModeElsewhere:
    """The reference's TanhNormal mode, returned on another device."""

    devices = ("cpu", "cuda")

    def make(self, loc, scale, **kwargs):
        return REFERENCE.tanh_normal_mode.make(loc, scale, **kwargs)

    def mode(self, dist):
        return REFERENCE.tanh_normal_mode.mode(dist).to(ELSEWHERE)


class _BufferElsewhere:
    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def __len__(self):
        return len(self._inner)

    @property
    def device(self):
        return ELSEWHERE


class ReplayIgnoringDevice:
    """The reference's buffers, reporting that their priorities live on another device."""

    devices = ("cpu", "cuda")
    initial_priority = 1.0

    def buffer(self, **kwargs):
        return _BufferElsewhere(REFERENCE.prioritized_replay.buffer(**kwargs))


class NoKernelsPPO(_ReferencePPO):
    """A call that cannot run here: the library lacks its kernels for this device."""

    devices = ("cpu", "cuda")

    def critic_loss(self, **kwargs) -> CriticLoss:
        raise Untestable("NO-KERNELS: this build has no kernels for the run's device")


class BadDeclaration(_ReferencePPO):
    devices = "cuda"  # a string, not a tuple of device types


CPU_ONLY = implementation("cpu-only", ppo_value_clipping=CpuOnlyPPO())
LOSS_ELSEWHERE = implementation("loss-elsewhere", ppo_value_clipping=LossElsewhere())
MODE_ELSEWHERE = implementation("mode-elsewhere", tanh_normal_mode=ModeElsewhere())
REPLAY_ELSEWHERE = implementation("replay-elsewhere", prioritized_replay=ReplayIgnoringDevice())
NO_KERNELS = implementation("no-kernels", ppo_value_clipping=NoKernelsPPO())
BAD_DECLARATION = implementation("bad-declaration", ppo_value_clipping=BadDeclaration())
