"""§5 checkpoints in TorchRL's formats: what a TorchRL user saves, resumes, and carries from one
release (or one implementation) to another.

A buffer's sampler is checkpointed to a folder (``PrioritizedSampler.dumps`` / ``loads``, which
``ReplayBuffer.dumps`` / ``loads`` call; pytorch/rl#3057) or to a ``state_dict``. The formats are
TorchRL's (``conformance.interface.PrioritizedCheckpoints``), so that an implementation sold as
a drop-in reads what TorchRL wrote, and TorchRL reads what it writes:

- a checkpoint restores every tree value ``(p + eps)^alpha``, the default priority (the largest
  priority stored, which a lowered maximum must not bring back), the draws' weights and the
  priority of the next items, into a freshly filled buffer or one holding other priorities;
- it carries its own ``alpha``, ``beta`` and ``eps`` into a buffer built with others, as
  TorchRL's ``loads`` and ``load_state_dict`` do;
- the files it writes hold what TorchRL's ``loads`` reads (float64, one value per slot);
- files and a ``state_dict`` in TorchRL's format, written here by the spec itself (not by the
  implementation), load: the 0.13.3+ format (``_schema_version`` 1, a raw maximum) and the
  version-less format of 0.13.0 - 0.13.2, whose in-buffer maximum was stored transformed,
  ``(p + eps)^alpha`` (pytorch/rl#3925); reading that value as a raw priority gives new items
  the wrong default (pytorch/rl#4014: the maximum is recomputed from the trees instead);
- a checkpoint written at ``alpha = 0`` (every tree value 1, the raw priorities lost) keeps its
  maximum as the default.

Oracle: ``conformance.oracles.prioritized_replay.ReplayModel``; the TorchRL-format files are
written from it with numpy (tree values rounded to float32, as TorchRL's default float32 trees
hold them). Priorities are multiples of 1/64 (float32-exact); tolerances as in
``conformance/test_prioritized_replay.py`` (tree values rtol 2e-6, raw priorities recovered by
inverting a float32 tree value rtol 1e-5).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from conformance import capabilities
from conformance._assertions import assert_close, message
from conformance.oracles.prioritized_replay import ReplayModel
from conformance.test_prioritized_replay import Run, grid

PR_3057 = "https://github.com/pytorch/rl/pull/3057"
PR_3925 = "https://github.com/pytorch/rl/pull/3925"
PR_4014 = "https://github.com/pytorch/rl/pull/4014"
ALPHA, BETA, EPS = 0.6, 0.4, 1e-3
CAPACITY, STORED = 16, 12  # four empty slots: their file values are checked too
TREE_RTOL, RAW_RTOL = 2e-6, 1e-5
F32_MAX = float(np.finfo(np.float32).max)  # what TorchRL's float32 min tree holds when empty
#: the entries of TorchRL's PrioritizedSampler.state_dict (0.13.3+)
TORCHRL_KEYS = ("_alpha", "_beta", "_eps", "_max_priority", "_sum_tree", "_min_tree")
LEGACY_MAX = ("the version-less checkpoint's maximum was read as a raw priority: before "
              "pytorch/rl#3925 (torchrl 0.13.0 - 0.13.2) the in-buffer maximum was stored "
              "transformed, (p + eps)^alpha, and must be recomputed from the trees")
NOT_RESTORED = "the checkpoint's priorities were not restored (the buffer kept its own)"


def _priorities() -> np.ndarray:
    """Twelve priorities in [1/4, 10), float32-exact, seeded (31)."""
    return grid(np.random.default_rng(31), STORED, 16, 640)


def _top(priority: np.ndarray) -> int:
    return int(np.nanargmax(priority))


def source_model(alpha: float = ALPHA) -> ReplayModel:
    """The checkpointed state: 12 items of 16, priorities set, then the maximum lowered to 0.75
    (a TorchRL sampler in-buffer recomputes its maximum from the trees at that point)."""
    model = ReplayModel(CAPACITY, alpha, BETA, EPS)
    model.extend(STORED)
    model.update(np.arange(STORED), _priorities())
    model.update([_top(model.priority)], [0.75])
    return model


def source_run(area) -> Run:
    """A buffer driven to ``source_model()``'s state."""
    run = Run(area, capacity=CAPACITY)
    run.extend(STORED)
    run.update(np.arange(STORED), _priorities())
    run.update([_top(run.model.priority)], [0.75])
    return run


def target_run(area, into: str, **params) -> Run:
    """A buffer holding as many items as the checkpoint (ids 0..11, as there): ``fresh`` at the
    initial priority, ``used`` with priorities of 40 (a maximum the checkpoint lacks)."""
    run = Run(area, capacity=CAPACITY, **params)
    run.extend(STORED)
    if into == "used":
        run.update(np.arange(STORED), np.full(STORED, 40.0))
    return run


def check_restored(run: Run, model: ReplayModel, what: str, *, seed: int,
                   default_cause: str | None = None, link: str = PR_3057,
                   exact_tree: np.ndarray | None = None, change_alpha: bool = True) -> None:
    """After loading: tree values (bit for bit against ``exact_tree`` when given: a checkpoint
    restores the values it holds), default, 256 draws, two new items (the checkpoint's
    maximum), the default again, and tree values after alpha goes to 0.9 (from the raw
    priorities the checkpoint restored), all against ``model`` (the checkpointed state)."""
    __tracebackhide__ = True
    run.model = model.copy()
    run.log.append(what)
    if exact_tree is not None:
        assert_close(f"tree values after {what} != the checkpoint's, bit for bit",
                     run.buf.tree_values(), exact_tree, params=run.params(), cause=NOT_RESTORED,
                     link=link)
    run.check_tree(what=f"tree values after {what} != (p + eps)^alpha of the checkpoint",
                   link=link)
    actual = float(run.buf.default_priority())
    assert_close(f"default priority after {what} != largest priority of the checkpoint",
                 actual, run.model.default_priority(), params=run.params(), rtol=RAW_RTOL,
                 cause=default_cause or NOT_RESTORED, link=link)
    run.check_sample(256, seed=seed)
    run.extend(2)  # slots 12, 13: the checkpoint's maximum
    run.check_default()
    if change_alpha:
        previous = run.set_alpha(0.9)
        run.check_tree(previous_alpha=previous, link=PR_4014,
                       what=f"tree values after {what}, then alpha {previous} -> 0.9")


@pytest.fixture
def checkpoints(request, impl, prioritized_replay):
    return capabilities.require(request, impl, "prioritized_replay", prioritized_replay,
                                "dump_sampler")


# --------------------------------------------------------------------------- file checkpoints


@pytest.mark.parametrize("into", ["fresh", "used"], ids=lambda x: f"into={x}")
def test_file_checkpoint_round_trip(checkpoints, tmp_path, into):
    """``dumps`` a buffer (12 of 16 slots) into a folder, then again into the same folder once
    its maximum was lowered (a periodic checkpoint overwrites the last one); ``loads`` it into
    another buffer of 12 items, freshly filled or holding priorities of 40: tree values (bit
    for bit), default, draws, weights, new items and a later change of alpha are the last
    checkpoint's."""
    source = Run(checkpoints, capacity=CAPACITY)
    source.extend(STORED)
    source.update(np.arange(STORED), _priorities())
    checkpoints.dump_sampler(source.buf, str(tmp_path / "sampler"))  # overwritten below
    source.update([_top(source.model.priority)], [0.75])
    checkpoints.dump_sampler(source.buf, str(tmp_path / "sampler"))
    target = target_run(checkpoints, into)
    checkpoints.load_sampler(target.buf, str(tmp_path / "sampler"))
    check_restored(target, source.model, "loads(dumps of another buffer)", seed=41,
                   exact_tree=source.buf.tree_values())


def test_file_checkpoint_carries_its_parameters(checkpoints, tmp_path):
    """A checkpoint taken at alpha 0.6, beta 0.4, eps 1e-3, loaded into a buffer built with
    alpha 0.9, beta 1, eps 0.1 (a run resumed with other arguments): tree values, weights and
    new items follow the checkpoint's parameters, as TorchRL's ``loads`` sets them."""
    source = source_run(checkpoints)
    checkpoints.dump_sampler(source.buf, str(tmp_path / "sampler"))
    target = target_run(checkpoints, "used", alpha=0.9, beta=1.0, eps=0.1)
    checkpoints.load_sampler(target.buf, str(tmp_path / "sampler"))
    check_restored(target, source.model, "loads(checkpoint of alpha 0.6, beta 0.4, eps 1e-3)",
                   seed=42)


def test_dumped_files_are_torchrl_format(checkpoints, tmp_path):
    """What ``dumps`` writes is what TorchRL's ``loads`` reads: ``sampler_metadata.json`` with
    the parameters, the capacity, ``_schema_version`` 1 and the raw maximum; ``sumtree.memmap``
    and ``mintree.memmap``, float64, ``(p + eps)^alpha`` per stored slot, 0 in the sum file's
    empty slots and, in the min file's, a value no stored one is below (TorchRL: the float32
    maximum)."""
    source = source_run(checkpoints)
    path = tmp_path / "sampler"
    checkpoints.dump_sampler(source.buf, str(path))
    params = source.params(files=str(path.name))
    model = source.model
    meta = json.loads((path / "sampler_metadata.json").read_text())
    want = {"_alpha": ALPHA, "_beta": BETA, "_eps": EPS, "_max_capacity": CAPACITY,
            "_schema_version": 1}
    got = {k: meta.get(k) for k in want}
    if got != want:
        raise AssertionError(message("sampler_metadata.json", params=params, expected=want,
                                     actual=got, link=PR_3057))
    assert_close("sampler_metadata.json: _max_priority[0] != largest raw priority stored",
                 float(meta["_max_priority"][0]), model.stored_max(), params=params,
                 rtol=RAW_RTOL, link=PR_4014)
    stored, empty = model.stored(), np.setdiff1d(np.arange(CAPACITY), model.stored())
    q = model.transform(model.priority[stored])
    for name, fill in (("sumtree.memmap", "0"), ("mintree.memmap", "neutral")):
        values = np.fromfile(path / name, dtype=np.float64)
        if values.shape != (CAPACITY,):
            raise AssertionError(message(f"{name}: not one float64 per slot", params=params,
                                         expected=(CAPACITY,), actual=values.shape))
        assert_close(f"{name}: stored slots != (p + eps)^alpha", values[stored], q,
                     params=params, rtol=TREE_RTOL)
        bad = values[empty] != 0 if fill == "0" else values[empty] < q.max()
        if bad.any():
            raise AssertionError(message(
                f"{name}: empty slots {empty.tolist()}", params=params,
                expected="0" if fill == "0" else f">= every stored value ({q.max():.6g})",
                actual=values[empty]))


# ------------------------------------------------------ TorchRL's formats, written by the spec


def _files(path: Path, model: ReplayModel, max_priority: list, version: int | None) -> None:
    """``model`` as TorchRL's ``PrioritizedSampler.dumps`` writes it (float32 trees): the
    metadata through ``tree_map(float, ...)`` (so the capacity and the index are floats)."""
    path.mkdir(parents=True)
    stored = model.stored()
    q32 = _q32(model)
    sum_values, min_values = np.zeros(CAPACITY), np.full(CAPACITY, F32_MAX)
    sum_values[stored] = min_values[stored] = q32
    sum_values.tofile(path / "sumtree.memmap")
    min_values.tofile(path / "mintree.memmap")
    meta = {"_alpha": model.alpha, "_beta": model.beta, "_eps": model.eps,
            "_max_priority": [None if v is None else float(v) for v in max_priority], "_max_capacity": float(CAPACITY)}
    if version is not None:
        meta["_schema_version"] = version
    (path / "sampler_metadata.json").write_text(json.dumps(meta))


def _q32(model: ReplayModel) -> np.ndarray:
    """The tree values of ``model`` as TorchRL's float32 trees hold them."""
    q = model.transform(model.priority[model.stored()])
    return q.astype(np.float32).astype(np.float64)


def _maxima(model: ReplayModel) -> tuple[list, list]:
    """The maximum as 0.13.3+ stores it (raw) and as 0.13.0 - 0.13.2 did after recomputing it
    from the float32 sum tree (transformed), each ``[value, index]``."""
    top = _top(model.priority)
    q = float(np.float32(model.transform(model.priority[top])))
    return [model.stored_max(), top], [q, top]


FORMATS = ["schema-1", "version-less-transformed-max"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_torchrl_files_are_read(checkpoints, tmp_path, fmt):
    """A folder as TorchRL writes it (0.13.3+: ``_schema_version`` 1; 0.13.0 - 0.13.2: no
    version and, in-buffer, a transformed maximum), written here from the model, loads into a
    buffer holding priorities of 40: the raw priorities come back from the tree values, and
    the default is the largest of them, not the stored ``(p + eps)^alpha`` of it."""
    model = source_model()
    raw_max, transformed = _maxima(model)
    legacy = fmt != "schema-1"
    _files(tmp_path / "sampler", model, transformed if legacy else raw_max,
           None if legacy else 1)
    target = target_run(checkpoints, "used")
    checkpoints.load_sampler(target.buf, str(tmp_path / "sampler"))
    check_restored(target, model, f"loads(TorchRL folder, {fmt})", seed=43,
                   default_cause=_default_cause(target, transformed[0]),
                   link=PR_4014 if legacy else PR_3057, exact_tree=_q32(model))


def _default_cause(run: Run, transformed: float) -> str:
    actual = float(run.buf.default_priority())
    return LEGACY_MAX if np.isclose(actual, transformed, rtol=RAW_RTOL) else NOT_RESTORED


@pytest.mark.parametrize("fmt", FORMATS)
def test_torchrl_state_dict_is_read(checkpoints, fmt):
    """The implementation's ``state_dict`` holds TorchRL's entries (its trees read
    ``(p + eps)^alpha`` per stored slot, 0 elsewhere); those entries alone, as TorchRL 0.13.3+
    writes them or as 0.13.0 - 0.13.2 did (no version, the maximum transformed, set here),
    load into a buffer holding priorities of 40 and restore the checkpoint."""
    source = source_run(checkpoints)
    state = checkpoints.sampler_state(source.buf)
    params = source.params(format=fmt)
    missing = [k for k in TORCHRL_KEYS if k not in state]
    if missing:
        raise AssertionError(message("state_dict lacks TorchRL's entries", params=params,
                                     expected=list(TORCHRL_KEYS), actual=sorted(state)))
    model = source.model
    stored = model.stored()
    want = np.zeros(CAPACITY)
    want[stored] = model.transform(model.priority[stored])
    got = np.array([float(state["_sum_tree"][i]) for i in range(CAPACITY)])
    assert_close("state_dict['_sum_tree'][i] != (p + eps)^alpha (0 for empty slots)", got, want,
                 params=params, rtol=TREE_RTOL)
    assert_close("state_dict['_min_tree'][i] != (p + eps)^alpha at the stored slots",
                 np.array([float(state["_min_tree"][i]) for i in stored]), want[stored],
                 params=params, rtol=TREE_RTOL)
    torchrl_state = {k: state[k] for k in TORCHRL_KEYS}
    raw_max, transformed = _maxima(model)
    if fmt == "schema-1":
        torchrl_state["_schema_version"] = 1
    else:
        torchrl_state["_max_priority"] = tuple(transformed)
    target = target_run(checkpoints, "used")
    checkpoints.load_sampler_state(target.buf, torchrl_state)
    check_restored(target, model, f"load_state_dict(TorchRL's entries, {fmt})", seed=44,
                   default_cause=_default_cause(target, transformed[0]),
                   link=PR_4014 if fmt != "schema-1" else PR_3057)


def test_torchrl_files_at_alpha_zero(checkpoints, tmp_path):
    """A TorchRL folder written at alpha = 0: every tree value is 1, so the raw priorities are
    not in it; its maximum (``_schema_version`` 1: raw) is. After loading, sampling is uniform
    (weights 1), the default is that maximum and new items get it."""
    model = source_model(alpha=0.0)
    raw_max, _ = _maxima(model)
    _files(tmp_path / "sampler", model, raw_max, 1)
    target = target_run(checkpoints, "used")
    with warnings.catch_warnings():  # a warning that the raw priorities are lost is welcome
        warnings.simplefilter("ignore")
        checkpoints.load_sampler(target.buf, str(tmp_path / "sampler"))
    check_restored(target, model, "loads(TorchRL folder written at alpha 0)", seed=45,
                   change_alpha=False)


def test_torchrl_files_at_alpha_zero_without_a_maximum(checkpoints, tmp_path):
    """A TorchRL folder written at alpha = 0 whose maximum is ``null`` (none known), its twelve
    items all 1 in the trees: loaded into a buffer never written to (TorchRL copies a null
    maximum only into a sampler that has none), the default is the documented initial
    priority, not a value made up for the lost raw priorities."""
    model = source_model(alpha=0.0)
    _files(tmp_path / "sampler", model, [None, None], 1)
    target = Run(checkpoints, capacity=CAPACITY)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        checkpoints.load_sampler(target.buf, str(tmp_path / "sampler"))
    target.log.append("loads(TorchRL folder at alpha 0, maximum null)")
    assert_close("default priority after loading a checkpoint without a maximum != initial value",
                 float(target.buf.default_priority()), float(checkpoints.initial_priority),
                 params=target.params(), rtol=RAW_RTOL, cause=NOT_RESTORED, link=PR_3057)


def test_file_checkpoint_at_alpha_zero_keeps_the_priorities(checkpoints, tmp_path):
    """A buffer run at alpha = 0 (uniform sampling, the start of an alpha schedule) is dumped
    and loaded into another; alpha then goes to 0.9: the tree follows the priorities given
    before the checkpoint. TorchRL's files hold only (p + eps)^0 = 1 per item, so an
    implementation that keeps nothing else loses them (as when alpha passes through 0,
    pytorch/rl#4014)."""
    source = source_run(checkpoints)
    source.set_alpha(0.0)
    checkpoints.dump_sampler(source.buf, str(tmp_path / "sampler"))
    target = target_run(checkpoints, "used")
    checkpoints.load_sampler(target.buf, str(tmp_path / "sampler"))
    check_restored(target, source.model, "loads(dumps at alpha 0)", seed=46, link=PR_4014)


# ------------------------------------------------------------------------------ bad input

OTHER_CAPACITIES = [8, 32]


def _state_without_extras(checkpoints, buf) -> dict:
    state = checkpoints.sampler_state(buf)
    return {k: state[k] for k in (*TORCHRL_KEYS, "_schema_version") if k in state}


def _check_refused(run: Run, action, what: str, words: list[str], params: dict) -> None:
    """``action()`` raises an error whose message holds ``words``, and ``run``'s buffer is as
    it was (tree values and default): nothing lost."""
    __tracebackhide__ = True
    tree, default = run.buf.tree_values(), float(run.buf.default_priority())
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - any error type, its words are the spec
        text = f"{type(exc).__name__}: {exc}"
        if not all(w in text for w in words):
            raise AssertionError(message(f"{what}: the error does not say why", params=params,
                                         expected=f"a message holding {words}",
                                         actual=text)) from exc
    else:
        raise AssertionError(message(f"{what} was accepted", params=params,
                                     expected="an error", actual="no error"))
    assert_close(f"tree values after a refused {what} changed", run.buf.tree_values(), tree,
                 params=params)
    assert_close(f"default priority after a refused {what} changed",
                 float(run.buf.default_priority()), default, params=params,
                 cause="the loader changed the buffer before refusing the checkpoint")


@pytest.mark.parametrize("capacity", OTHER_CAPACITIES, ids=lambda c: f"into-capacity={c}")
@pytest.mark.parametrize("how", ["files", "state_dict", "torchrl-entries"])
def test_checkpoint_of_another_capacity_is_refused(checkpoints, tmp_path, how, capacity):
    """A checkpoint of 16 slots loaded into a buffer of 8 or 32 (holding priorities of 40) is
    refused with an error naming both capacities, and the buffer is left as it was: files, the
    implementation's ``state_dict``, or its TorchRL entries alone, as TorchRL writes them."""
    source = source_run(checkpoints)
    target = Run(checkpoints, capacity=capacity)
    target.extend(4)
    target.update(np.arange(4), np.full(4, 40.0))
    params = {"checkpoint capacity": CAPACITY, "buffer capacity": capacity, "how": how}
    if how == "files":
        checkpoints.dump_sampler(source.buf, str(tmp_path / "sampler"))
        action = lambda: checkpoints.load_sampler(target.buf, str(tmp_path / "sampler"))  # noqa: E731
    else:
        state = checkpoints.sampler_state(source.buf)
        if how == "torchrl-entries":
            state = _state_without_extras(checkpoints, source.buf)
        action = lambda: checkpoints.load_sampler_state(target.buf, state)  # noqa: E731
    what = "files" if how == "files" else "state_dict"
    _check_refused(target, action, f"{what} checkpoint of another capacity",
                   [str(CAPACITY), str(capacity)], params)


def test_a_folder_without_its_tree_file_is_refused(checkpoints, tmp_path):
    """A checkpoint folder that lost ``sumtree.memmap`` (a partial copy) is refused with an
    error naming that file, and the buffer that was to load it is left as it was."""
    source = source_run(checkpoints)
    checkpoints.dump_sampler(source.buf, str(tmp_path / "sampler"))
    (tmp_path / "sampler" / "sumtree.memmap").unlink()
    target = target_run(checkpoints, "used")
    _check_refused(target, lambda: checkpoints.load_sampler(target.buf, str(tmp_path / "sampler")),
                   "folder without sumtree.memmap", ["sumtree.memmap"],
                   {"capacity": CAPACITY, "removed": "sumtree.memmap"})


def test_a_state_without_trees_is_refused(checkpoints):
    """A state holding TorchRL's parameters and maximum but no ``_sum_tree`` / ``_min_tree``
    (a truncated or foreign checkpoint) is refused with an error naming ``_sum_tree``, and the
    buffer is left as it was."""
    source = source_run(checkpoints)
    state = _state_without_extras(checkpoints, source.buf)
    del state["_sum_tree"], state["_min_tree"]
    target = target_run(checkpoints, "used")
    _check_refused(target, lambda: checkpoints.load_sampler_state(target.buf, state),
                   "state without trees", ["_sum_tree"], {"capacity": CAPACITY,
                                                          "keys": sorted(state)})


@pytest.mark.parametrize("how", ["files", "state_dict"])
def test_checkpoint_of_an_empty_buffer(checkpoints, tmp_path, how):
    """A checkpoint taken before any item was written (a run saved before collection starts)
    loads into an empty buffer: the default is the documented initial priority, and the first
    items get it."""
    source = Run(checkpoints, capacity=CAPACITY)
    target = Run(checkpoints, capacity=CAPACITY)
    _load_empty(checkpoints, source.buf, target.buf, tmp_path, how)
    target.log.append(f"load ({how}) of an empty buffer's checkpoint")
    target.check_default("default priority after loading an empty buffer's checkpoint != "
                         "initial value")
    target.extend(2)
    target.check_default()


def _load_empty(area, source, target, tmp_path, how: str) -> None:
    if how == "files":
        area.dump_sampler(source, str(tmp_path / "sampler"))
        area.load_sampler(target, str(tmp_path / "sampler"))
    else:
        area.load_sampler_state(target, area.sampler_state(source))


# ------------------------------------------- buffers without in-buffer tracking (examples')


@pytest.fixture
def example_checkpoints(request, impl, prioritized_replay):
    capabilities.require(request, impl, "prioritized_replay", prioritized_replay, "example_buffer")
    return capabilities.require(request, impl, "prioritized_replay", prioritized_replay,
                                "dump_sampler")


@pytest.mark.parametrize("source", ["own-files", "torchrl-files", "state_dict"])
def test_example_buffer_checkpoint_keeps_the_largest_priority_ever_given(
        example_checkpoints, tmp_path, source):
    """A ``TensorDictPrioritizedReplayBuffer`` as TorchRL's examples build it (no in-buffer
    tracking: the default is the largest priority ever given): 12 items, priorities given, then
    the largest lowered, so that it is no longer stored. Its checkpoint (its own files, a
    TorchRL folder written here with that maximum, or its ``state_dict``) loaded into another
    such buffer, which had been given 40: the default is the checkpoint's maximum, not 40 and
    not the largest stored; new items get it; the tree is the checkpoint's."""
    from conformance.test_prioritized_replay_buffer_classes import check, example_run

    area, kind = example_checkpoints, "TensorDictPrioritizedReplayBuffer"
    src = example_run(area, kind)
    src.extend(STORED, check=False)
    src.update(np.arange(STORED), _priorities())
    src.update([_top(src.model.priority)], [0.75])
    path = tmp_path / "sampler"
    if source == "own-files":
        area.dump_sampler(src.buf, str(path))
    elif source == "torchrl-files":
        _files(path, src.model, [src.model.historical_max, 0], 1)
    target = example_run(area, kind)
    target.extend(STORED, check=False)
    target.update(np.arange(STORED), np.full(STORED, 40.0))
    if source == "state_dict":
        area.load_sampler_state(target.buf, area.sampler_state(src.buf))
    else:
        area.load_sampler(target.buf, str(path))
    target.model = src.model.copy()
    target.log.append(f"load ({source}) of the checkpoint")
    check(target, f"after loading the checkpoint ({source})", link=PR_3057)
    target.extend(2, check=False)
    check(target, "after extend(2)", link=PR_3057)
    target.check_sample(256, seed=47)


@pytest.mark.parametrize("how", ["files", "state_dict"])
def test_example_buffer_checkpoint_of_an_empty_buffer(example_checkpoints, tmp_path, how):
    """An empty ``TensorDictPrioritizedReplayBuffer``'s checkpoint (no maximum yet) loaded into
    another: the first items get the initial priority, and once priorities are given the
    default is the largest of them."""
    from conformance.test_prioritized_replay_buffer_classes import check, example_run

    area, kind = example_checkpoints, "TensorDictPrioritizedReplayBuffer"
    source, target = example_run(area, kind), example_run(area, kind)
    _load_empty(area, source.buf, target.buf, tmp_path, how)
    target.log.append(f"load ({how}) of an empty buffer's checkpoint")
    target.extend(4, check=False)
    check(target, "after loading an empty buffer's checkpoint and extend(4)", link=PR_3057)
    target.update(np.arange(4), [3.0, 5.0, 0.5, 2.0])
    check(target, "after update_priority", link=PR_3057)


# ------------------------------------------------------------------- a folder from elsewhere

TORCHRL_FILES = ("sampler_metadata.json", "sumtree.memmap", "mintree.memmap")
PICKLE_DOCS = "https://pytorch.org/docs/stable/generated/torch.load.html"


class _TouchOnLoad:
    """Unpickled, creates ``marker`` (what a tampered checkpoint could do instead: run code)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return Path.touch, (self.marker,)


def test_a_tampered_checkpoint_file_runs_no_code(checkpoints, tmp_path):
    """A checkpoint folder is often downloaded or shared. Each file the implementation writes
    beside TorchRL's three (which are JSON and raw float64) is replaced by a pickle whose
    unpickling would run code (here: create a marker file); loading the folder may refuse it
    or ignore the file, but runs nothing (``torch.load(weights_only=True)``)."""
    source = source_run(checkpoints)
    path = tmp_path / "sampler"
    checkpoints.dump_sampler(source.buf, str(path))
    marker = tmp_path / "code-ran"
    extra = sorted(p.name for p in path.iterdir() if p.name not in TORCHRL_FILES)
    for name in extra:
        torch.save({"_raw_priority": _TouchOnLoad(marker)}, path / name)
    target = target_run(checkpoints, "used")
    try:
        checkpoints.load_sampler(target.buf, str(path))
    except Exception:  # noqa: BLE001 -- refusing the tampered file is a right answer
        pass
    if marker.exists():
        raise AssertionError(message(
            "loading a checkpoint folder ran code from a tampered file in it",
            params={**source.params(), "tampered": extra}, expected="no code run",
            actual=f"{marker.name} created while loading",
            cause="a file of the folder is unpickled without weights_only=True",
            link=PICKLE_DOCS))
