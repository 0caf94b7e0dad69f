"""asv benchmarks: SAC / discrete SAC loss forward + backward, skip_done_states True vs False.

Single-agent batches (the layout TorchRL runs with both settings) with 10% of the transitions
terminated, seeded; MLP actor and two Q-networks with 64x64 hidden units, obs 17, action 6
(continuous) or 6 actions (discrete). ``SkipCost.track_ratio`` measures, in one process and
interleaved, the time with True divided by the time with False (the reference aims at <= 1.1);
``python -m benchmarks.bench_sac_done_states [--threads 1]`` prints that ratio for the
reference and for TorchRL, all four losses timed in turn in one run.
"""

from __future__ import annotations

import time

from benchmarks.common import DEVICES, IMPLEMENTATIONS, SEED, require, synchronize

OBS, ACT, HIDDEN, DONE_SHARE = 17, 6, 64, 0.10
SIZES = [100, 1_000, 10_000, 100_000]


def _classes(implementation):
    if implementation == "reference":
        from impls import DiscreteSACLoss, SACLoss
    else:
        from torchrl.objectives import DiscreteSACLoss, SACLoss
    return SACLoss, DiscreteSACLoss


def build(implementation, device, kind, skip):
    """A loss on ``device`` with seeded networks (the same for both settings)."""
    import inspect
    import warnings

    import torch
    from tensordict.nn import NormalParamExtractor, TensorDictModule
    from torchrl.modules import MLP, OneHotCategorical, ProbabilisticActor, TanhNormal

    sac, discrete = _classes(implementation)
    torch.manual_seed(SEED)
    cells = [HIDDEN, HIDDEN]
    if kind == "continuous":
        body = torch.nn.Sequential(MLP(in_features=OBS, out_features=2 * ACT, num_cells=cells),
                                   NormalParamExtractor())
        actor = ProbabilisticActor(TensorDictModule(body, ["observation"], ["loc", "scale"]),
                                   in_keys=["loc", "scale"], distribution_class=TanhNormal)
        q = TensorDictModule(MLP(in_features=OBS + ACT, out_features=1, num_cells=cells),
                             ["observation", "action"], ["state_action_value"])
        kwargs = {"target_entropy": -float(ACT)}
        cls = sac
    else:
        actor = ProbabilisticActor(
            TensorDictModule(MLP(in_features=OBS, out_features=ACT, num_cells=cells),
                             ["observation"], ["logits"]),
            in_keys=["logits"], distribution_class=OneHotCategorical)
        q = TensorDictModule(MLP(in_features=OBS, out_features=ACT, num_cells=cells),
                             ["observation"], ["action_value"])
        kwargs = {"action_space": "one-hot", "num_actions": ACT}
        cls = discrete
    if "skip_done_states" not in inspect.signature(cls.__init__).parameters:
        raise NotImplementedError(f"{cls.__name__} has no skip_done_states (torchrl < 0.7.0)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss = cls(actor, q, skip_done_states=skip, **kwargs)
    return loss.to(device)


def batch(kind, size, device):
    import torch
    from tensordict import TensorDict

    g = torch.Generator().manual_seed(SEED + size)
    terminated = torch.rand(size, 1, generator=g) < DONE_SHARE
    if kind == "continuous":
        action = torch.rand(size, ACT, generator=g) * 2 - 1
    else:
        action = torch.nn.functional.one_hot(torch.randint(ACT, (size,), generator=g), ACT).float()
    return TensorDict({
        "observation": torch.randn(size, OBS, generator=g),
        "action": action,
        "next": {"observation": torch.randn(size, OBS, generator=g),
                 "reward": torch.randn(size, 1, generator=g),
                 "done": terminated.clone(), "terminated": terminated},
    }, [size]).to(device)


def step(loss, td, device):
    loss.zero_grad(set_to_none=True)
    out = loss(td)
    (out["loss_actor"] + out["loss_qvalue"] + out["loss_alpha"]).backward()
    synchronize(device)


class ForwardBackward:
    params = [IMPLEMENTATIONS, DEVICES, ["continuous", "discrete"], SIZES, [False, True]]
    param_names = ["implementation", "device", "kind", "batch", "skip_done_states"]
    timeout = 300

    def setup(self, implementation, device, kind, size, skip):
        import warnings

        warnings.simplefilter("ignore")
        self.device = require(implementation, device)
        self.loss = build(implementation, self.device, kind, skip)
        self.td = batch(kind, size, self.device)
        step(self.loss, self.td, self.device)  # warm-up (lazy target entropy, vmap)

    def time_forward_backward(self, implementation, device, kind, size, skip):
        step(self.loss, self.td, self.device)


def interleaved(configs, kind, size, device="cpu", repeats=15):
    """Step times of several (implementation, skip) losses on one batch, timed in turn (one
    step of each per round) so that machine load hits them alike; CPU seconds on the CPU."""
    import warnings

    warnings.simplefilter("ignore")
    dev = require(configs[0][0], device)
    td = batch(kind, size, dev)
    losses = {c: build(c[0], dev, kind, c[1]) for c in configs}
    for loss in losses.values():
        step(loss, td, dev)
    # CPU time on the CPU: other processes on a shared machine barely move it (wall time does)
    clock = time.perf_counter if dev.type == "cuda" else time.process_time
    times = {c: [] for c in configs}
    for _ in range(repeats):
        for c, loss in losses.items():
            start = clock()
            step(loss, td, dev)
            times[c].append(clock() - start)
    return times


def skip_cost_ratio(implementation, device, kind, size, repeats=15):
    """Time with skip_done_states=True over time with False (fastest of ``repeats`` each:
    on a shared machine the minimum is the least disturbed estimate)."""
    times = interleaved([(implementation, False), (implementation, True)], kind, size, device,
                        repeats)
    return min(times[(implementation, True)]) / min(times[(implementation, False)])


class SkipCost:
    params = [IMPLEMENTATIONS, DEVICES, ["continuous", "discrete"], SIZES]
    param_names = ["implementation", "device", "kind", "batch"]
    timeout = 600
    unit = "ratio"

    def setup(self, implementation, device, kind, size):
        require(implementation, device)

    def track_ratio(self, implementation, device, kind, size):
        return skip_cost_ratio(implementation, device, kind, size)


if __name__ == "__main__":  # the closing-note table: all four losses timed in one process
    import argparse
    import statistics

    parser = argparse.ArgumentParser(description="skip_done_states=True vs False, one process")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    configs = [(i, s) for i in IMPLEMENTATIONS for s in (False, True)]
    print("CPU ms per forward+backward, fastest of the repeats (median ratios last)")
    print("kind        batch  | ref off / ref on / trl off / trl on | on/off (min): "
          "ref  trl | on/off (median): ref  trl")
    for kind in ("continuous", "discrete"):
        for size in SIZES:
            repeats = args.repeats if size < 100_000 else max(5, args.repeats // 2)
            t = interleaved(configs, kind, size, "cpu", repeats)
            lo = {c: min(v) * 1e3 for c, v in t.items()}
            med = {c: statistics.median(v) * 1e3 for c, v in t.items()}
            r = lambda d, i: d[(i, True)] / d[(i, False)]  # noqa: E731
            print(f"{kind:>10} {size:>7}  | " + " / ".join(f"{lo[c]:8.2f}" for c in configs)
                  + f" | {r(lo, 'reference'):.3f} {r(lo, 'torchrl'):.3f}"
                  + f" | {r(med, 'reference'):.3f} {r(med, 'torchrl'):.3f}", flush=True)
