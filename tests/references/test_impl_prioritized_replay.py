"""The reference ``impls.PrioritizedSampler`` and its ``SegmentTree``: brute-force checks of the
trees, the sampler as a drop-in inside TorchRL replay buffers, checkpoints, and the O(log N)
claim checked structurally (no operation materialises anything of the buffer's size)."""

import math
import random
import warnings

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import impls.segment_tree as P
from impls import PrioritizedSampler, SegmentTree

OPS = {"sum": torch.sum, "min": torch.amin, "max": torch.amax}
# (MAX_BRANCHING, MAX_TOP) of impls.segment_tree while a tree is built: deep trees at small sizes
SHAPES = [(2, 2), (4, 8), (3, 5), (32, 1024), (32, 4)]


def _tree(size, reduce, shape):
    """A ``SegmentTree`` shaped with the module's limits lowered to ``shape`` (the shape is
    fixed at construction; the limits are restored at once)."""
    saved = P.MAX_BRANCHING, P.MAX_TOP
    P.MAX_BRANCHING, P.MAX_TOP = shape
    try:
        return SegmentTree(size, reduce)
    finally:
        P.MAX_BRANCHING, P.MAX_TOP = saved


def _brute(size, ops):
    return torch.tensor([P._NEUTRAL[o] for o in ops], dtype=torch.float64)[:, None].repeat(1, size)


@pytest.mark.parametrize("size", [1, 2, 5, 17, 64, 65, 1000, 1025, 5000])
@pytest.mark.parametrize("reduce", ["sum", "min", "max", ("sum", "min", "min"), ("max", "sum")],
                         ids=str)
def test_tree_matches_brute_force(size, reduce):
    rng = random.Random(size)
    ops = (reduce,) if isinstance(reduce, str) else reduce
    for shape in SHAPES:
        tree = _tree(size, reduce, shape)
        values = _brute(size, ops)
        for _ in range(6):
            idx = torch.randperm(size)[: rng.randint(1, size)]
            v = torch.rand(len(ops), len(idx), dtype=torch.float64)
            tree.set(idx, v[0] if isinstance(reduce, str) else v)
            values[:, idx] = v
        expected = torch.stack([OPS[o](values[c]) for c, o in enumerate(ops)])
        assert torch.allclose(tree.root, expected[0] if isinstance(reduce, str) else expected,
                              rtol=1e-14, atol=0)
        for _ in range(6):
            a = rng.randint(0, size - 1)
            b = rng.randint(a + 1, size)
            e = torch.stack([OPS[o](values[c, a:b]) for c, o in enumerate(ops)])
            assert torch.allclose(tree.query(a, b), e[0] if isinstance(reduce, str) else e)
        rebuilt = _tree(size, reduce, shape)
        rebuilt.levels[0][:, :size] = values
        rebuilt.rebuild()
        assert torch.allclose(rebuilt.root, tree.root)


@pytest.mark.parametrize("size", [1, 5, 64, 1000, 5000])
def test_filling_one_channel_leaves_the_tree_a_rebuild_would_give(size):
    """``fill_channel`` (the sampler's eviction) writes one channel's leaves and its ancestors
    only: every level of every channel equals a rebuild from the leaves."""
    rng = random.Random(size)
    ops = ("sum", "min", "min")
    for shape in SHAPES:
        tree = _tree(size, ops, shape)
        tree.set(torch.arange(size), torch.rand(3, size, dtype=torch.float64))
        for channel, value in ((2, math.inf), (1, 0.25), (0, 0.0)):
            idx = torch.randperm(size)[: rng.randint(1, size)]
            tree.fill_channel(channel, idx, value)
            rebuilt = _tree(size, ops, shape)
            rebuilt.levels[0].copy_(tree.levels[0])
            rebuilt.rebuild()
            assert (tree.levels[0][channel, idx] == value).all()
            for mine, theirs in zip(tree.levels, rebuilt.levels, strict=True):
                assert torch.equal(mine, theirs)


@pytest.mark.parametrize("size", [1, 3, 64, 1000, 5000])
def test_scan_is_an_inverse_cdf_that_skips_empty_leaves(size):
    for shape in SHAPES:
        tree = _tree(size, "sum", shape)
        values = torch.rand(size, dtype=torch.float64)
        values[torch.rand(size) < 0.3] = 0.0  # empty leaves anywhere, the last one too
        values[-1] = 0.0
        values[0] = 0.5
        tree[torch.arange(size)] = values
        total = float(tree.root)
        mass = torch.rand(2000, dtype=torch.float64) * total
        mass[:4] = torch.tensor([0.0, total, total * (1 + 1e-12), math.nextafter(total, 0)])
        found = tree.scan_lower_bound(mass)
        expected = torch.searchsorted(values.cumsum(0), mass, right=True)
        last_positive = int(values.nonzero().max())
        assert torch.equal(found, expected.clamp_max(last_positive))
        assert (values[found] > 0).all()


def test_scan_survives_rounding_across_magnitudes():
    """Leaves from 1e-12 to 1e6: masses at every prefix-sum boundary never reach an empty leaf
    and land on a leaf whose interval contains them up to rounding."""
    g = torch.Generator().manual_seed(0)
    size = 4096
    values = 10.0 ** (torch.rand(size, generator=g, dtype=torch.float64) * 18 - 12)
    values[-300:] = 0.0
    tree = _tree(size, "sum", (8, 16))
    tree[torch.arange(size)] = values
    inclusive = values.cumsum(0)
    mass = torch.cat([inclusive, inclusive - values, tree.root.expand(4)])
    found = tree.scan_lower_bound(mass)
    assert (values[found] > 0).all()
    lo, hi = (inclusive - values)[found], inclusive[found]
    tol = 1e-12 * float(tree.root)
    assert ((mass >= lo - tol) & (mass <= hi + tol)).all()


def _torchrl_buffer(sampler, capacity, **kwargs):
    from torchrl.data import LazyTensorStorage, ReplayBuffer

    return ReplayBuffer(storage=LazyTensorStorage(capacity), sampler=sampler, **kwargs)


def test_drop_in_for_torchrl_prioritized_sampler():
    from torchrl.data import PrioritizedSampler as Upstream

    sampler = PrioritizedSampler(8, alpha=0.7, beta=0.5, max_priority_within_buffer=True)
    assert isinstance(sampler, Upstream)
    rb = _torchrl_buffer(sampler, 8, batch_size=16)
    rb.extend(torch.arange(8))
    rb.update_priority(torch.arange(8), torch.tensor([1.0, 2, 0.5, 10, 1.5, 3, 0.7, 2.5]))
    rb.set_rng(torch.Generator().manual_seed(0))
    data, info = rb.sample(return_info=True)
    assert torch.equal(data, info["index"])  # item i sits at slot i
    # q as TorchRL computes it: in the priorities' dtype (float32 here)
    q = ((torch.tensor([1.0, 2, 0.5, 10, 1.5, 3, 0.7, 2.5]) + 1e-8) ** 0.7).double()
    expected = (q[info["index"]] / q.min()) ** -0.5
    assert torch.allclose(info["priority_weight"].double(), expected, rtol=1e-6)
    assert info["priority_weight"].dtype == torch.float32
    rb.extend(torch.tensor([100]))  # over slot 0 (priority 1): gets the maximum 10
    assert float(sampler._sum_tree[0]) == pytest.approx(float(q[3]), rel=1e-12)


def test_drop_in_in_a_tensordict_replay_buffer():
    from tensordict import TensorDict
    from torchrl.data import LazyTensorStorage, TensorDictReplayBuffer

    sampler = PrioritizedSampler(16, alpha=1.0, beta=1.0, eps=0.0,
                                 max_priority_within_buffer=True)
    rb = TensorDictReplayBuffer(storage=LazyTensorStorage(16), sampler=sampler,
                                priority_key="td_error", batch_size=4)
    rb.extend(TensorDict({"obs": torch.arange(6.0)}, [6]))
    batch = rb.sample()
    batch["td_error"] = torch.full((4,), 5.0)
    rb.update_tensordict_priority(batch)
    touched = batch["index"].unique()
    assert torch.equal(sampler._sum_tree[touched], torch.full(touched.shape, 5.0,
                                                              dtype=torch.float64))
    assert float(sampler.default_priority) == 5.0


def test_historical_mode_matches_torchrl():
    """With max_priority_within_buffer=False both keep the largest priority ever seen."""
    from torchrl.data import PrioritizedSampler as Upstream

    rng = np.random.default_rng(3)
    ours = _torchrl_buffer(PrioritizedSampler(12, 0.6, 0.4), 12)
    theirs = _torchrl_buffer(Upstream(12, 0.6, 0.4), 12)
    for step in range(60):
        if step % 3 == 0:
            rows = int(rng.integers(1, 4))
            for rb in (ours, theirs):
                rb.extend(torch.zeros(rows))
        else:
            n = len(ours)
            index = torch.as_tensor(rng.choice(n, size=min(n, 3), replace=False))
            priority = torch.as_tensor(rng.integers(1, 640, len(index)) / 64.0).float()
            for rb in (ours, theirs):
                rb.update_priority(index, priority)
        assert float(ours.sampler.default_priority) == pytest.approx(
            float(theirs.sampler.default_priority), rel=1e-6)
        index = torch.arange(len(ours))
        assert torch.allclose(ours.sampler._sum_tree[index],
                              torch.as_tensor(theirs.sampler._sum_tree[index]).double(),
                              rtol=1e-6)


def test_repeated_and_negative_indices():
    sampler = PrioritizedSampler(6, alpha=1.0, beta=1.0, eps=0.0,
                                 max_priority_within_buffer=True)
    sampler.mark_update(torch.arange(6))
    sampler.update_priority(torch.tensor([3, 1, 3, -1]), torch.tensor([9.0, 2.0, 4.0, 50.0]))
    assert sampler._sum_tree[torch.tensor([1, 3])].tolist() == [2.0, 4.0]  # last repeat wins
    assert float(sampler.default_priority) == 4.0  # in every channel; -1 ignored
    sampler.update_priority(torch.tensor([-1]), torch.tensor([7.0]))
    assert float(sampler.default_priority) == 4.0


def test_two_dimensional_storage_indices():
    from torchrl.data import LazyTensorStorage, ReplayBuffer

    sampler = PrioritizedSampler(12, alpha=1.0, beta=1.0, eps=0.0,
                                 max_priority_within_buffer=True)
    rb = ReplayBuffer(storage=LazyTensorStorage(12, ndim=2), sampler=sampler, dim_extend=0)
    rb.extend(torch.arange(12).reshape(4, 3))
    rb.update_priority(torch.tensor([[1, 2], [3, 0]]), torch.tensor([6.0, 2.0]))
    assert sampler._sum_tree[torch.tensor([5, 9])].tolist() == [6.0, 2.0]
    rb.set_rng(torch.Generator().manual_seed(1))
    data, info = rb.sample(32, return_info=True)
    rows, cols = info["index"]
    assert torch.equal(data, rows * 3 + cols)


def test_upper_and_initial_priority():
    sampler = PrioritizedSampler(4, 0.5, 0.5, max_priority_within_buffer=True,
                                 upper_priority=3.0, initial_priority=0.25)
    assert float(sampler.default_priority) == 0.25
    sampler.mark_update(torch.arange(2))
    sampler.update_priority(torch.tensor([0]), torch.tensor([10.0]))
    assert float(sampler.default_priority) == 3.0
    with pytest.raises(ValueError):
        PrioritizedSampler(4, 0.5, 0.5, upper_priority=0.0)


def test_alpha_changes_are_exact_even_through_zero():
    sampler = PrioritizedSampler(5, alpha=0.6, beta=0.5, eps=0.0,
                                 max_priority_within_buffer=True)
    sampler.mark_update(torch.arange(5))
    raw = torch.tensor([1.0, 4.0, 9.0, 0.5, 2.0], dtype=torch.float64)
    sampler.update_priority(torch.arange(5), raw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "cannot recover" warning: nothing is lost
        sampler.alpha = 0.0
        assert torch.equal(sampler._sum_tree[torch.arange(5)], torch.ones(5, dtype=torch.float64))
        sampler.alpha = 0.5
    assert torch.allclose(sampler._sum_tree[torch.arange(5)], raw.sqrt(), rtol=1e-15)
    assert float(sampler.default_priority) == 9.0


def test_state_dict_and_dumps_round_trip(tmp_path):
    def filled():
        rb = _torchrl_buffer(PrioritizedSampler(6, 0.6, 0.4, max_priority_within_buffer=True), 6)
        rb.extend(torch.arange(4))
        return rb

    rb = filled()
    rb.update_priority(torch.arange(4), torch.tensor([2.0, 10.0, 3.0, 1.0]))
    rb.update_priority(torch.tensor([1]), torch.tensor([0.5]))
    index = torch.arange(6)
    for restore in ("state_dict", "dumps"):
        other = filled()
        other.update_priority(torch.arange(4), torch.tensor([40.0] * 4))
        if restore == "state_dict":
            other.load_state_dict(rb.state_dict())
        else:
            rb.dumps(tmp_path / "rb")
            other.loads(tmp_path / "rb")
        assert float(other.sampler.default_priority) == 3.0
        assert torch.equal(other.sampler._sum_tree[index], rb.sampler._sum_tree[index])
    with pytest.raises(KeyError):
        rb.sampler.load_state_dict({"_alpha": 0.6})


class _LargestOutput(TorchDispatchMode):
    """The largest tensor any aten op creates (in-place results and views excluded)."""

    def __init__(self):
        super().__init__()
        self.largest, self.ops = 0, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.ops += 1
        inputs = [a for a in torch.utils._pytree.tree_leaves((args, kwargs))
                  if isinstance(a, torch.Tensor)]
        storages = {t.untyped_storage().data_ptr() for t in inputs}
        for t in torch.utils._pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in storages:
                self.largest = max(self.largest, t.numel())
        return out


@pytest.mark.slow
@pytest.mark.parametrize("capacity", [1_000, 2**20])
def test_every_operation_is_independent_of_capacity(capacity):
    """extend over the max slot, update_priority(256) and sample(256) create no tensor larger
    than batch x branching x channels (+ the top level), and issue a handful of ops more at 2**20
    than at 1e3: nothing scales with the capacity (O(log N) work; upstream's recompute
    gathers all 2**20 slots)."""
    sampler = PrioritizedSampler(capacity, 0.6, 0.4, max_priority_within_buffer=True)
    rb = _torchrl_buffer(sampler, capacity)
    rb.extend(torch.zeros(capacity))
    rb.update_priority(torch.arange(capacity), torch.rand(capacity) + 0.5)
    index = torch.randperm(capacity)[:256]
    rb.update_priority(torch.tensor([0]), torch.tensor([99.0]))  # the next write's slot: the max
    counts = {}
    for name, op in {
        "extend over max": lambda: sampler.mark_update(torch.tensor([0])),
        "update(256)": lambda: sampler.update_priority(index, torch.rand(256)),
        "sample(256)": lambda: sampler.sample(rb._storage, 256),
    }.items():
        with _LargestOutput() as mode:
            op()
        channels = len(sampler._tree.ops)
        bound = channels * (256 * sampler._tree.branching + P.MAX_TOP)
        assert mode.largest <= bound < capacity or capacity <= bound, (name, mode.largest)
        counts[name] = mode.ops
    assert float(sampler.default_priority) < 99.0  # the evicted maximum is gone
    counts["height"] = sampler._tree.height
    test_every_operation_is_independent_of_capacity.counts[capacity] = counts
    if len(test_every_operation_is_independent_of_capacity.counts) == 2:
        small, large = test_every_operation_is_independent_of_capacity.counts.values()
        levels = large["height"] - small["height"]  # 0 levels below the top at 1e3, 2 at 2**20
        for name in small:  # at most a dozen ops per level, times two writes for an extend
            assert large[name] <= small[name] + 24 * levels, (name, small[name], large[name])


test_every_operation_is_independent_of_capacity.counts = {}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_trees():
    sampler = PrioritizedSampler(64, 0.6, 0.4, max_priority_within_buffer=True, device="cuda")
    sampler.mark_update(torch.arange(64, device="cuda"))
    sampler.update_priority(torch.arange(64, device="cuda"), torch.rand(64, device="cuda"))

    class Storage:
        ndim = 1

        def __len__(self):
            return 64

    index, info = sampler.sample(Storage(), 128)
    assert index.device.type == "cuda" and info["priority_weight"].device.type == "cuda"


# ------------------------------------------------------------- interchangeable with TorchRL
def _td_buffers(capacity=64, **kwargs):
    """A TorchRL TensorDictPrioritizedReplayBuffer and the reference one, same arguments."""
    from torchrl.data import LazyTensorStorage
    from torchrl.data import TensorDictPrioritizedReplayBuffer as Upstream

    import impls

    return [cls(alpha=1.0, beta=0.5, eps=0.0, storage=LazyTensorStorage(capacity), **kwargs)
            for cls in (Upstream, impls.TensorDictPrioritizedReplayBuffer)]


def _fill(rb, n=50):
    """n items, then integer priorities 1..n: exact in float32 and float64 trees alike, so both
    samplers place every item boundary at the same mass."""
    from tensordict import TensorDict

    rb.extend(TensorDict({"x": torch.arange(float(n))}, [n]))
    rb.update_priority(torch.arange(n), torch.arange(1.0, n + 1.0))
    return rb


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_draws_follow_torchrl_numpy_stream(seed):
    """Without a generator TorchRL draws from numpy's global generator: same seed, same
    priorities, same samples, and the same numpy state afterwards."""
    draws, after = [], []
    for rb in _td_buffers():
        _fill(rb)
        np.random.seed(seed)
        draws.append(torch.cat([rb.sample(32)["index"] for _ in range(5)]))
        after.append(np.random.random())
    assert torch.equal(draws[0], draws[1])
    assert after[0] == after[1]


def test_draws_follow_the_buffer_generator():
    draws = []
    for rb in _td_buffers():
        _fill(rb)
        rb.set_rng(torch.Generator().manual_seed(7))
        draws.append(torch.cat([rb.sample(32)["index"] for _ in range(5)]))
    assert torch.equal(draws[0], draws[1])


def test_tensordict_prioritized_buffer_holds_the_reference_sampler():
    import impls

    for sync in (True, False):
        rb = impls.TensorDictPrioritizedReplayBuffer(
            alpha=0.7, beta=0.5, storage=__import__("torchrl.data").data.LazyTensorStorage(8),
            sync=sync, generator=torch.Generator().manual_seed(0))
        assert isinstance(rb.prioritized_sampler, impls.PrioritizedSampler)
        assert rb.prioritized_sampler._rng is not None  # the constructor's generator is kept
    rb = impls.PrioritizedReplayBuffer(alpha=0.7, beta=0.5)
    assert isinstance(rb.sampler, impls.PrioritizedSampler)
    assert rb.sampler._max_capacity == 1000  # upstream's default ListStorage(1000)


def test_default_priority_is_a_float_and_new_items_do_not_warn():
    from tensordict import TensorDict

    rb = _td_buffers()[1]
    assert isinstance(rb.sampler.default_priority, float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rb.extend(TensorDict({"x": torch.arange(4.0)}, [4]))  # no "td_error": default priority


def _same_law(a, b, n=50):
    index = torch.arange(n)
    qa = torch.as_tensor(a.sampler._sum_tree[index], dtype=torch.float64)
    qb = torch.as_tensor(b.sampler._sum_tree[index], dtype=torch.float64)
    assert torch.allclose(qa, qb, rtol=1e-6) and bool((qa > 0).all())
    np.random.seed(3)
    da = a.sample(64)["index"]
    np.random.seed(3)
    assert torch.equal(da, b.sample(64)["index"])


@pytest.mark.parametrize("how", ["state_dict", "dumps"])
def test_checkpoints_load_both_ways(how, tmp_path):
    """A TorchRL buffer's checkpoint restores the reference buffer and the reference's restores
    TorchRL's: same priorities per slot, same draws, nothing zeroed."""
    for source, target in ((0, 1), (1, 0)):
        written = _fill(_td_buffers()[source])
        restored = _td_buffers()[target]
        if how == "state_dict":
            restored.load_state_dict(written.state_dict())
        else:
            written.dumps(tmp_path / f"{source}")
            restored.loads(tmp_path / f"{source}")
        _same_law(written, restored)
        assert float(restored.sampler.default_priority) == pytest.approx(50.0, rel=1e-6)


def test_a_torchrl_checkpoint_at_alpha_zero_gives_every_item_its_maximum():
    upstream, reference = _td_buffers()
    upstream.sampler.alpha = 0.0
    _fill(upstream)
    reference.load_state_dict(upstream.state_dict())  # the raw priorities are not in it
    assert float(reference.sampler.default_priority) == 50.0
    assert torch.equal(reference.sampler._raw_priority[:50], torch.full((50,), 50.0,
                                                                         dtype=torch.float64))


def test_a_foreign_state_dict_is_refused_as_torchrl_refuses_it():
    with pytest.raises(KeyError, match="_sum_tree"):
        PrioritizedSampler(4, 0.6, 0.4).load_state_dict({"_alpha": 0.6, "trees": None})
