"""SAC with prioritized replay and PPO with value clipping, on TorchRL's classes or the reference.

One switch, ``--impl torchrl|reference``, picks where ``TanhNormal``, ``SACLoss``,
``ClipPPOLoss`` and ``PrioritizedSampler`` come from; everything else is ordinary TorchRL
training code. Same seeds give the same run with either: the reference sampler draws from the
same random stream as TorchRL's, so the printed returns agree as long as the two pick the same
items (with float64 trees on both sides, ``--tree-dtype float64``, they differ only if a draw
falls within float64 rounding of an item boundary).

    python examples/dropin_training.py --algo sac --impl torchrl --frames 3000
    python examples/dropin_training.py --algo sac --impl reference --frames 3000
    python examples/dropin_training.py --algo ppo --impl reference --clip-value 0.5

``--env`` takes a gym id (Pendulum-v1, the default, needs gymnasium) or ``mock``, TorchRL's
own continuous test environment, for a smoke run that needs nothing beyond torchrl.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np
import torch
from tensordict.nn import NormalParamExtractor, TensorDictModule
from torch import nn


def classes(impl: str) -> dict:
    """The four swapped classes, from TorchRL or from the reference (the one switch);
    ``reference-fused``: the reference with its prioritized sampler's tree walks in C."""
    if impl in ("reference", "reference-fused"):
        import impls

        sampler = impls.PrioritizedSampler
        if impl == "reference-fused":
            from impls.fused_tree import FusedPrioritizedSampler as sampler
        return {"TanhNormal": impls.TanhNormal, "SACLoss": impls.SACLoss,
                "ClipPPOLoss": impls.ClipPPOLoss, "PrioritizedSampler": sampler}
    from torchrl.data import PrioritizedSampler
    from torchrl.modules import TanhNormal
    from torchrl.objectives import ClipPPOLoss, SACLoss

    return {"TanhNormal": TanhNormal, "SACLoss": SACLoss, "ClipPPOLoss": ClipPPOLoss,
            "PrioritizedSampler": PrioritizedSampler}


def make_env(name: str, seed: int):
    from torchrl.envs import RewardSum, StepCounter, TransformedEnv

    if name == "mock":  # TorchRL's own test env: a smoke run that needs nothing more
        from torchrl.testing.mocking_classes import ContinuousActionVecMockEnv

        env = TransformedEnv(ContinuousActionVecMockEnv(), StepCounter(max_steps=50))
    else:
        from torchrl.envs import GymEnv

        env = TransformedEnv(GymEnv(name))
    env.append_transform(RewardSum())
    env.set_seed(seed)
    return env


def _n_obs(env) -> int:
    return env.observation_spec["observation"].shape[-1]


def make_actor(env, cls, hidden: int, log_prob: bool):
    from torchrl.modules import MLP, ProbabilisticActor

    n_act = env.action_spec.shape[-1]
    net = nn.Sequential(MLP(in_features=_n_obs(env), out_features=2 * n_act,
                            num_cells=[hidden, hidden]),
                        NormalParamExtractor())
    module = TensorDictModule(net, ["observation"], ["loc", "scale"])
    spec = env.action_spec
    return ProbabilisticActor(module, in_keys=["loc", "scale"], spec=spec,
                              distribution_class=cls,
                              distribution_kwargs={"low": spec.space.low, "high": spec.space.high},
                              return_log_prob=log_prob)


def run_sac(args, c, env) -> list[tuple[float, float]]:
    from torchrl.collectors import Collector
    from torchrl.data import LazyTensorStorage, TensorDictReplayBuffer
    from torchrl.modules import MLP, ValueOperator
    from torchrl.objectives import SoftUpdate

    actor = make_actor(env, c["TanhNormal"], args.hidden, log_prob=False)
    n_in = _n_obs(env) + env.action_spec.shape[-1]
    qvalue = ValueOperator(MLP(in_features=n_in, out_features=1,
                               num_cells=[args.hidden, args.hidden]),
                           in_keys=["observation", "action"])
    loss = c["SACLoss"](actor, qvalue, num_qvalue_nets=2)
    target = SoftUpdate(loss, tau=0.01)
    optim = torch.optim.Adam(loss.parameters(), lr=3e-4)
    dtype = torch.float64 if args.tree_dtype == "float64" else torch.float32
    sampler = c["PrioritizedSampler"](args.buffer, alpha=0.7, beta=0.5, dtype=dtype)
    rb = TensorDictReplayBuffer(storage=LazyTensorStorage(args.buffer), sampler=sampler,
                                priority_key="td_error", batch_size=args.batch)
    collector = Collector(env, actor, frames_per_batch=args.frames_per_batch,
                                  total_frames=args.frames)
    returns = []
    for batch in collector:
        rb.extend(batch.reshape(-1))
        for _ in range(args.updates):
            sample = rb.sample()
            out = loss(sample)
            total = out["loss_actor"] + out["loss_qvalue"] + out["loss_alpha"]
            optim.zero_grad()
            total.backward()
            optim.step()
            target.step()
            rb.update_tensordict_priority(sample)
        returns.append((float(batch["next", "reward"].mean()), float(total)))
    collector.shutdown()
    return returns


def run_ppo(args, c, env) -> list[tuple[float, float]]:
    from torchrl.collectors import Collector
    from torchrl.modules import MLP, ValueOperator
    from torchrl.objectives.value import GAE

    actor = make_actor(env, c["TanhNormal"], args.hidden, log_prob=True)
    critic = ValueOperator(MLP(in_features=_n_obs(env), out_features=1,
                               num_cells=[args.hidden, args.hidden]),
                           in_keys=["observation"])
    loss = c["ClipPPOLoss"](actor, critic, clip_epsilon=0.2, clip_value=args.clip_value,
                            entropy_coeff=0.0, loss_critic_type="l2")
    advantage = GAE(gamma=0.99, lmbda=0.95, value_network=critic, average_gae=True)
    optim = torch.optim.Adam(loss.parameters(), lr=3e-4)
    collector = Collector(env, actor, frames_per_batch=args.frames_per_batch,
                                  total_frames=args.frames)
    generator = torch.Generator().manual_seed(args.seed)
    returns = []
    for batch in collector:
        with torch.no_grad():
            advantage(batch)
        data = batch.reshape(-1)
        for _ in range(args.updates):
            order = torch.randperm(data.shape[0], generator=generator)
            for chunk in order.split(args.batch):
                out = loss(data[chunk])
                total = out["loss_objective"] + out["loss_critic"]
                optim.zero_grad()
                total.backward()
                optim.step()
        returns.append((float(batch["next", "reward"].mean()), float(total)))
    collector.shutdown()
    return returns


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--impl", choices=["torchrl", "reference", "reference-fused"], default="reference")
    p.add_argument("--algo", choices=["sac", "ppo"], default="sac")
    p.add_argument("--env", default="Pendulum-v1", help="a gym id, or mock")
    p.add_argument("--frames", type=int, default=3000)
    p.add_argument("--frames-per-batch", type=int, default=100)
    p.add_argument("--updates", type=int, default=4, help="gradient steps (PPO: epochs) per batch")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--buffer", type=int, default=10_000, help="replay capacity (SAC)")
    p.add_argument("--tree-dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--clip-value", type=float, default=0.5, help="PPO value clipping; 0 = off")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(argv=None) -> list[tuple[float, float]]:
    args = parse(argv)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # TorchRL's prioritized sampler draws from numpy's generator
    env = make_env(args.env, args.seed)
    c = classes(args.impl)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL's deprecation notices, not ours
        returns = (run_sac if args.algo == "sac" else run_ppo)(args, c, env)
    print(f"{args.algo} {args.impl} seed={args.seed} mean reward per batch: "
          + " ".join(f"{r:.6f}" for r, _ in returns))
    print(f"{args.algo} {args.impl} seed={args.seed} last loss per batch: "
          + " ".join(f"{loss:.6f}" for _, loss in returns))
    return returns


if __name__ == "__main__":
    main(sys.argv[1:])
