"""§5 through Tianshou's public ``PrioritizedReplayBuffer(size, alpha, beta)``.

Calls: ``add(Batch(obs=id, act, rew, terminated, truncated, obs_next, info))``,
``update_weight(index, priority)``, ``sample_indices(n)``, ``buf[index]`` (items and
``weight``, normalised by the batch's largest weight: ``weight_norm=True``, the default, which
the specs report with Tianshou's docstring), the
segment tree ``buf.weight[index]`` (a public attribute) and ``pickle`` for checkpoints (the way
Tianshou saves buffers). By design Tianshou keeps ``_max_prio`` (and ``_min_prio``) as running
extremes that start at 1.0 and never move back (``data/buffer/prio.py``): the specs report it.

Translations, each named:

- **eps.** Tianshou adds a fixed ``eps`` (float32 machine epsilon) to ``|p|``; the spec's
  ``eps`` is a parameter. The adapter passes ``p + (eps - eps_tianshou)`` so that Tianshou's
  own transform ``(|p'| + eps_tianshou) ** alpha`` is ``(p + eps) ** alpha``; priorities it
  reports are mapped back the same way. Its initial maximum 1.0 lives in that shifted domain,
  so the documented initial raw priority is ``1 - eps`` (``initial_priority``).
- **The default priority** has no public accessor: it is read from ``_max_prio`` (private),
  which is what ``init_weight`` raises to ``alpha`` for every new item.
- **Randomness.** ``sample_indices`` draws from numpy's global generator: it is seeded from the
  spec's torch generator before every draw.

Not available in Tianshou (NotImplementedError with the reason): an upper bound on the default
priority and changing ``alpha`` (there is ``set_beta`` only).
"""

from __future__ import annotations

import pickle

import numpy as np
import torch

from conformance.implementations.introspect import quiet
from conformance.interface import PrioritizedDraw

SOURCE = ("https://github.com/thu-ml/tianshou/blob/v2.0.1/tianshou/data/buffer/prio.py")
TS_EPS = float(np.finfo(np.float32).eps)


class PrioritizedReplayArea:
    devices = ("cpu",)  # conformance.interface: the devices this area runs on
    devices_why = ("Tianshou's PrioritizedReplayBuffer keeps its priorities in a numpy segment tree "
                   'in host memory')
    #: for failure messages (conformance/test_prioritized_replay.py, ``Run.explain``): what
    #: Tianshou documents, in its docstring or code, as its own design
    documented_design = {
        "historical_max": (
            "init_weight gives new items _max_prio ** alpha, a running maximum that starts at "
            "1.0 and update_weight only raises", f"{SOURCE}#L39-L47"),
        "batch_normalised_weights": (
            "'weight_norm: whether to normalize returned weights with the maximum weight value "
            "within the batch. Default to True.'", f"{SOURCE}#L12-L19"),
    }

    def __init__(self, buffer_cls, batch_cls):
        self.buffer_cls, self.batch_cls = buffer_cls, batch_cls
        self.eps = 1e-3  # of the last buffer built; the specs build the buffer first

    @property
    def initial_priority(self) -> float:
        # Tianshou's _max_prio starts at 1.0 = |p'| + eps_ts = p + eps in the shifted domain
        return 1.0 - self.eps

    def buffer(self, *, capacity, alpha, beta, eps, upper_priority=None, row_width=1,
               device=None):  # device: always the CPU, the only one declared
        if upper_priority is not None:
            raise NotImplementedError(
                f"Tianshou's PrioritizedReplayBuffer has no upper bound on the default priority ({SOURCE})")
        self.eps = eps
        return _Buffer(self, capacity, alpha, beta, eps, row_width)

    def slice_buffer(self, *, capacity, alpha, beta, eps, slice_len, traj_len, device=None):
        raise NotImplementedError(
            "Tianshou's PrioritizedReplayBuffer samples single transitions; Tianshou has no "
            "prioritized sampler of trajectory slices (PrioritizedSliceSampler-like)")


class _Buffer:
    def __init__(self, area, capacity, alpha, beta, eps, row_width):
        self.area = area
        self.rb = area.buffer_cls(capacity, alpha=alpha, beta=beta)
        self.shift = eps - TS_EPS
        self.row_width = row_width
        self.next_item = 0

    def __len__(self) -> int:
        return len(self.rb)

    def extend(self, rows: int) -> np.ndarray:
        n = rows * self.row_width
        ids = np.arange(self.next_item, self.next_item + n, dtype=np.int64)
        self.next_item += n
        written = []
        with quiet():
            for i in ids:  # one transition per add, as a single environment writes them
                batch = self.area.batch_cls(
                    obs=np.array([i]), act=np.zeros(1), rew=0.0, terminated=False,
                    truncated=False, obs_next=np.array([i]), info={})
                ptr, *_ = self.rb.add(batch)
                written.append(int(np.asarray(ptr).reshape(-1)[0]))
        return np.asarray(written, dtype=np.int64)

    def update_priority(self, index, priority) -> None:
        shifted = np.asarray(priority, dtype=np.float64) + self.shift
        self.rb.update_weight(np.asarray(index, dtype=np.int64), shifted)

    def sample(self, batch_size: int, generator: torch.Generator) -> PrioritizedDraw:
        # Tianshou samples with numpy's global generator: seed it from the spec's generator
        np.random.seed(int(torch.randint(0, 2**31 - 1, (1,), generator=generator)))
        index = np.asarray(self.rb.sample_indices(batch_size), dtype=np.int64)
        batch = self.rb[index]
        return PrioritizedDraw(
            index=index,
            item=np.asarray(batch.obs, dtype=np.int64).reshape(-1),
            weight=np.asarray(batch.weight, dtype=np.float64).reshape(-1))

    def tree_values(self) -> np.ndarray:
        return np.asarray(self.rb.weight[np.arange(len(self.rb))], dtype=np.float64)

    def default_priority(self) -> float:
        return float(self.rb._max_prio) - TS_EPS - self.shift

    def set_alpha(self, alpha: float) -> None:
        raise NotImplementedError(
            "Tianshou fixes alpha when the buffer is built (PrioritizedReplayBuffer has "
            "set_beta only)")

    def state_dict(self):
        return pickle.dumps((self.rb, self.next_item))

    def load_state_dict(self, state) -> None:
        self.rb, self.next_item = pickle.loads(state)


def make(adapter):
    from tianshou.data import Batch, PrioritizedReplayBuffer

    return PrioritizedReplayArea(PrioritizedReplayBuffer, Batch)
