"""§5 sampling, construction and the random stream of a prioritized buffer.

What a TorchRL user reaches when building and sampling a prioritized buffer, beyond the seed
specs:

- ``alpha = 0`` is valid (uniform replay: every item held as 1, weights of 1);
- a draw uses only the generator it is given, whatever numpy's and torch's global streams hold;
- an empty buffer refuses to sample, saying it is empty; a non-positive upper bound on the
  default, a negative ``eps`` or a negative initial priority is refused naming the parameter;
- (capability ``sampler_buffer``) a ``PrioritizedSampler`` built with TorchRL's keywords as
  given: left out, they are TorchRL's defaults (``eps=1e-8``, the largest priority ever given as
  the default, float32 weights); ``dtype=`` is the dtype of the weights; a buffer without a
  generator of its own draws from numpy's global generator (TorchRL's
  ``np.random.uniform(0, p_sum)``), one built with ``generator=`` from that generator (TorchRL's
  ``torch.rand(n, generator) * p_sum``), the tensordict buffer class included.

Oracle: ``conformance.oracles.prioritized_replay.ReplayModel``. The draws of a known stream
are replayed by the spec itself (the same numpy or torch draws, scaled by the model's total
``sum q``): item ``i`` owns the masses in ``[Q_{i-1}, Q_i)`` of the model's prefix sums, and a
mass within ``BOUNDARY_RTOL`` of the total from a boundary is excused (float32 trees round the
boundaries to 6e-8 relative). Priorities are multiples of 1/64 (float32-exact).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conformance import capabilities, device
from conformance._assertions import assert_close, assert_refused_naming, message
from conformance.oracles.prioritized_replay import ReplayModel
from conformance.test_prioritized_replay import Run, _filled, _short
from conformance.test_prioritized_replay_buffer_classes import HistoricalModel

ALPHA, BETA, EPS = 0.6, 0.4, 1e-3
TORCHRL_EPS = 1e-8  # PrioritizedSampler's default eps
TREE_RTOL, RAW_RTOL, WEIGHT_RTOL = 2e-6, 1e-5, 1e-5
BOUNDARY_RTOL = 1e-6
PER_PAPER = "https://arxiv.org/abs/1511.05952"
SAMPLER_DOCS = ("https://github.com/pytorch/rl/blob/v0.14.1/torchrl/data/replay_buffers/"
                "samplers/prioritized.py")
CAPACITY = 16
PRIORITIES = [2.0, 10.0, 3.0, 0.5, 4.0, 1.0, 6.0, 0.25, 8.0, 1.5]


@pytest.fixture
def global_streams():
    """Specs that reseed numpy's and torch's global generators leave them as they found them."""
    np_state, torch_state = np.random.get_state(), torch.random.get_rng_state()
    yield
    np.random.set_state(np_state)
    torch.random.set_rng_state(torch_state)


def _disturb(seed: int) -> None:
    """Put numpy's and torch's global generators somewhere a buffer must not depend on."""
    np.random.seed(seed)
    torch.manual_seed(seed)


# ------------------------------------------------------------ through the seed interface


def test_alpha_zero_samples_uniformly(prioritized_replay):
    """``alpha = 0`` (no prioritisation: uniform replay, the end of an annealing schedule) is
    a valid exponent: every item is held as (p + eps)^0 = 1, whatever its priority, new items
    too, and every importance weight is 1."""
    run = _filled(prioritized_replay, 8, PRIORITIES[:6], alpha=0.0)
    run.check_tree(what="tree values at alpha = 0 != 1")
    run.extend(2)
    run.check_sample(256, seed=41)


def test_draws_depend_only_on_the_generator(prioritized_replay, global_streams):
    """The same generator seed gives the same draws, whatever numpy's and torch's global
    generators hold (the interface hands the buffer its generator: a draw from any other
    stream, e.g. numpy's global one TorchRL uses when a buffer has none, is not reproducible
    by it). Two draws of 512 with seed 42, the global streams reseeded (1, then 2) between."""
    run = _filled(prioritized_replay, CAPACITY, PRIORITIES)
    draws = []
    for disturbance in (1, 2):
        _disturb(disturbance)
        draws.append(np.asarray(run.check_sample(512, seed=42).index))
    if not np.array_equal(draws[0], draws[1]):
        differ = np.flatnonzero(draws[0] != draws[1])
        raise AssertionError(message(
            "two draws with the same generator seed differ: the buffer draws from another "
            "stream than the generator it was given", params=run.params(batch=512, seed=42),
            expected=f"indices {_short(draws[0])}", actual=f"indices {_short(draws[1])}",
            detail=f"{len(differ)} of 512 differ, first at draw {int(differ[0])}",
            link=SAMPLER_DOCS))


def test_sampling_an_empty_buffer_is_refused(prioritized_replay):
    """``sample`` of a buffer that holds nothing raises, saying the buffer (storage) is
    empty, and the buffer samples normally once items are written."""
    run = Run(prioritized_replay, capacity=8)
    try:
        draw = run.buf.sample(4, device.generator(43))
    except Exception as exc:  # noqa: BLE001 - any error type, its words are the spec
        if "empty" not in str(exc).lower():
            raise AssertionError(message(
                "sampling an empty buffer is refused without saying it is empty",
                params=run.params(batch=4), expected="an error whose message says 'empty'",
                actual=f"{type(exc).__name__}: {exc}")) from exc
    else:
        raise AssertionError(message(
            "sample() of an empty buffer returned draws", params=run.params(batch=4),
            expected="an error saying the buffer is empty",
            actual=f"indices {_short(draw.index)}"))
    run.extend(3)
    run.check_sample(64, seed=44)


@pytest.mark.parametrize("upper", [0.0, -1.0], ids=lambda u: f"upper={u:g}")
def test_a_non_positive_upper_bound_is_refused_naming_it(prioritized_replay, upper):
    """An upper bound on the default priority must be positive: 0 would give every new item
    priority 0 (never sampled once eps is 0), a negative one a negative priority. Where the
    implementation has the bound (``upper_priority=4`` builds), ``upper_priority=0`` or ``-1``
    is refused at once, the error naming the parameter and the value."""
    kwargs = {"capacity": 8, "alpha": ALPHA, "beta": BETA, "eps": EPS,
              **device.keyword(prioritized_replay)}
    prioritized_replay.buffer(**kwargs, upper_priority=4.0)  # has the bound at all
    assert_refused_naming(lambda: prioritized_replay.buffer(**kwargs, upper_priority=upper),
                          "upper_priority", upper, params={**kwargs, "upper_priority": upper})



# ------------------------------------------------ capability sampler_buffer: the keywords


@pytest.fixture
def keywords(request, impl, prioritized_replay):
    return capabilities.require(request, impl, "prioritized_replay", prioritized_replay,
                                "sampler_buffer")


def _keyword_run(area, options: dict, *, kind: str = "ReplayBuffer", generator=None,
                 model: ReplayModel | None = None) -> Run:
    """A Run over ``area.sampler_buffer``, next to ``model`` (default: the historical rule of
    TorchRL's defaults, with the eps the options give)."""
    run = Run.__new__(Run)
    shown = ", ".join(f"{k}={v}" for k, v in options.items())
    run.area = area
    run.log = [f"{kind}(PrioritizedSampler({CAPACITY}, {ALPHA}, {BETA}{', ' + shown if shown else ''})"
               f"{', generator' if generator is not None else ''})"]
    run.buf = area.sampler_buffer(kind=kind, capacity=CAPACITY, alpha=ALPHA, beta=BETA,
                                  options=options, generator=generator,
                                  **device.keyword(area))
    run.model = model if model is not None else HistoricalModel(
        CAPACITY, ALPHA, BETA, options.get("eps", TORCHRL_EPS),
        initial_priority=float(area.initial_priority))
    return run


def _fill(run: Run, priorities) -> None:
    run.extend(len(priorities), check=False)
    run.update(np.arange(len(priorities)), priorities)


def _check_state(run: Run, what: str) -> None:
    __tracebackhide__ = True
    run.check_len()
    assert_close(f"tree values {what} != (p + eps)^alpha", run.buf.tree_values(),
                 run.model.tree_values(), params=run.params(), rtol=TREE_RTOL,
                 link=SAMPLER_DOCS)
    assert_close(f"default priority {what} != largest priority ever given",
                 float(run.buf.default_priority()), run.model.default_priority(),
                 params=run.params(), rtol=RAW_RTOL, link=SAMPLER_DOCS)


def _check_draw(run: Run, draw, mass: np.ndarray, what: str, dtype=np.float32) -> None:
    """Indices, items and weights of ``draw``, each index the item owning its mass (masses
    within rounding of a boundary excused), weights in ``dtype``."""
    __tracebackhide__ = True
    m = run.model
    index = np.asarray(draw.index, dtype=np.int64)
    q = m.probabilities() * m.transform(m.priority[m.stored()]).sum()
    bounds = np.cumsum(q)
    expected = np.searchsorted(bounds, mass, side="right")
    near = np.abs(mass[:, None] - bounds[None, :]).min(1) <= BOUNDARY_RTOL * bounds[-1]
    params = run.params(batch=len(mass))
    if index.shape != mass.shape:
        raise AssertionError(message(
            "sampled indices of a one-dimensional storage are not one vector of indices",
            params=params, expected=f"shape {mass.shape}", actual=f"shape {index.shape}",
            link=SAMPLER_DOCS))
    wrong = (index != expected) & ~near
    if len(index) != len(mass) or wrong.any():
        first = int(np.flatnonzero(wrong)[0]) if wrong.any() else 0
        raise AssertionError(message(
            f"draws do not follow {what}", params=params,
            expected=f"indices {_short(expected)} (the item owning each mass)",
            actual=f"indices {_short(index)}",
            detail=(f"{int(wrong.sum())} of {len(mass)} draws differ; first: draw {first}, "
                    f"mass {mass[first]:.6g} of {bounds[-1]:.6g}"),
            link=SAMPLER_DOCS))
    items = m.items_at(index)
    if not np.array_equal(np.asarray(draw.item), items):
        raise AssertionError(message(
            "sample() returned items other than those stored at the indices it reports",
            params=params, expected=items, actual=np.asarray(draw.item)))
    weight = np.asarray(draw.weight)
    if weight.dtype != dtype:
        raise AssertionError(message(
            "importance weights come in another dtype than the sampler's", params=params,
            expected=np.dtype(dtype).name, actual=weight.dtype.name, link=SAMPLER_DOCS))
    assert_close("importance weights != (q_i / min_j q_j)^-beta", weight,
                 m.importance_weights(index), params=params, rtol=WEIGHT_RTOL,
                 link=PER_PAPER)


def _total(run: Run) -> float:
    m = run.model
    return float(m.transform(m.priority[m.stored()]).sum())


def test_sampler_defaults_are_torchrls(keywords, global_streams):
    """``PrioritizedSampler(capacity, alpha, beta)`` with no other keyword: eps is 1e-8 (the
    tree holds (p + 1e-8)^alpha), the default priority is the largest priority ever given
    (``max_priority_within_buffer=False``: lowering the maximum does not lower it), the
    weights are float32, and with no generator the masses are numpy's
    ``np.random.uniform(0, sum q)`` (seed 45)."""
    run = _keyword_run(keywords, {})
    _fill(run, PRIORITIES)
    _check_state(run, "of a sampler built with TorchRL's defaults")
    run.update([1], [0.125])  # the maximum (10) lowered: the default stays 10
    run.extend(2, check=False)
    _check_state(run, "after lowering the maximum and writing two items")
    np.random.seed(45)
    mass = np.random.uniform(0.0, _total(run), 256)
    np.random.seed(45)
    _check_draw(run, keywords.draw(run.buf, 256), mass,
                "numpy's global stream (np.random.uniform(0, sum q), seed 45)")


@pytest.mark.parametrize("dtype", ["float32", "float64"], ids=lambda d: f"dtype={d}")
def test_weights_come_in_the_samplers_dtype(keywords, dtype, global_streams):
    """``PrioritizedSampler(..., dtype=torch.<dtype>, device="cpu")``: the importance weights
    come in that dtype (TorchRL keeps its trees in it), with the right values."""
    run = _keyword_run(keywords, {"eps": EPS, "dtype": getattr(torch, dtype), "device": "cpu"})
    _fill(run, PRIORITIES)
    _check_state(run, f"of a sampler built with dtype={dtype}")
    np.random.seed(46)
    mass = np.random.uniform(0.0, _total(run), 256)
    np.random.seed(46)
    _check_draw(run, keywords.draw(run.buf, 256), mass, "numpy's global stream (seed 46)",
                dtype=np.dtype(dtype))


@pytest.mark.parametrize("kind", ["ReplayBuffer", "TensorDictPrioritizedReplayBuffer"])
def test_a_buffers_own_generator_sets_its_draws(keywords, kind, global_streams):
    """A buffer built with ``generator=torch.Generator().manual_seed(47)`` draws from it,
    whatever numpy's and torch's global generators hold: the masses of two draws of 128 are
    ``torch.rand(128, generator) * sum q`` in turn (TorchRL's stream), for a ReplayBuffer
    holding a PrioritizedSampler and for TensorDictPrioritizedReplayBuffer."""
    run = _keyword_run(keywords, {"eps": EPS}, kind=kind,
                       generator=torch.Generator().manual_seed(47))
    _fill(run, PRIORITIES)
    replay = torch.Generator().manual_seed(47)
    for disturbance in (3, 4):
        _disturb(disturbance)
        u = torch.rand(128, generator=replay).to(torch.float64).numpy()
        _check_draw(run, keywords.draw(run.buf, 128), u * _total(run),
                    "the buffer's own generator (torch.rand(n, generator) * sum q, seed 47)")


@pytest.mark.parametrize("name, value", [("eps", -0.5), ("initial_priority", -1.0)],
                         ids=["eps=-0.5", "initial_priority=-1"])
def test_a_negative_keyword_is_refused_naming_it(keywords, name, value):
    """A negative ``eps`` makes (p + eps)^alpha NaN for priorities below -eps (the whole tree
    NaN); a negative initial priority is no priority. ``PrioritizedSampler(..., name=value)``
    is refused at once, the error naming the parameter and the value."""
    assert_refused_naming(lambda: _keyword_run(keywords, {name: value}), name, value,
                          params={"capacity": CAPACITY, "alpha": ALPHA, "beta": BETA, name: value})


@pytest.mark.parametrize("initial", [0.5, 0.0], ids=lambda v: f"initial_priority={v:g}")
def test_initial_priority_is_the_first_default(keywords, initial):
    """``initial_priority=`` (the default of an empty buffer; TorchRL's is 1.0) may be any
    priority >= 0: the first items get it, then the largest priority ever given."""
    options = {"eps": EPS, "initial_priority": initial}
    run = _keyword_run(keywords, options, model=HistoricalModel(
        CAPACITY, ALPHA, BETA, EPS, initial_priority=initial))
    _check_state(run, f"of an empty buffer with initial_priority={initial:g}")
    run.extend(3, check=False)
    _check_state(run, "after the first items")
    run.update([0], [2.0])
    run.extend(1, check=False)
    _check_state(run, "after a priority of 2")


def test_zero_mass_is_refused_with_torchrls_error(keywords):
    """eps = 0 and every priority 0 (no item has any probability): ``sample`` raises
    TorchRL's ``RuntimeError("non-positive p_sum")``, the error a drop-in's users already
    handle and match."""
    run = _keyword_run(keywords, {"eps": 0.0}, model=HistoricalModel(CAPACITY, ALPHA, BETA, 0.0))
    _fill(run, [0.0] * 4)
    try:
        keywords.draw(run.buf, 8)
    except Exception as exc:  # noqa: BLE001 - the type and the words are the spec
        if type(exc) is RuntimeError and str(exc) == "non-positive p_sum":
            return
        raise AssertionError(message(
            "the refusal to sample a buffer of total priority 0 is not TorchRL's",
            params=run.params(batch=8), expected="RuntimeError: non-positive p_sum",
            actual=f"{type(exc).__name__}: {exc}", link=SAMPLER_DOCS)) from exc
    raise AssertionError(message(
        "sample() of a buffer whose every q = (0 + 0)^alpha is 0 returned draws",
        params=run.params(batch=8), expected="RuntimeError: non-positive p_sum",
        actual="draws", link=SAMPLER_DOCS))


REDUCTIONS = {"max": np.max, "mean": np.mean, "min": np.min}


@pytest.mark.parametrize("reduction", [None, "mean", "min"],
                         ids=lambda r: f"reduction={r or 'default'}")
def test_td_error_rows_reduce_by_the_samplers_reduction(keywords, reduction):
    """A ``TensorDictReplayBuffer`` holding ``PrioritizedSampler(..., reduction=...)`` (left
    out: TorchRL's default ``"max"``): a ``td_error`` of three columns per item (a loss over
    several heads or time steps) becomes one priority per item, the row's max, mean or min,
    and the tree holds ((row reduced) + eps)^alpha. Seeded (48)."""
    options = {"eps": EPS} if reduction is None else {"eps": EPS, "reduction": reduction}
    run = _keyword_run(keywords, options, kind="TensorDictReplayBuffer")
    run.extend(6, check=False)
    td_error = np.random.default_rng(48).integers(1, 640, (6, 3)) / 64.0
    keywords.update_td_error(run.buf, np.arange(6), td_error)
    reduced = REDUCTIONS[reduction or "max"](td_error, axis=1)
    run.model.update(np.arange(6), reduced)
    run.log.append(f"update_tensordict_priority(td_error {td_error.shape}, reduced by "
                   f"{reduction or 'the default, max'})")
    _check_state(run, f"after a td_error of three columns (reduction={reduction or 'default'})")
