"""§2 Composite distribution log-prob: heads ``action1: Categorical(8)`` and ``action2:
Categorical(1)`` under the nested ``"action"`` key, float32 logits over a batch of ``size``.

- ``log_prob``: the interface call ``area.log_prob(heads, actions, sample_batch_shape=...)``
  (builds the distribution, scores the sample aggregated and per head). Any implementation.
- ``distribution_log_prob``: what a PPO update does with the distribution itself: build it from
  the parameter tensordict and take the aggregate log-prob of the stored sample. The interface
  has no such call (its ``log_prob`` also returns per-head values, for the specs), so this
  workload uses the distribution class the area wraps (``area.dist_cls``, exposed by the
  adapters of the reference and of TorchRL; n/a for an implementation without it). The target
  is about this cost.
- ``raw_log_softmax_gather``: the floor, ``sum_h log_softmax(logits_h).gather(action_h)`` with
  the log-softmax written ``x - x.logsumexp(-1, keepdim=True)``: the form a ``Categorical``
  normalises its logits with, and the fastest on one CPU thread (``torch.log_softmax`` over
  [1e4, 8] float32 took about three times as long, issue #45), so that the target divides by the
  least work the aggregate needs. The workload keeps its name (asv's history is keyed by it).
- ``raw_torch_log_softmax_gather``: the same sum with ``torch.log_softmax``, the faster form at
  small batches (a single kernel: over [100, 1] it takes a quarter of ``logsumexp``'s several).
  A second line divides by the faster of the two raw forms at each batch size, cycle by cycle:
  what the reference costs beyond the least work of any form, including the ``logsumexp`` that
  torch's ``Categorical`` constructor computes (no target: the account of issue #45).
- ``torch_categorical_gather``: torch's own machinery for the same sum, a ``Categorical(logits=)``
  per head (its constructor normalises with ``logsumexp``) and a gather of its logits: a third
  line divides by it, what the reference does beyond torch's distributions (the tensordict
  reads and writes, the name map, the category check).
"""

from __future__ import annotations

import statistics

from benchtools.floors import Floor
from benchtools.registry import SEED, library_attribute
from benchtools.targets import Stats, Target, ratio
from benchtools.workload import (
    Timed,
    Workload,
    asv_class,
    asv_versus_baseline,
    asv_versus_companions,
    same_point,
)

SIZES = [100, 1_000, 10_000, 100_000]
CUDA_SIZES = {"size": [1_000_000]}  # a GPU's batch
ASV_SIZES = {"size": [100, 10_000]}  # asv's grid: the ends that history compares
HEADS = {"action1": 8, "action2": 1}


def _floor(params):
    """Read the float32 logits and the int64 actions once; a kernel per head."""
    per_item = sum(4 * n + 8 for n in HEADS.values())
    return Floor(len(HEADS), per_item * params["size"])


def _tensors(size, dev):
    import torch

    g = torch.Generator().manual_seed(SEED)
    logits = {h: torch.randn(size, n, generator=g).to(dev) for h, n in HEADS.items()}
    actions = {h: torch.randint(n, (size,), generator=g).to(dev) for h, n in HEADS.items()}
    return logits, actions


def _log_prob(area, dev, *, size):
    from conformance.interface import CompositeHead

    logits, actions = _tensors(size, dev)
    heads = {h: CompositeHead("categorical", {"logits": x}) for h, x in logits.items()}

    def call():
        area.log_prob(heads, actions, sample_batch_shape=(size,))

    return Timed(call)


def _distribution_log_prob(area, dev, *, size):
    import torch
    from tensordict import TensorDict

    dist_cls = library_attribute(area, "dist_cls", "the composite distribution class it wraps")
    logits, actions = _tensors(size, dev)
    params = TensorDict({h: {"logits": x} for h, x in logits.items()}, [size], device=dev)
    sample = TensorDict({"action": actions}, [size], device=dev)
    distribution_map = {h: torch.distributions.Categorical for h in HEADS}
    name_map = {h: ("action", h) for h in HEADS}
    try:
        from tensordict.nn import set_composite_lp_aggregate
    except ImportError:  # tensordict < 0.7 (torchrl 0.6): aggregation is a keyword instead

        def aggregate():
            dist = dist_cls(params, distribution_map=distribution_map, name_map=name_map)
            return dist.log_prob(sample, aggregate_probabilities=True)
    else:

        def aggregate():
            with set_composite_lp_aggregate(True):
                dist = dist_cls(params, distribution_map=distribution_map, name_map=name_map)
                return dist.log_prob(sample)

    def call():
        aggregate()

    return Timed(call)


def _raw(area, dev, *, size):
    logits, actions = _tensors(size, dev)

    def call():
        total = 0.0
        for h, x in logits.items():
            log_p = x - x.logsumexp(-1, keepdim=True)
            total = total + log_p.gather(-1, actions[h].unsqueeze(-1))

    return Timed(call)


def _raw_log_softmax(area, dev, *, size):
    import torch

    logits, actions = _tensors(size, dev)

    def call():
        total = 0.0
        for h, x in logits.items():
            total = total + torch.log_softmax(x, -1).gather(-1, actions[h].unsqueeze(-1))

    return Timed(call)


def _torch_categorical(area, dev, *, size):
    import torch

    logits, actions = _tensors(size, dev)

    def call():
        total = 0.0
        for h, x in logits.items():
            dist = torch.distributions.Categorical(logits=x)
            total = total + dist.logits.gather(-1, actions[h].unsqueeze(-1))

    return Timed(call)


LOG_PROB = Workload("log_prob", "composite_log_prob", {"size": SIZES}, _log_prob,
                    doc="interface log_prob: aggregate and per-head log-probs of a sample",
                    cuda_params=CUDA_SIZES, floor=_floor, asv_params=ASV_SIZES)
DISTRIBUTION = Workload("distribution_log_prob", "composite_log_prob", {"size": SIZES},
                        _distribution_log_prob,
                        doc="build the composite distribution, aggregate log-prob of a sample",
                        companions=same_point("raw_log_softmax_gather",
                                              "raw_torch_log_softmax_gather",
                                              "torch_categorical_gather"),
                        cuda_params=CUDA_SIZES, floor=_floor, asv_params=ASV_SIZES)
RAW = Workload("raw_log_softmax_gather", None, {"size": SIZES}, _raw,
               doc="sum over heads of (logits - logsumexp(logits)).gather(action): the floor",
               cuda_params=CUDA_SIZES, floor=_floor, asv_params=ASV_SIZES)
RAW_TORCH = Workload("raw_torch_log_softmax_gather", None, {"size": SIZES}, _raw_log_softmax,
                     doc="sum over heads of torch.log_softmax(logits).gather(action)",
                     cuda_params=CUDA_SIZES, floor=_floor, asv_params=ASV_SIZES)
TORCH_CATEGORICAL = Workload(
    "torch_categorical_gather", None, {"size": SIZES}, _torch_categorical,
    doc="sum over heads of Categorical(logits=logits).logits.gather(action): torch's machinery",
    cuda_params=CUDA_SIZES, floor=_floor, asv_params=ASV_SIZES)
WORKLOADS = [LOG_PROB, DISTRIBUTION, RAW, RAW_TORCH, TORCH_CATEGORICAL]

CompositeLogProb = asv_class("CompositeLogProb", LOG_PROB)
CompositeDistributionLogProb = asv_class("CompositeDistributionLogProb", DISTRIBUTION)
CompositeBaseline = asv_class("CompositeBaseline", RAW)
CompositeTorchLogSoftmaxBaseline = asv_class("CompositeTorchLogSoftmaxBaseline", RAW_TORCH)
CompositeTorchCategoricalBaseline = asv_class("CompositeTorchCategoricalBaseline",
                                              TORCH_CATEGORICAL)
CompositeLogProbVersusTorchrl = asv_versus_baseline("CompositeLogProbVersusTorchrl", LOG_PROB)
CompositeDistributionLogProbVersusTorchrl = asv_versus_baseline(
    "CompositeDistributionLogProbVersusTorchrl", DISTRIBUTION)
CompositeDistributionLogProbOverRaw = asv_versus_companions(
    "CompositeDistributionLogProbOverRaw", DISTRIBUTION, WORKLOADS)


def _faster_form(a: Stats | None, b: Stats | None) -> Stats | None:
    """The faster of the two raw forms, cycle by cycle when both were timed in turns (one group,
    the same cycles), else the one with the lower median."""
    if a is None or b is None:
        return a or b
    if a.group and a.group == b.group and a.cycles and len(a.cycles) == len(b.cycles):
        cycles = tuple(map(min, a.cycles, b.cycles))
        return Stats(min(a.min, b.min), statistics.median(cycles), min(a.max, b.max),
                     min(a.rounds, b.rounds), cycles, a.group)
    return a if a.median <= b.median else b


def _yardstick(name):
    return lambda points, size: points.get(name, None, size=size)


def _fastest_raw_form(points, size):
    return _faster_form(points.get("raw_log_softmax_gather", None, size=size),
                        points.get("raw_torch_log_softmax_gather", None, size=size))


def _worst_over(yardstick):
    """The implementation's distribution log-prob over ``yardstick(points, size)``, the largest
    ratio over the batch sizes (None unless every size was measured)."""
    def measure(points, impl):
        ratios = [ratio(points.get("distribution_log_prob", impl, size=s), yardstick(points, s))
                  for s in SIZES]
        ratios = [r for r in ratios if r is not None]
        return max(ratios) if len(ratios) == len(SIZES) else None

    return measure


TARGETS = [
    Target("composite aggregate log-prob, {impl} distribution / raw log_softmax gathers in "
           "Categorical's form, logits - logsumexp (max over batch sizes)", "<= 2",
           _worst_over(_yardstick("raw_log_softmax_gather")), lambda v: v <= 2,
           versus="torchrl"),
    # the two accounts of issue #45 (no target): against any form, and beyond torch's own
    Target("composite aggregate log-prob, {impl} distribution / the faster raw form at each "
           "batch size (torch.log_softmax or logits - logsumexp, cycle by cycle; max over batch "
           "sizes)", "what torch's Categorical constructor and the tensordict plumbing cost "
           "beyond the least work of any form (docs/benchmarks.md)",
           _worst_over(_fastest_raw_form), None, versus="torchrl"),
    Target("composite aggregate log-prob, {impl} distribution / torch's Categorical per head "
           "and a gather (max over batch sizes)", "what the implementation does beyond torch's "
           "distributions (docs/benchmarks.md)",
           _worst_over(_yardstick("torch_categorical_gather")), None, versus="torchrl"),
]
