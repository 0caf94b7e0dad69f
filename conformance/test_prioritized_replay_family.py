"""§5 family: checkpoints of a prioritized *trajectory* buffer (slices of trajectories, the
common case in practice), beyond the seed specs' single round trip of a PrioritizedSampler.

- A checkpoint restores every priority and the tracked maximum, into a freshly built empty
  buffer and into one that already holds other data, and survives repeated round trips
  (save, load into a new buffer, save that, ...): ``PrioritizedSliceSampler`` saved and
  restored no priority state until pytorch/rl#3990 (``SliceSampler``'s empty ``state_dict``
  came first in its bases).
- Loading does not alias the checkpoint: writes to the buffer that loaded it (new priorities,
  new items) leave the checkpoint as it was, so loading it again elsewhere restores the same
  state (pytorch/rl#3966: ``load_state_dict`` kept the caller's tree objects).

Oracle: ``conformance.oracles.prioritized_replay.ReplayModel`` (raw priorities, the tree value
``(p + eps)^alpha`` of each, the largest stored priority as the default). Every buffer is filled
exactly to capacity and every priority is set explicitly, so no eviction rule and no initial
priority is involved. Sampling is compared draw for draw against the buffer the checkpoint came
from, with the same generator seed. Tolerance rtol 1e-5 (float32 trees).
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance import capabilities, device
from conformance._assertions import assert_close, message
from conformance.oracles.prioritized_replay import ReplayModel

RL_3990 = "https://github.com/pytorch/rl/pull/3990"
RL_3966 = "https://github.com/pytorch/rl/pull/3966"
CAPACITY, TRAJ_LEN, SLICE_LEN, BATCH = 32, 8, 4, 16
ALPHA, BETA, EPS = 0.7, 0.5, 1e-3
RTOL = 1e-5
NO_STATE = ("the slice sampler's checkpoint holds no priority state: its state_dict / "
            "load_state_dict are SliceSampler's (empty), which come first in the bases of "
            "PrioritizedSliceSampler")
ALIASED = ("load_state_dict kept references to the checkpoint's objects (its trees): writes to "
           "the buffer that loaded it changed the checkpoint")


def _priorities(seed: int) -> np.ndarray:
    """Distinct priorities on a 1/16 grid (exact in float32), one per slot."""
    rng = np.random.default_rng(seed)
    return (rng.permutation(CAPACITY * 4)[:CAPACITY] + 1) / 16.0


class Run:
    """A slice buffer and its oracle, filled to capacity with explicit priorities."""

    def __init__(self, area, seed: int):
        self.area = area
        self.buf = new_buffer(area)
        self.model = ReplayModel(CAPACITY, ALPHA, BETA, EPS)
        index = self.buf.extend(CAPACITY)
        if device.declares(area):  # a slice sampler may place its trees with its first items
            device.check_placed(self.buf, "the slice buffer")
        self.model.extend(CAPACITY)
        self.set(index, _priorities(seed))

    def set(self, index, priority) -> None:
        self.buf.update_priority(np.asarray(index), np.asarray(priority, dtype=np.float64))
        self.model.update(np.asarray(index), np.asarray(priority, dtype=np.float64))


def new_buffer(area):
    return area.slice_buffer(capacity=CAPACITY, alpha=ALPHA, beta=BETA, eps=EPS,
                             slice_len=SLICE_LEN, traj_len=TRAJ_LEN, **device.keyword(area))


def check_restored(buf, model: ReplayModel, *, params: dict, cause: str, link: str,
                   reference=None) -> None:
    """Tree values, default priority and (against ``reference``) the draws of ``buf``."""
    __tracebackhide__ = True
    assert_close("tree values after loading the checkpoint != (p + eps)^alpha of the "
                 "checkpointed priorities", buf.tree_values(), model.tree_values(),
                 params=params, rtol=RTOL, cause=cause, link=link)
    assert_close("default priority after loading the checkpoint != largest checkpointed "
                 "priority", buf.default_priority(), model.default_priority(), params=params,
                 rtol=RTOL, cause=cause, link=link)
    if reference is None:
        return
    got = buf.sample(BATCH, device.generator(5))
    want = reference.sample(BATCH, device.generator(5))
    if not np.array_equal(got.index, want.index):
        raise AssertionError(message(
            "slices drawn from the restored buffer differ from the checkpointed buffer's "
            "(same generator seed)", params=params, expected=want.index, actual=got.index,
            cause=cause, link=link))
    if not np.array_equal(got.item, model.items_at(got.index)):
        raise AssertionError(message(
            "items returned by the restored buffer are not the checkpointed ones",
            params=params, expected=model.items_at(got.index), actual=got.item, cause=cause,
            link=link))
    assert_close("importance weights of the restored buffer != the checkpointed buffer's",
                 got.weight, want.weight, params=params, rtol=RTOL, cause=cause, link=link)


@pytest.fixture
def slices(request, impl, prioritized_replay):
    return capabilities.require(request, impl, "prioritized_replay", prioritized_replay,
                                "slice_buffer")


@pytest.mark.parametrize("into", ["empty", "filled"], ids=lambda x: f"into={x}")
@pytest.mark.parametrize("rounds", [1, 3], ids=lambda r: f"round-trips={r}")
def test_slice_checkpoint_restores_the_priorities(slices, rounds, into):
    """Save, load into a new buffer (built empty, or already holding other priorities), save
    that one, ... ``rounds`` times: every priority, the maximum and the draws come back."""
    source = Run(slices, seed=21)
    params = {"capacity": CAPACITY, "traj_len": TRAJ_LEN, "slice_len": SLICE_LEN,
              "alpha": ALPHA, "eps": EPS, "round trips": rounds, "into": into}
    buf = source.buf
    for _ in range(rounds):
        state = buf.state_dict()
        buf = Run(slices, seed=99).buf if into == "filled" else new_buffer(slices)
        buf.load_state_dict(state)
    check_restored(buf, source.model, params=params, cause=NO_STATE, link=RL_3990,
                   reference=source.buf)


def test_loaded_checkpoint_is_not_aliased(slices):
    """Load a checkpoint into buffer B, then give B new priorities and new items; loading the
    same checkpoint into buffer C restores the checkpointed state, not B's."""
    source = Run(slices, seed=22)
    state = source.buf.state_dict()
    b = new_buffer(slices)
    b.load_state_dict(state)
    params = {"capacity": CAPACITY, "traj_len": TRAJ_LEN, "alpha": ALPHA, "eps": EPS}
    # a checkpoint that restores nothing would fail below for another reason: say which
    check_restored(b, source.model, params={**params, "buffer": "B, just loaded"},
                   cause=NO_STATE, link=RL_3990)
    everything = np.arange(CAPACITY)
    b.update_priority(everything, _priorities(23))
    b.extend(TRAJ_LEN)  # a new trajectory over the oldest
    c = new_buffer(slices)
    c.load_state_dict(state)
    params["buffer"] = "C, loaded after B got new priorities and a new trajectory"
    check_restored(c, source.model, params=params, cause=ALIASED, link=RL_3966,
                   reference=source.buf)
