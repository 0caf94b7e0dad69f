"""Prioritized replay through TorchRL's ``ReplayBuffer`` + ``LazyTensorStorage`` +
``PrioritizedSampler(max_priority_within_buffer=True)``; also used for the reference drop-in.

Everything goes through the buffer the way training code does (``extend``, ``update_priority``,
``sample(return_info=True)``, ``state_dict``); two things are read from the sampler itself:
``default_priority`` and the sum tree's per-index values (``_sum_tree[index]``, the same
accessor in every release and in the reference).

Release differences absorbed here (read from the tags v0.6.0 .. v0.13.3 and the 0.14.1 wheel):

- the importance weights are ``info["_weight"]`` up to 0.9.x, ``info["priority_weight"]`` after;
- ``default_priority`` is a transformed value ``(p + eps) ** alpha`` before 0.13.3 and a raw
  priority from 0.13.3 (pytorch/rl#3925); which one a source returns is detected on an empty
  sampler (never read from a version string: a nightly or a checkout has none that compares),
  and a transformed value is converted back to raw;
- 0.4.x has no ``max_priority_within_buffer`` option (pytorch/rl#2215, 0.5.0): its sampler, which
  keeps the largest priority ever seen, is tested as it is;
- no release has an upper bound on the default priority: asking for one fails the spec with
  the reason (pytorch/rl#2210 proposed ``_upper_priority``; it was not merged).

When TorchRL's C++ segment trees do not load next to the installed torch (ABI mismatch), the
area raises ``Untestable``: the specs report "cannot be tested here", they never pass.

On a CUDA run the buffer's storage is on the GPU and the sampler is built with ``device=``:
TorchRL's CUDA segment trees (``torchrl/csrc/cuda_segment_tree.cu``, pytorch/rl#3677; the
sampler's ``device=`` keyword is in 0.14.1), its own case of the area, checked by the same
specs. A release whose ``PrioritizedSampler`` has no ``device=`` declares the area CPU-only;
where the installed ``torchrl._torchrl`` was built without the CUDA trees (the PyPI wheels of
0.14.1 are), a CUDA buffer raises ``Untestable`` with the reason.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from conformance.implementations.introspect import keyword_parameters, quiet
from conformance.interface import PrioritizedDraw, Untestable


def extension_problem(sampler_cls) -> str | None:
    """Why ``sampler_cls`` cannot be built here (its C++ trees do not load), or None."""
    try:
        with quiet():
            sampler_cls(2, alpha=0.5, beta=0.5)
    except NameError as exc:  # 0.4 - 0.9: the tree classes are simply undefined
        return f"NameError: {exc}"
    except RuntimeError as exc:  # 0.10+: "SumSegmentTreeFp32 is not available"
        if "SegmentTree" in str(exc) or "extension" in str(exc).lower():
            return f"RuntimeError: {exc}"
        raise
    return None


CUDA_TREES = "CudaSumSegmentTreeFp32"  # what torchrl._torchrl holds when built with CUDA
#: the one option that builds the CPU trees for the installed torch (conformance.build_trees)
TREES_FIX = ("torchrl-conformance --build-trees (builds them from the installed torchrl's "
             "torchrl/csrc for this torch; needs a C++ compiler)")


def cuda_trees_problem() -> str | None:
    """Why TorchRL's CUDA segment trees cannot be used here, or None."""
    try:
        import torchrl._torchrl as extension
    except ImportError as exc:
        return f"torchrl._torchrl does not load ({type(exc).__name__}: {exc})"
    if not hasattr(extension, CUDA_TREES):
        return (f"the installed torchrl._torchrl was built without CUDA (it has no {CUDA_TREES}),"
                " so PrioritizedSampler(device='cuda') cannot be built; build them from its torchrl/csrc with nvcc: PYTHONPATH=$(python "
                "-m conformance.upstream.extension cuda-overlay DIR) (reports/gpu/README.md)")
    return None


class PrioritizedReplayArea:
    initial_priority = 1.0  # upstream's documented value while no maximum is known

    def __init__(self, sampler_cls, *, default_is_raw: bool, cuda_problem=cuda_trees_problem):
        self.sampler_cls = sampler_cls
        self.default_is_raw = default_is_raw
        params = keyword_parameters(sampler_cls)
        self.has_upper_bound = "upper_priority" in params
        self.has_within_buffer = "max_priority_within_buffer" in params
        # conformance.interface: the devices the area runs on (a CUDA run builds the sampler
        # with device=, i.e. TorchRL's CUDA trees)
        if "device" in params:
            self.devices = ("cpu", "cuda")
        else:
            self.devices = ("cpu",)
            self.devices_why = (f"{sampler_cls.__name__} has no device= keyword: its segment "
                                "trees live on the CPU (CUDA trees: pytorch/rl#3677)")
        self.cuda_problem = cuda_problem

    @staticmethod
    def _check_device(device, what: str, cuda_problem):
        """The device a buffer is built on; Untestable where its trees cannot be."""
        device = torch.device(device or "cpu")
        if device.type == "cuda":
            problem = cuda_problem()
            if problem:
                raise Untestable(f"{what} on {device}: {problem}")
        return device

    # A TorchRL release without an option the spec asks of TorchRL fails that spec
    # (AssertionError), it is not "not applicable": NotImplementedError from adapter code would
    # declare it so (conformance/plugin/not_applicable.py), which is for other libraries.
    def buffer(self, *, capacity, alpha, beta, eps, upper_priority=None, row_width=1,
               device=None):
        device = self._check_device(device, self.sampler_cls.__name__, self.cuda_problem)
        kwargs = dict(max_capacity=capacity, alpha=alpha, beta=beta, eps=eps)
        # a CUDA device, or a CPU device spelled with its index (cpu:0, the device-spelling
        # specs), is handed over as given; the plain CPU is built exactly as before devices
        if device.type != "cpu" or device.index is not None:
            if "device" not in keyword_parameters(self.sampler_cls):
                raise AssertionError(
                    f"{self.sampler_cls.__name__} takes no keyword 'device' (CUDA prioritized "
                    "sampling came with pytorch/rl#3677, torchrl 0.13.0): the spec builds its "
                    f"sampler with device={str(device)!r}")
            kwargs["device"] = device
        if self.has_within_buffer:
            kwargs["max_priority_within_buffer"] = True
        if upper_priority is not None:
            if not self.has_upper_bound:
                raise AssertionError(
                    f"{self.sampler_cls.__module__}.{self.sampler_cls.__name__} has no upper "
                    "bound on the default priority (pytorch/rl#2210 proposed `_upper_priority`; "
                    "it was not merged)")
            kwargs["upper_priority"] = upper_priority
        return _Buffer(self, kwargs, capacity, row_width, device)

    #: set by ``make`` where the release has one (the §5 family capability ``slice_buffer``)
    slice_sampler_cls = None

    def slice_buffer(self, *, capacity, alpha, beta, eps, slice_len, traj_len, device=None):
        """A ``PrioritizedSliceSampler`` buffer (``conformance.interface.PrioritizedSlices``);
        on a CUDA storage TorchRL's slice sampler builds its trees on the storage's device."""
        if self.slice_sampler_cls is None:
            raise AssertionError("this release has no PrioritizedSliceSampler")
        # the slice sampler is TorchRL's, for the reference too: TorchRL's CUDA trees
        device = self._check_device(device, "PrioritizedSliceSampler", cuda_trees_problem)
        kwargs = dict(max_capacity=capacity, alpha=alpha, beta=beta, eps=eps,
                      slice_len=slice_len, traj_key="traj", strict_length=False)
        if "max_priority_within_buffer" in keyword_parameters(self.slice_sampler_cls):
            kwargs["max_priority_within_buffer"] = True
        return _SliceBuffer(self, kwargs, capacity, traj_len, device)

    # ---------------------------------------------------------- issue #31 capabilities
    #: ``(size, reduce) -> tree``: set by ``make`` (TorchRL's C++ trees, or the reference's)
    tree_factory = None

    def segment_tree(self, *, size, reduce):
        """``conformance.interface.PrioritizedTrees``: the library's own tree, on the CPU."""
        if self.tree_factory is None:
            raise AssertionError("this release exposes no segment tree classes")
        return _Tree(self.tree_factory(size, reduce))

    def sampler_sum_tree(self, buffer):
        """``conformance.interface.PrioritizedSamplerTree``: ``sampler._sum_tree``."""
        return _Tree(buffer.sampler._sum_tree)

    def historical_buffer(self, *, capacity, alpha, beta, eps, device=None):
        """``conformance.interface.PrioritizedHistorical``: in-buffer tracking off (TorchRL's
        default; 0.4.x has no option and always keeps the historical maximum)."""
        device = self._check_device(device, self.sampler_cls.__name__, self.cuda_problem)
        kwargs = dict(max_capacity=capacity, alpha=alpha, beta=beta, eps=eps)
        if device.type != "cpu":
            kwargs["device"] = device
        if self.has_within_buffer:
            kwargs["max_priority_within_buffer"] = False
        return _Buffer(self, kwargs, capacity, 1, device)
    # -- conformance.interface.PrioritizedCheckpoints: the sampler's own dumps/loads and
    # state_dict/load_state_dict, as ReplayBuffer.dumps/loads and state_dict call them
    def dump_sampler(self, buffer, path):
        with quiet():
            buffer.sampler.dumps(path)

    def load_sampler(self, buffer, path):
        with quiet():
            buffer.sampler.loads(path)
        buffer.alpha = buffer.sampler.alpha  # the checkpoint's (for default_priority's inverse)

    def sampler_state(self, buffer):
        with quiet():
            return buffer.sampler.state_dict()

    def load_sampler_state(self, buffer, state):
        with quiet():
            buffer.sampler.load_state_dict(state)
        buffer.alpha = buffer.sampler.alpha

    # -- conformance.interface.PrioritizedIndexForms: update_priority / mark_update with the
    # index and priority objects as given (tensors moved to a GPU run's device, nothing else)
    def update_as_given(self, buffer, index, priority):
        with quiet():
            buffer.rb.update_priority(_on(buffer, index), _on(buffer, priority))

    def mark_update_as_given(self, buffer, index):
        with quiet():
            buffer.rb.mark_update(_on(buffer, index))

    def sampler_update_as_given(self, buffer, index, priority, *, with_storage):
        storage = buffer.rb.storage if with_storage else None
        with quiet():
            buffer.sampler.update_priority(_on(buffer, index), _on(buffer, priority),
                                           storage=storage)

    # -- conformance.interface.PrioritizedBufferClasses: the buffer classes TorchRL's examples
    # build ({name: class}, set by make; None: the capability fails naming what is missing)
    example_classes = None

    def example_buffer(self, *, kind, capacity, alpha, beta, eps, upper_priority=None,
                       device=None):
        cls, kwargs = self._example_kwargs(kind, alpha, beta, eps, upper_priority, device)
        return _ExampleBuffer(self, cls, kind, kwargs, capacity)

    def _example_kwargs(self, kind, alpha, beta, eps, upper_priority, device):
        """The class ``kind`` and the keywords ``example_buffer`` builds it with."""
        self._check_device(device, kind, self.cuda_problem)
        if device is not None and torch.device(device).type != "cpu":
            raise Untestable(f"{kind} is checked on the CPU only")
        cls = (self.example_classes or {}).get(kind)
        if cls is None:
            raise AssertionError(f"no {kind} class is known for this implementation")
        kwargs = dict(alpha=alpha, beta=beta)
        if eps is not None:  # None: the class's default, as the examples leave it
            kwargs["eps"] = eps
        if upper_priority is not None:
            if "upper_priority" not in keyword_parameters(cls):
                raise AssertionError(
                    f"{cls.__module__}.{cls.__name__} has no upper bound on the default "
                    "priority (pytorch/rl#2210 proposed `_upper_priority`; it was not merged)")
            kwargs["upper_priority"] = upper_priority
        return cls, kwargs

    def option_buffer(self, *, kind, capacity, alpha, beta, eps, dtype=None,
                      priority_dtype="float32", sync=True, reduction=None,
                      upper_priority=None, device=None):
        """``conformance.interface.PrioritizedBufferOptions``: ``example_buffer`` with
        TorchRL's other constructor keywords, each passed only when the spec gives it."""
        cls, kwargs = self._example_kwargs(kind, alpha, beta, eps, upper_priority, device)
        given = {"dtype": None if dtype is None else getattr(torch, dtype),
                 "sync": None if sync else False, "reduction": reduction}
        for name, value in given.items():
            if value is None:
                continue
            if name not in keyword_parameters(cls):
                raise AssertionError(f"{cls.__module__}.{cls.__name__} has no {name}= keyword")
            kwargs[name] = value
        return _ExampleBuffer(self, cls, kind, kwargs, capacity,
                              priority_dtype=np.dtype(priority_dtype))


    # -- conformance.interface.PrioritizedSamplerKeywords: the sampler built with the keywords
    # a user passes, a buffer holding its own generator, draws as a training loop makes them
    def sampler_buffer(self, *, kind, capacity, alpha, beta, options, generator=None,
                       device=None):
        self._check_device(device, kind, self.cuda_problem)
        if device is not None and torch.device(device).type != "cpu":
            raise Untestable(f"{kind} with the sampler's keywords is checked on the CPU only")
        if kind in ("ReplayBuffer", "TensorDictReplayBuffer"):
            cls = self.sampler_cls  # the options go to the sampler, the generator to the buffer
        else:
            cls = (self.example_classes or {}).get(kind)
            if cls is None:
                raise AssertionError(f"no {kind} class is known for this implementation")
        wanted = [*options, *(["generator"] if generator is not None and cls is not
                              self.sampler_cls else [])]
        missing = [k for k in wanted if k not in keyword_parameters(cls)]
        if missing:
            raise AssertionError(f"{cls.__module__}.{cls.__name__} takes no keyword "
                                 f"{', '.join(map(repr, missing))}")
        if kind == "ReplayBuffer":
            return _KeywordBuffer(self, capacity, alpha, beta, options, generator)
        if kind == "TensorDictReplayBuffer":
            return _KeywordTensorDictBuffer(self, capacity, alpha, beta, options, generator)
        kwargs = dict(alpha=alpha, beta=beta, **options)
        if generator is not None:
            kwargs["generator"] = generator
        return _ExampleBuffer(self, cls, kind, kwargs, capacity)

    def update_td_error(self, buffer, index, td_error):
        from tensordict import TensorDict

        index = torch.as_tensor(np.asarray(index, dtype=np.int64))
        td = TensorDict({"index": index, "td_error": torch.as_tensor(
            np.asarray(td_error, dtype=np.float32))}, index.shape)
        with quiet():
            buffer.rb.update_tensordict_priority(td)

    def draw(self, buffer, batch_size):
        with quiet():
            if getattr(buffer, "tensordicts", False):
                td = buffer.rb.sample(batch_size)
                index, item, weight = td["index"], td["item"], td["priority_weight"]
            else:
                item, info = buffer.rb.sample(batch_size, return_info=True)
                index, weight = info["index"], info.get("priority_weight", info.get("_weight"))
        if isinstance(index, tuple):  # one tensor per storage dimension: stacked, not flattened
            index = torch.stack([torch.as_tensor(i) for i in index], -1)
        return PrioritizedDraw(index=torch.as_tensor(index).cpu().numpy().astype(np.int64),
                               item=torch.as_tensor(item).reshape(-1).cpu().numpy().astype(np.int64),
                               weight=torch.as_tensor(weight).reshape(-1).cpu().numpy())

def _on(buffer, value):
    """``value`` (a tensor, or a tuple of them) on the buffer's device; anything else as is."""
    if isinstance(value, tuple):
        return tuple(_on(buffer, v) for v in value)
    return buffer._placed(value) if isinstance(value, torch.Tensor) else value


def _storage(capacity, device, **kwargs):
    from torchrl.data import LazyTensorStorage

    if device.type != "cpu":
        kwargs["device"] = device
    return LazyTensorStorage(capacity, **kwargs)


class _Buffer:
    def __init__(self, area: PrioritizedReplayArea, sampler_kwargs, capacity, row_width,
                 device):
        from torchrl.data import ReplayBuffer

        self.area = area
        self.alpha, self.eps = sampler_kwargs["alpha"], sampler_kwargs["eps"]
        self.row_width = row_width
        self.shape = (capacity,) if row_width == 1 else (capacity // row_width, row_width)
        self.requested = device
        with quiet():
            self.sampler = area.sampler_cls(**sampler_kwargs)
            if row_width == 1:
                storage = _storage(capacity, device)
                self.rb = ReplayBuffer(storage=storage, sampler=self.sampler)
            else:  # rows written whole: extend along dim 0 of a [rows, row_width] storage
                storage = _storage(capacity, device, ndim=2)
                self.rb = ReplayBuffer(storage=storage, sampler=self.sampler, dim_extend=0)
        self.next_item = 0

    @property
    def device(self) -> torch.device:
        """Where the sampler keeps its priorities (a release without the property: the CPU)."""
        found = getattr(self.sampler, "device", None)
        return torch.device(found) if found is not None else torch.device("cpu")

    # ------------------------------------------------------------------------- indices
    def _flat(self, index) -> np.ndarray:
        if isinstance(index, tuple):
            index = torch.stack([torch.as_tensor(i) for i in index], -1)
        index = torch.as_tensor(index).cpu().numpy().astype(np.int64)
        if len(self.shape) == 1:
            return index.reshape(-1)
        index = index.reshape(-1, len(self.shape))
        return np.ravel_multi_index(tuple(index.T), self.shape).astype(np.int64)

    def _native(self, flat: np.ndarray) -> torch.Tensor:
        flat = np.asarray(flat, dtype=np.int64)
        if len(self.shape) == 1:
            return self._placed(torch.as_tensor(flat))
        return self._placed(torch.as_tensor(np.stack(np.unravel_index(flat, self.shape), -1)))

    def _placed(self, tensor: torch.Tensor) -> torch.Tensor:
        # on the CPU, as before devices existed; on a GPU where the buffer lives
        return tensor if self.requested.type == "cpu" else tensor.to(self.requested)

    # ---------------------------------------------------------------------- operations
    def __len__(self) -> int:
        return len(self.rb)

    def extend(self, rows: int) -> np.ndarray:
        n = rows * self.row_width
        # the items go where the storage is, as every input of a run goes to its device:
        # TorchRL's LazyTensorStorage(device="cuda") does not move what it is given (a CPU tensor
        # raises "Expected all tensors to be on the same device", seen on an H200)
        items = self._placed(torch.arange(self.next_item, self.next_item + n))
        self.next_item += n
        data = items if self.row_width == 1 else items.reshape(rows, self.row_width)
        with quiet():
            return self._flat(self.rb.extend(data))

    priority_dtype = np.dtype(np.float32)  # what update_priority hands the buffer

    def update_priority(self, index, priority) -> None:
        priority = self._placed(torch.as_tensor(np.asarray(priority, dtype=self.priority_dtype)))
        with quiet():
            self.rb.update_priority(self._native(index), priority)

    def sample(self, batch_size: int, generator: torch.Generator) -> PrioritizedDraw:
        if hasattr(self.rb, "set_rng"):
            self.rb.set_rng(generator)
        else:
            self.sampler._rng = generator
        with quiet():
            data, info = self.rb.sample(batch_size, return_info=True)
        weight = info.get("priority_weight", info.get("_weight"))
        if weight is None:
            raise AssertionError(f"sample info holds no importance weights: keys {sorted(info)}")
        return PrioritizedDraw(
            index=self._flat(info["index"]),
            item=torch.as_tensor(data).reshape(-1).cpu().numpy().astype(np.int64),
            weight=torch.as_tensor(weight, dtype=torch.float64).reshape(-1).cpu().numpy(),
        )

    def tree_values(self) -> np.ndarray:
        index = self._placed(torch.arange(len(self.rb)))
        values = self.sampler._sum_tree[index]
        return torch.as_tensor(values, dtype=torch.float64).reshape(-1).cpu().numpy()

    def default_priority(self) -> float:
        value = float(self.sampler.default_priority)
        if not self.area.default_is_raw and self.alpha > 0:
            # before 0.13.3 the property returned (p + eps) ** alpha (pytorch/rl#3925)
            value = max(value ** (1.0 / self.alpha) - self.eps, 0.0)
        return value

    def set_alpha(self, alpha: float) -> None:
        with quiet():
            self.sampler.alpha = alpha
        self.alpha = alpha

    def state_dict(self):
        return copy.deepcopy((self.rb.state_dict(), self.next_item, self.alpha))

    def load_state_dict(self, state) -> None:
        rb_state, self.next_item, self.alpha = copy.deepcopy(state)
        with quiet():
            self.rb.load_state_dict(rb_state)


class _SliceBuffer(_Buffer):
    """Items are a tensordict ``{"item", "traj"}`` (trajectory id ``item // traj_len``);
    checkpoints are the buffer's own ``state_dict`` objects, handed over uncopied."""

    def __init__(self, area, sampler_kwargs, capacity, traj_len, device):
        from torchrl.data import ReplayBuffer

        self.area = area
        self.alpha, self.eps = sampler_kwargs["alpha"], sampler_kwargs["eps"]
        self.row_width, self.shape, self.traj_len = 1, (capacity,), traj_len
        self.requested = device
        with quiet():
            self.sampler = area.slice_sampler_cls(**sampler_kwargs)
            self.rb = ReplayBuffer(storage=_storage(capacity, device), sampler=self.sampler)
        self.next_item = 0

    def extend(self, rows: int) -> np.ndarray:
        from tensordict import TensorDict

        items = self._placed(torch.arange(self.next_item, self.next_item + rows))  # see _Buffer
        self.next_item += rows
        with quiet():
            return self._flat(self.rb.extend(TensorDict(
                {"item": items, "traj": items // self.traj_len}, [rows], device=items.device)))

    def sample(self, batch_size: int, generator: torch.Generator) -> PrioritizedDraw:
        self.rb.set_rng(generator)
        with quiet():
            data, info = self.rb.sample(batch_size, return_info=True)
        return PrioritizedDraw(
            index=self._flat(info["index"]),
            item=data["item"].reshape(-1).cpu().numpy().astype(np.int64),
            weight=torch.as_tensor(info["priority_weight"],
                                   dtype=torch.float64).reshape(-1).cpu().numpy(),
        )

    def state_dict(self):
        return self.rb.state_dict(), self.next_item

    def load_state_dict(self, state) -> None:
        rb_state, self.next_item = state
        with quiet():
            self.rb.load_state_dict(rb_state)


PROBE_ALPHA, PROBE_EPS = 0.5, 0.44  # (1 + 0.44) ** 0.5 = 1.2: far from the raw 1.0


def default_is_transformed(sampler_cls) -> bool:
    """Whether ``default_priority`` returns ``(p + eps) ** alpha`` (before pytorch/rl#3925).

    An empty sampler's default is the documented initial priority 1.0: returned raw it is 1.0,
    transformed it is ``(1 + eps) ** alpha``. Anything else is read as raw, so that the specs,
    not this probe, judge it.
    """
    with quiet():
        sampler = sampler_cls(2, alpha=PROBE_ALPHA, beta=0.5, eps=PROBE_EPS)
        value = float(sampler.default_priority)
    return abs(value - (1.0 + PROBE_EPS) ** PROBE_ALPHA) < 1e-6


def _load_error() -> str:
    """Why ``import torchrl._torchrl`` fails here, first line."""
    try:
        import torchrl._torchrl  # noqa: F401
    except ImportError as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200]
    return "it imports, but has no segment trees"


def make(adapter):
    from torchrl.data import PrioritizedSampler

    problem = extension_problem(PrioritizedSampler)
    if problem:
        # TorchRL's own words point at a warning that went to the warnings filter: say instead
        # why its extension did not load, then the one option that fixes it
        problem = problem.replace(" See warning above.", "")
        raise Untestable(
            f"TorchRL's C++ segment trees (torchrl._torchrl) do not load next to this torch "
            f"({_load_error()}), so PrioritizedSampler cannot be built: {problem} — fix: "
            f"{TREES_FIX}")
    area = PrioritizedReplayArea(
        PrioritizedSampler, default_is_raw=not default_is_transformed(PrioritizedSampler))
    area.slice_sampler_cls = slice_sampler()
    area.tree_factory = torchrl_trees()
    area.example_classes = example_classes()
    return area


def example_classes() -> dict:
    """TorchRL's prioritized buffer classes (``PrioritizedBufferClasses``), by name."""
    import torchrl.data

    names = ("PrioritizedReplayBuffer", "TensorDictPrioritizedReplayBuffer")
    return {n: getattr(torchrl.data, n) for n in names if hasattr(torchrl.data, n)}


def slice_sampler():
    import torchrl.data

    return getattr(torchrl.data, "PrioritizedSliceSampler", None)


# ---------------------------------------------------------------- issue #31: the trees
def torchrl_trees():
    """``(size, reduce) -> tree``: TorchRL's float32 C++ trees, as its sampler builds them."""
    from torchrl.data.replay_buffers import samplers

    classes = {"sum": getattr(samplers, "SumSegmentTreeFp32", None),
               "min": getattr(samplers, "MinSegmentTreeFp32", None)}
    if None in classes.values():
        return None
    return lambda size, reduce: classes[reduce](size)


class _Tree:
    """A segment tree as a user drives it (``conformance.interface.SegmentTreeHandle``):
    float32 values in (the dtype of TorchRL's trees; the specs' values are float32-exact),
    float64 numpy out."""

    def __init__(self, tree):
        self.tree = tree

    def write(self, index, value) -> None:
        if isinstance(index, int | np.integer):
            self.tree[int(index)] = float(value)
            return
        index = torch.as_tensor(np.asarray(index, dtype=np.int64))
        if np.ndim(value) == 0:
            self.tree[index] = float(value)
        else:
            self.tree[index] = torch.as_tensor(np.asarray(value, dtype=np.float32))

    def values(self, index) -> np.ndarray:
        got = self.tree[torch.as_tensor(np.asarray(index, dtype=np.int64))]
        return torch.as_tensor(got, dtype=torch.float64).cpu().numpy()  # shape kept

    def query(self, start, end) -> float:
        return float(self.tree.query(int(start), int(end)))

    def scan_lower_bound(self, mass) -> np.ndarray:
        if np.ndim(mass) == 0:
            got = self.tree.scan_lower_bound(float(mass))
        else:
            got = self.tree.scan_lower_bound(torch.as_tensor(np.asarray(mass, dtype=np.float32)))
        return torch.as_tensor(got).reshape(-1).cpu().numpy().astype(np.int64)
class _ExampleBuffer(_Buffer):
    """A buffer built as TorchRL's prioritized examples build theirs: the class itself over a
    ``LazyTensorStorage``, no sampler argument, TorchRL's defaults; a tensordict buffer's
    priorities are written as the examples write them, by ``update_tensordict_priority`` from
    a tensordict holding the indices and the ``td_error``."""

    def __init__(self, area, cls, kind, kwargs, capacity, priority_dtype=None):
        from torchrl.data import LazyTensorStorage

        self.area, self.kind = area, kind
        self.alpha, self.eps = kwargs["alpha"], kwargs.get("eps", 1e-8)
        self.row_width, self.shape = 1, (capacity,)
        self.requested = torch.device("cpu")
        self.tensordicts = kind == "TensorDictPrioritizedReplayBuffer"
        if priority_dtype is not None:
            self.priority_dtype = priority_dtype
        # capacity None: no storage= (the class's default storage)
        storage = {} if capacity is None else {"storage": LazyTensorStorage(capacity)}
        with quiet():
            self.rb = cls(**storage, **kwargs)
        self.next_item = 0

    @property
    def sampler(self):
        # the sampler holding the priorities: with sync=False TorchRL keeps it beside a
        # RandomSampler (prioritized_sampler, 0.14); sampler is a property in recent releases
        for name in ("prioritized_sampler", "sampler", "_sampler"):
            found = getattr(self.rb, name, None)
            if found is not None:
                return found
        raise AssertionError(f"{self.kind} holds no sampler")

    def extend(self, rows: int) -> np.ndarray:
        if not self.tensordicts:
            return super().extend(rows)
        from tensordict import TensorDict

        items = torch.arange(self.next_item, self.next_item + rows)
        self.next_item += rows
        with quiet():
            return self._flat(self.rb.extend(TensorDict({"item": items}, [rows])))

    def update_priority(self, index, priority) -> None:
        if not self.tensordicts:
            return super().update_priority(index, priority)
        from tensordict import TensorDict

        index = torch.as_tensor(np.asarray(index, dtype=np.int64))
        td_error = torch.as_tensor(np.asarray(priority, dtype=self.priority_dtype))
        if td_error.ndim < 2:  # one per item, or one for all; [n, k]: written whole
            td_error = td_error.expand(index.shape)
        td = TensorDict({"index": index, "td_error": td_error}, index.shape)
        with quiet():
            self.rb.update_tensordict_priority(td)

    def sample(self, batch_size: int, generator: torch.Generator) -> PrioritizedDraw:
        if not self.tensordicts:
            return super().sample(batch_size, generator)
        self.rb.set_rng(generator)
        with quiet():
            td = self.rb.sample(batch_size)
        return PrioritizedDraw(
            index=self._flat(td["index"]),
            item=td["item"].reshape(-1).numpy().astype(np.int64),
            weight=td["priority_weight"].to(torch.float64).reshape(-1).numpy())


class _KeywordBuffer(_Buffer):
    """A ``ReplayBuffer`` over a CPU ``LazyTensorStorage`` holding the sampler built with
    exactly the keywords given, and the buffer's own generator when one is given."""

    def __init__(self, area, capacity, alpha, beta, options, generator):
        from torchrl.data import LazyTensorStorage, ReplayBuffer

        self.area = area
        self.alpha, self.eps = alpha, options.get("eps", 1e-8)
        self.row_width, self.shape = 1, (capacity,)
        self.requested = torch.device("cpu")
        extra = {} if generator is None else {"generator": generator}
        with quiet():
            self.sampler = area.sampler_cls(capacity, alpha, beta, **options)
            self.rb = ReplayBuffer(storage=LazyTensorStorage(capacity), sampler=self.sampler,
                                   **extra)
        self.next_item = 0


class _KeywordTensorDictBuffer(_ExampleBuffer):
    """A ``TensorDictReplayBuffer`` over a CPU ``LazyTensorStorage`` holding the sampler built
    with exactly the keywords given; items and priorities as the example tensordict buffer's."""

    def __init__(self, area, capacity, alpha, beta, options, generator):
        from torchrl.data import LazyTensorStorage, TensorDictReplayBuffer

        self.area, self.kind = area, "TensorDictReplayBuffer"
        self.alpha, self.eps = alpha, options.get("eps", 1e-8)
        self.row_width, self.shape = 1, (capacity,)
        self.requested = torch.device("cpu")
        self.tensordicts = True
        extra = {} if generator is None else {"generator": generator}
        with quiet():
            sampler = area.sampler_cls(capacity, alpha, beta, **options)
            self.rb = TensorDictReplayBuffer(storage=LazyTensorStorage(capacity),
                                             sampler=sampler, **extra)
        self.next_item = 0
