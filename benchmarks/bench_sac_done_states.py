"""§3 SAC done states: one training step (forward + backward of the SAC or discrete SAC loss)
with ``skip_done_states`` False and True, 10% of the transitions terminated, seeded.

The interface's ``loss(...)`` builds a fresh loss from the spec's float64 networks on every call,
so construction would dominate the time and hide what ``skip_done_states`` costs per step. This
workload therefore builds the loss once, from the loss classes the area wraps (``area.classes``,
exposed by the adapters of the reference and of TorchRL; n/a for an implementation without it),
with an MLP actor and two Q-networks of 64x64 units, obs 17, action 6 (continuous) or 6 actions
(discrete), and times the step.
"""

from __future__ import annotations

from benchtools.floors import Floor
from benchtools.registry import SEED, library_attribute
from benchtools.targets import Target, ratio
from benchtools.workload import (
    Timed,
    Workload,
    asv_class,
    asv_versus_baseline,
    asv_versus_companions,
)

OBS, ACT, HIDDEN, DONE_SHARE = 17, 6, 64, 0.10
KINDS = ["continuous", "discrete"]
SIZES = [100, 1_000, 10_000]  # 1e5: seconds a step on the CPU, past the side-by-side budget
CUDA_SIZES = {"batch": [100_000]}  # a GPU's batch
ASV_SIZES = {"batch": [100, 10_000]}  # asv's grid: the ends that history compares
#: float32 per transition: observation and next observation, action, reward, done, terminated
TRANSITION_BYTES = 4 * (2 * OBS + ACT + 3)
FLAG = "skip_done_states"


def _loss(cls, dev, kind, skip):
    import torch
    from tensordict.nn import NormalParamExtractor, TensorDictModule
    from torchrl.modules import MLP, OneHotCategorical, ProbabilisticActor, TanhNormal

    from conformance.implementations.introspect import accepts, quiet

    if not accepts(cls, FLAG):
        raise NotImplementedError(f"{cls.__name__} has no {FLAG} (torchrl < 0.7.0)")
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
    else:
        actor = ProbabilisticActor(
            TensorDictModule(MLP(in_features=OBS, out_features=ACT, num_cells=cells),
                             ["observation"], ["logits"]),
            in_keys=["logits"], distribution_class=OneHotCategorical)
        q = TensorDictModule(MLP(in_features=OBS, out_features=ACT, num_cells=cells),
                             ["observation"], ["action_value"])
        kwargs = {"action_space": "one-hot", "num_actions": ACT}
    with quiet():
        return cls(actor, q, **{FLAG: skip}, **kwargs).to(dev)


def _batch(kind, size, dev):
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
    }, [size]).to(dev)


def _forward_backward(area, dev, *, kind, skip_done_states, batch):
    from conformance.implementations.introspect import quiet

    classes = library_attribute(area, "classes", "the SAC loss classes it wraps")
    loss = _loss(classes[kind], dev, kind, skip_done_states)
    td = _batch(kind, batch, dev)

    def call():
        with quiet():
            loss.zero_grad(set_to_none=True)
            out = loss(td)
            (out["loss_actor"] + out["loss_qvalue"] + out["loss_alpha"]).backward()

    call()  # warm-up: lazy target entropy, vmap compilation
    return Timed(call)


STEP = Workload("forward_backward", "sac_done_states",
                {"kind": KINDS, "skip_done_states": [False, True], "batch": SIZES},
                _forward_backward, doc="SAC loss forward + backward on a seeded batch",
                companions=lambda p: [("forward_backward", {**p, FLAG: not p[FLAG]})],
                cuda_params=CUDA_SIZES, asv_params=ASV_SIZES,
                floor=lambda p: Floor(1, TRANSITION_BYTES * p["batch"]))
WORKLOADS = [STEP]

ForwardBackward = asv_class("ForwardBackward", STEP)
ForwardBackwardVersusTorchrl = asv_versus_baseline("ForwardBackwardVersusTorchrl", STEP)
#: skip_done_states True over False (and False over True) at the same point
ForwardBackwardOverFlipped = asv_versus_companions("ForwardBackwardOverFlipped", STEP, WORKLOADS)


def _worst_skip_cost(points, impl):
    ratios = [ratio(points.get("forward_backward", impl, kind=k, skip_done_states=True,
                                  batch=b),
                    points.get("forward_backward", impl, kind=k, skip_done_states=False,
                                  batch=b)) for k in KINDS for b in SIZES]
    ratios = [r for r in ratios if r is not None]
    return max(ratios) if len(ratios) == len(KINDS) * len(SIZES) else None


TARGETS = [
    Target("SAC {impl} step, skip_done_states True / False at 10% done (max over kinds and "
           "batches)", "<= 1.05", _worst_skip_cost, lambda v: v <= 1.05, versus="torchrl"),
]
