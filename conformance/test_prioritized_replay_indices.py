"""§5 Prioritized replay: the indices and priorities ``update_priority`` and ``mark_update`` are
given, in every form TorchRL users and TorchRL's own writers pass them.

The other §5 specs pass one flat long tensor of distinct indices and float32 priorities of the
same length. Training code passes more than that to ``rb.update_priority(index, priority)``:
an int, a list, a 0-d tensor, ``int32`` indices, one number for several indices, integer or
float64 TD errors, a column ``[B, 1]`` of priorities, coordinate pairs (to the buffer or to
its sampler) or a tuple of index tensors (to the buffer) for a two-dimensional storage, a batch longer than the buffer (sampling is with
replacement), repeated indices, and the ``-1`` entries ``TensorDictMaxValueWriter`` writes for
items it did not store. ``mark_update(index)`` (what a writer calls after a write) gets repeats
when one ``extend`` wraps the ring more than once, and ``-1`` entries from the max-value writer.
Through the optional capability ``update_as_given`` (``conformance.interface``:
``PrioritizedIndexForms``) the objects reach the buffer, or its sampler, exactly as given.

What every form must do, checked against the brute-force model
(``conformance/oracles/prioritized_replay.py``) after each call (tree values, default priority,
a new item, draws and weights, as the other §5 specs):

- an index names the same slots whatever its form: flat position, or row-major coordinates of
  an N-d storage (pairs ``[B, 2]`` or a tuple ``(rows, cols)``);
- ``-1`` entries are skipped, their priorities ignored (also for the maximum);
- a slot named twice takes its last priority; one number (or a one-element sequence) is every
  index's priority; ``[B, 1]`` priorities are one per index;
- integer and float64 priorities are priorities like float32 ones (``(p + eps) ** alpha``);
- ``mark_update`` gives every named slot (once, -1 skipped) the default priority;
- bad input is refused with a RuntimeError naming what is missing or mismatched, and the buffer
  is left as it was.

Priorities are multiples of 1/64 (float32-exact); tolerances are the other §5 specs'.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conformance import capabilities, device
from conformance._assertions import message
from conformance.oracles.prioritized_replay import ReplayModel
from conformance.test_prioritized_replay import ALPHA, BETA, EPS, Run, _filled, _short

TORCHRL_SAMPLER = ("https://github.com/pytorch/rl/blob/v0.14.1/torchrl/data/replay_buffers/"
                   "samplers/prioritized.py")
MAX_VALUE_WRITER = ("https://github.com/pytorch/rl/blob/v0.14.1/torchrl/data/replay_buffers/"
                    "writers/max_value.py")
FILLED = [1.0, 2.0, 4.0, 3.0, 6.0, 5.0, 0.5, 1.5]  # slot i <- FILLED[i]; the maximum at 4


@pytest.fixture
def forms(request, impl, prioritized_replay):
    return capabilities.require(request, impl, "prioritized_replay", prioritized_replay,
                                "update_as_given")


def _flat_of(index, shape) -> np.ndarray:
    """The flat slots an index names (its -1 entries kept as -1), computed here with numpy."""
    if isinstance(index, tuple):
        coords = [np.asarray(i, dtype=np.int64).reshape(-1) for i in index]
        return np.ravel_multi_index(coords, shape).astype(np.int64)
    index = np.asarray(index, dtype=np.int64)
    if len(shape) == 1:
        return index.reshape(-1)
    pairs = index.reshape(-1, len(shape))
    return np.ravel_multi_index(tuple(pairs.T), shape).astype(np.int64)


def _model_update(run: Run, index, priority) -> None:
    """The model's update for a call with ``index`` and ``priority`` as given: -1 entries and
    their priorities dropped, one number broadcast, the rest as the model does it."""
    flat = _flat_of(index, run.model.shape)
    p = np.asarray(torch.as_tensor(priority).double().reshape(-1).cpu().numpy())
    p = np.broadcast_to(p, flat.shape) if p.size == 1 else p.reshape(flat.shape)
    keep = flat >= 0
    if keep.any():
        run.model.update(flat[keep], p[keep])


def _model_mark(run: Run, index) -> None:
    """The model of ``mark_update(index)``: the named slots (-1 skipped, once each) leave the
    buffer's maximum, then all of them get the default priority of what stays."""
    flat = _flat_of(index, run.model.shape)
    slots = np.unique(flat[flat >= 0])
    if not len(slots):
        return
    default = run.model.default_priority(evicting=slots)
    run.model.priority[slots] = default
    run.model._seen(default)


def _describe(value) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_describe(v) for v in value) + ")"
    if isinstance(value, torch.Tensor):
        return f"tensor{_short(value.cpu().numpy())}:{str(value.dtype).removeprefix('torch.')}" \
            f"{list(value.shape)}"
    return repr(value)


def _check_all(run: Run, what: str, seed: int) -> None:
    __tracebackhide__ = True
    run.check_tree(what=f"tree values after {what} != (p + eps)^alpha", link=TORCHRL_SAMPLER)
    run.check_default(f"default priority after {what} != largest stored",
                      link=TORCHRL_SAMPLER)
    run.extend(1)
    run.check_sample(256, seed=seed)


# ---------------------------------------------------------------- update_priority on a buffer

I64, I32 = torch.long, torch.int32
UPDATE_FORMS = {
    # name: (index, priority); every slot named holds an item of FILLED
    "int-and-float": lambda: (3, 7.0),
    "0-d-tensors": lambda: (torch.tensor(3), torch.tensor(7.0)),
    "list-index-tensor-priorities": lambda: ([3, 5], torch.tensor([7.0, 0.25])),
    "tensor-index-one-float": lambda: (torch.tensor([1, 4, 6]), 7.0),
    "tensor-index-list-priorities": lambda: (torch.tensor([1, 4]), [7.0, 0.25]),
    "int32-index": lambda: (torch.tensor([3, 5], dtype=I32), torch.tensor([7.0, 0.25])),
    "integer-priorities": lambda: (torch.tensor([3, 4]), torch.tensor([9, 2])),
    "float64-priorities": lambda: (torch.tensor([3, 4]),
                                   torch.tensor([9.015625, 2.5], dtype=torch.float64)),
    "column-of-priorities": lambda: (torch.tensor([3, 4]), torch.tensor([[9.0], [0.25]])),
    "minus-one-entries": lambda: (torch.tensor([3, -1, 0, 5]),
                                  torch.tensor([7.0, 50.0, 0.25, 2.5])),
    "only-minus-one": lambda: (torch.tensor([-1, -1]), torch.tensor([50.0, 60.0])),
    "minus-one-and-repeats": lambda: (torch.tensor([7, -1, 7, 2, 4]),
                                      torch.tensor([9.0, 50.0, 0.75, 3.5, 0.125])),
    "repeats-at-both-ends": lambda: (torch.tensor([4, 1, 2, 4]),
                                     torch.tensor([40.0, 2.5, 0.75, 0.375])),
    "one-slot-twice": lambda: (torch.tensor([6, 6]), torch.tensor([9.0, 0.5])),
    "longer-than-the-buffer": lambda: (torch.arange(20) % 8, torch.arange(1.0, 21.0) / 4),
    "minus-one-and-one-priority": lambda: (torch.tensor([3, -1, 5]), torch.tensor([7.0])),
    # to the sampler itself (the buffer turns every priority into a tensor first)
    "one-float-to-the-sampler": lambda: (torch.tensor([1, 4, 6]), 7.0, "sampler"),
    "list-to-the-sampler": lambda: ([3, 5], [7.0, 0.25], "sampler"),
}


@pytest.mark.parametrize("case", list(UPDATE_FORMS))
def test_update_priority_takes_every_index_form(forms, case):
    """``rb.update_priority(index, priority)`` on a full ring of 8 (slot i holds FILLED[i];
    the maximum, 6, at slot 4) with ``index`` and ``priority`` in the form named by the case,
    passed as given: the slots named get their priorities (-1 entries skipped, the last of a
    repeat winning), the default is the largest priority stored after the call, a new item
    gets it, draws and weights follow. ``minus-one-and-repeats`` comes right after a full-batch
    update, so a sampler that reuses scratch state from it must not lose slot 7's update. The
    ``to-the-sampler`` cases call ``sampler.update_priority`` itself with a Python float or
    lists (the buffer would have made tensors of them)."""
    index, priority, *to = UPDATE_FORMS[case]()
    run = _filled(forms, 8, FILLED)
    if to:
        forms.sampler_update_as_given(run.buf, index, priority, with_storage=False)
    else:
        forms.update_as_given(run.buf, index, priority)
    _model_update(run, index, priority)
    call = "sampler.update_priority" if to else "rb.update_priority"
    run.log.append(f"{call}({_describe(index)}, {_describe(priority)})")
    _check_all(run, f"update_priority ({case})", seed=31)


# ------------------------------------------------------- two-dimensional storage: coordinates

COORDINATE_FORMS = {
    # name: (index, priority, through the sampler itself with storage=)
    "pairs-to-the-buffer": lambda: (torch.tensor([[1, 2], [3, 0], [0, 1]]),
                                    torch.tensor([6.0, 2.0, 0.25]), False),
    "tuple-to-the-buffer": lambda: ((torch.tensor([1, 3]), torch.tensor([2, 0])),
                                    torch.tensor([6.0, 2.0]), False),
    "pairs-to-the-sampler": lambda: (torch.tensor([[1, 2], [3, 0]]), torch.tensor([6.0, 2.0]),
                                     True),
    "int32-pairs-to-the-sampler": lambda: (torch.tensor([[1, 2], [3, 0], [2, 1]], dtype=I32),
                                           torch.tensor([6.0, 2.0, 9.0]), True),
}


@pytest.mark.parametrize("case", list(COORDINATE_FORMS))
def test_coordinates_of_a_two_dimensional_storage(forms, case):
    """A [4, 3] storage, full: ``(row, col)`` coordinates name the slots ``row * 3 + col``,
    as pairs ``[B, 2]`` (long or int32) given to ``rb.update_priority`` or to
    ``sampler.update_priority(..., storage=rb.storage)`` (what code that keeps the sampler
    calls), or as the tuple ``(rows, cols)`` that ``sample`` returns, given to the buffer
    (which stacks it; TorchRL's sampler itself takes an int or a tensor, no tuple)."""
    index, priority, to_sampler = COORDINATE_FORMS[case]()
    run = Run(forms, capacity=12, row_width=3)
    run.extend(4)
    run.update(np.arange(12), np.arange(1, 13) / 4)
    if to_sampler:
        forms.sampler_update_as_given(run.buf, index, priority, with_storage=True)
        call = "sampler.update_priority"
    else:
        forms.update_as_given(run.buf, index, priority)
        call = "rb.update_priority"
    _model_update(run, index, priority)
    run.log.append(f"{call}({_describe(index)}, {_describe(priority)})")
    _check_all(run, f"{call} ({case})", seed=32)


# --------------------------------------------------------------------------------- mark_update

MARK_FORMS = {
    # name: index given to mark_update (slot 4 holds the maximum: never named here, so the
    # default is the same whether the named items leave before it is taken or after)
    "minus-one-entries": lambda: torch.tensor([-1, 2, -1, 0]),
    "repeated-slots": lambda: torch.tensor([1, 1, 6, 1]),
    "only-minus-one": lambda: torch.tensor([-1, -1]),
    "an-int": lambda: 3,
}


@pytest.mark.parametrize("case", list(MARK_FORMS))
def test_mark_update_gives_the_default_once_per_slot(forms, case):
    """``rb.mark_update(index)`` (what TorchRL's writers call after a write: the max-value
    writer with -1 for items it did not store) on a full ring of 8 after lowering two
    priorities: every slot named gets the default priority once, -1 entries are skipped."""
    index = MARK_FORMS[case]()
    run = _filled(forms, 8, FILLED)
    run.update([0, 2], [0.25, 0.125])
    forms.mark_update_as_given(run.buf, index)
    _model_mark(run, index)
    run.log.append(f"rb.mark_update({_describe(index)})")
    _check_all(run, f"mark_update ({case})", seed=33)


# ----------------------------------------------------- without in-buffer tracking, wrapped rings


class _Historical(Run):
    """``max_priority_within_buffer=False``: the default is the largest priority ever given."""

    def __init__(self, area, *, capacity):
        self.area = area
        self.buf = area.historical_buffer(capacity=capacity, alpha=ALPHA, beta=BETA, eps=EPS,
                                          **device.keyword(area))
        self.model = ReplayModel(capacity, ALPHA, BETA, EPS,
                                 initial_priority=float(area.initial_priority),
                                 within_buffer=False)
        self.log = ["max_priority_within_buffer=False"]

    def explain(self, cause, link):
        return None, link  # the in-buffer diagnoses do not apply


def _wrapped_extend(run: Run, n: int) -> None:
    """``extend`` of ``n`` items, more than the ring holds: slot ``(cursor + k) % capacity``
    gets item k, the last write of a slot wins; each slot gets the default once."""
    m = run.model
    slots = (m.cursor + np.arange(n)) % m.capacity
    written = np.asarray(run.buf.extend(n))
    if not np.array_equal(np.sort(np.unique(written)), np.unique(slots)):
        raise AssertionError(message(
            f"extend({n}) on a ring of {m.capacity} did not write every slot",
            params=run.params(), expected=_short(np.unique(slots)), actual=_short(written)))
    distinct = np.unique(slots)
    default = m.default_priority(evicting=distinct)
    last = len(slots) - 1 - np.unique(slots[::-1], return_index=True)[1]
    m.item[slots[last]] = m.next_item + last
    m.next_item += n
    m.priority[distinct] = default
    m._seen(default)
    m.cursor = (m.cursor + n) % m.capacity
    run.log.append(f"extend({n}) over a ring of {m.capacity}")


@pytest.fixture
def historical_forms(request, impl, forms):
    return capabilities.require(request, impl, "prioritized_replay", forms, "historical_buffer")


def test_historical_maximum_through_every_form(historical_forms):
    """In-buffer tracking off (TorchRL's default): the default priority of new items counts as
    given (a buffer whose items were all lowered below the initial 1.0 still gives 1.0); a new
    maximum given as a list counts like one given as a tensor; the priority of a -1 entry does
    not count, one given to a slot that a later entry of the same call names again does (it
    was given: TorchRL takes the maximum of the call's priorities); an ``extend`` that wraps the
    ring of 8 twice (20 items: repeated slots in one ``mark_update``) gives every slot the
    historical maximum once, and the items stored are the last written to each slot."""
    forms = historical_forms
    run = _Historical(forms, capacity=8)
    run.extend(8)
    forms.update_as_given(run.buf, list(range(8)), [0.25, 0.5] * 4)
    _model_update(run, list(range(8)), [0.25, 0.5] * 4)
    run.log.append("rb.update_priority(list of 8, list of 8 below 1)")
    run.check_default("default priority after lowering every item below the initial 1.0 != "
                      "1.0, the default given to them", link=TORCHRL_SAMPLER)
    forms.update_as_given(run.buf, [2, 5], [7.5, 0.75])
    _model_update(run, [2, 5], [7.5, 0.75])
    run.log.append("rb.update_priority([2, 5], [7.5, 0.75])")
    run.check_default("default priority after a new maximum given as a list != largest ever "
                      "given", link=TORCHRL_SAMPLER)
    for index, priority, what in [
            (torch.tensor([3, -1, 4]), torch.tensor([0.5, 90.0, 0.25]), "a -1 entry's 90"),
            (torch.tensor([6, 1, 6]), torch.tensor([12.5, 0.5, 0.25]), "12.5, then replaced")]:
        forms.update_as_given(run.buf, index, priority)
        _model_update(run, index, priority)
        run.log.append(f"rb.update_priority({_describe(index)}, {_describe(priority)})")
        run.check_default(f"default priority after {what} != largest ever given (a -1 entry's "
                          "priority is not given; one replaced in the same call was)",
                          link=TORCHRL_SAMPLER)
    _wrapped_extend(run, 20)
    run.check_tree(what="tree values after extend(20) on a ring of 8 != (p + eps)^alpha",
                   link=TORCHRL_SAMPLER)
    run.check_default("default priority after extend(20) != largest ever given",
                      link=TORCHRL_SAMPLER)
    run.check_sample(256, seed=34)


# ------------------------------------------------------------------------------- refusals


def _refused(run: Run, call, what: str, words: tuple[str, ...], params: dict) -> None:
    """``call()`` raises a RuntimeError whose message holds ``words``; the buffer is intact."""
    __tracebackhide__ = True
    try:
        call()
    except RuntimeError as exc:
        text = str(exc)
        missing = [w for w in words if w not in text]
        if missing:
            raise AssertionError(message(
                f"the refusal of {what} does not say what is wrong", params=params,
                expected=f"a message holding {list(words)}",
                actual=f"RuntimeError: {text}")) from exc
    except Exception as exc:  # noqa: BLE001 - the type is the spec
        raise AssertionError(message(
            f"{what} was refused with another error than TorchRL's", params=params,
            expected="RuntimeError", actual=f"{type(exc).__name__}: {exc}")) from exc
    else:
        raise AssertionError(message(f"{what} was accepted", params=params,
                                     expected="RuntimeError", actual="no error"))
    run.check_tree(what=f"tree values after the refusal of {what} changed")
    run.check_default(f"default priority after the refusal of {what} changed")


def test_more_priorities_than_indices_are_refused(forms):
    """Three priorities for two indices: RuntimeError naming the priority (TorchRL: "priority
    should be a number or an iterable of the same length as index"), nothing written."""
    run = _filled(forms, 8, FILLED)
    index, priority = torch.tensor([1, 2]), torch.tensor([9.0, 8.0, 7.0])
    _refused(run, lambda: forms.update_as_given(run.buf, index, priority),
             "three priorities for two indices", ("priority",),
             run.params(index=_describe(index), priority=_describe(priority)))


def test_coordinates_without_the_storage_are_refused(forms):
    """``sampler.update_priority`` with ``[B, 2]`` coordinates and no ``storage=``: the sampler
    cannot know the storage's shape. RuntimeError naming the storage (TorchRL: "storage should
    be provided ..."), nothing written."""
    run = Run(forms, capacity=12, row_width=3)
    run.extend(4)
    index, priority = torch.tensor([[1, 2], [3, 0]]), torch.tensor([6.0, 2.0])
    _refused(run, lambda: forms.sampler_update_as_given(run.buf, index, priority,
                                                        with_storage=False),
             "coordinates without storage=", ("storage",),
             run.params(index=_describe(index), priority=_describe(priority)))


def test_coordinates_of_another_rank_are_refused(forms):
    """Triples ``[B, 3]`` for a [4, 3] storage: no slot is named, an error is raised (TorchRL:
    numpy's "parameter multi_index must be a sequence of length 2"), nothing written."""
    run = Run(forms, capacity=12, row_width=3)
    run.extend(4)
    index, priority = torch.tensor([[1, 2, 0], [3, 0, 1]]), torch.tensor([6.0, 2.0])
    params = run.params(index=_describe(index), priority=_describe(priority))
    try:
        forms.update_as_given(run.buf, index, priority)
    except Exception:  # noqa: BLE001 - any error: the spec is that it is not accepted
        pass
    else:
        raise AssertionError(message("coordinates of rank 3 for a 2-D storage were accepted",
                                     params=params, expected="an error", actual="no error"))
    run.check_tree(what="tree values after the refusal of rank-3 coordinates changed")


@pytest.mark.parametrize("index", [[7], [9], [2, 9]],
                         ids=lambda i: "index=" + ",".join(map(str, i)))
def test_an_index_past_the_capacity_is_refused(forms, index):
    """``update_priority`` of slot 7 or 9 in a buffer of 7 slots (a stale index from a larger
    buffer, an off-by-one), alone or after a valid slot, with the largest priority yet: an
    error (any), and the buffer is left as it was: tree values, default priority (no slot
    written before the bad one, no new maximum). Only indices just past the capacity are
    tried, as in the tree specs: a sampler that does not check may write outside its trees.
    (TorchRL writes the tree slot ``index | 8`` unchecked: 7 is a padding leaf its total
    includes, so a draw can name slot 7 of a 7-slot buffer; 9 overwrites slot 1's
    priority.)"""
    run = _filled(forms, 7, FILLED[:7])
    priority = torch.full((len(index),), 64.0)
    params = run.params(index=index, priority=_describe(priority))
    try:
        forms.update_as_given(run.buf, torch.tensor(index), priority)
    except Exception:  # noqa: BLE001 - any error: the spec is that it is not accepted
        pass
    else:
        # what the accepted write did to the 7 slots, for the message
        tree = np.asarray(run.buf.tree_values(), dtype=np.float64)
        want = run.model.tree_values()
        moved = (np.flatnonzero(~np.isclose(tree, want, rtol=1e-5)) if tree.shape == want.shape
                 else [])
        effect = (f"slots {moved.tolist()} changed: tree values {_short(tree[moved])} instead of "
                  f"{_short(want[moved])}" if len(moved)
                  else "the 7 slots' tree values unchanged (the write went elsewhere)")
        raise AssertionError(message(
            f"update_priority of slots {index} in a buffer of 7 slots was accepted",
            params=params, expected="an error, the buffer unchanged", actual="no error",
            detail=effect, link=TORCHRL_SAMPLER))
    run.check_tree(what=f"tree values after the refusal of slots {index} changed")
    run.check_default(f"default priority after the refusal of slots {index} changed")
