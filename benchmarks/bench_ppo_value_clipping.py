"""§4 PPO value clipping: the interface's ``area.critic_loss(...)`` with value clipping on, then
backward through the value network. The interface builds the loss module on every call, so this
is construction + forward + backward of a clipped PPO loss, for every implementation alike.
Target (issue #14, "no cost to swapping"): the reference ``ClipPPOLoss`` within 1.1x of
TorchRL's at every size.
"""

from __future__ import annotations

from benchtools.floors import Floor
from benchtools.registry import SEED
from benchtools.targets import Target, ratio
from benchtools.workload import Timed, Workload, asv_class, asv_versus_baseline

SIZES = [100, 1_000, 10_000, 100_000]
CUDA_SIZES = {"size": [1_000_000]}  # a GPU's batch
ASV_SIZES = {"size": [100, 10_000]}  # asv's grid: the ends that history compares


def _critic_loss(area, dev, *, size):
    import torch

    g = torch.Generator().manual_seed(SEED)
    observation, old_value, returns = (torch.randn(size, 1, generator=g).to(dev)
                                       for _ in range(3))
    value_net = torch.nn.Linear(1, 1).to(dev)

    def call():
        out = area.critic_loss(value_net=value_net, observation=observation, old_value=old_value,
                               returns=returns, clip_value=0.2, clip_epsilon=0.2,
                               critic_coeff=1.0)
        out.loss.backward()

    return Timed(call)


CRITIC = Workload("forward_backward", "ppo_value_clipping", {"size": SIZES}, _critic_loss,
                  doc="interface critic_loss with clip_value=0.2, then backward",
                  cuda_params=CUDA_SIZES, asv_params=ASV_SIZES,
                  # observation, old value, returns: float32, read once
                  floor=lambda p: Floor(1, 3 * 4 * p["size"]))
WORKLOADS = [CRITIC]

CriticLossClipped = asv_class("CriticLossClipped", CRITIC)
CriticLossClippedVersusTorchrl = asv_versus_baseline("CriticLossClippedVersusTorchrl", CRITIC)


def _worst_versus_torchrl(points, impl):
    ratios = [ratio(points.get("forward_backward", impl, size=s),
                    points.get("forward_backward", "torchrl", size=s)) for s in SIZES]
    return None if None in ratios else max(ratios)


TARGETS = [
    Target("ClipPPOLoss with clip_value, {impl} / torchrl (max over sizes)", "<= 1.1",
           _worst_versus_torchrl, lambda v: v <= 1.1, versus="torchrl"),
]
