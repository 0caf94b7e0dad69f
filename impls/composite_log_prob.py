"""A composite distribution whose log-prob is the joint log-prob of its heads, whatever
tensordict the sample arrives in.

``CompositeDistribution`` is a drop-in for ``tensordict.nn.CompositeDistribution`` (tensordict
0.7+ API: ``set_composite_lp_aggregate`` decides between one aggregate tensor and per-head
entries) with three changes:

- The aggregate reduces each head's log-prob over the dims beyond the *distribution's* batch
  shape (plus any leading sample dims), never over the sample tensordict's ``ndim``. Upstream
  keys on ``sample.ndim``, so a sample tensordict with ``batch_size=[]`` holding ``[B]`` actions
  is summed over the batch, and a MARL sub-tensordict with fewer batch dims than the
  distribution sums over agents (pytorch/rl#2487, pytorch/tensordict#1054).
- A categorical action stored with a trailing singleton dim (``[*batch, 1]`` against logits
  ``[*batch, n]``, as environments with an action spec of shape (1,) store it) is scored as
  ``[*batch]``: torch's broadcasting would otherwise score every action against every row
  (``[B, B]``) and the aggregate would be the wrong row sums (the -200/-300 of rl#2487).
- ``name_map`` is checked against ``distribution_map`` and the parameters at construction:
  a name_map entry for an unknown head, a head without an entry, two heads written to the same
  key, or a head without parameters raise ``KeyError`` naming the key (upstream writes an
  unmapped head silently at its own name and ignores unknown entries). A head without a mean
  (Categorical) under ``ExplorationType.MEAN`` raises ``ValueError`` naming the head instead of
  feeding NaN to ``log_prob`` (the "index -9223372036854775808 is out of bounds" of rl#2402).

``ProbabilisticActor`` is TorchRL's actor, which also recognises subclasses of the composite
distribution when inferring ``out_keys`` (upstream tests ``distribution_class is
CompositeDistribution``) and refuses ``out_keys`` that differ from the keys the distribution
writes (e.g. nested out_keys without a name_map).
"""

from __future__ import annotations

import functools

import torch
from tensordict import TensorDict, TensorDictBase
from tensordict.nn import CompositeDistribution as _TensorDictCompositeDistribution
from tensordict.nn import composite_lp_aggregate

# upstream's own naming of a head's log-prob entry (<sample key>_log_prob), so that the keys
# written here are the keys tensordict's modules and TorchRL's losses look for
from tensordict.nn.distributions.composite import _add_suffix
from tensordict.utils import unravel_key
from torch.distributions import Categorical
from torchrl.modules import ProbabilisticActor as _TorchRLProbabilisticActor


class CompositeKeyError(KeyError):
    """A KeyError whose message prints as written (KeyError quotes its argument)."""

    def __str__(self) -> str:
        return str(self.args[0])  # raised here always with its message


def _entries(td: TensorDictBase) -> list:
    """The keys a tensordict holds, nested ones included, for error messages."""
    return list(td.keys(include_nested=True))


def composite_sample_keys(distribution_map, name_map=None) -> dict:
    """Head -> the key its sample is written to, after checking ``name_map``.

    Without a name_map every head is written at its own key. With one, each head needs exactly
    one entry, every entry must name a head, and no two heads may share a key.
    """
    # No uncached fallback for unhashable entries: a key that is not hashable (a list) is not a
    # tensordict key either (unravel_key refuses it), so it is refused here as a TypeError.
    return dict(_sample_keys(tuple(distribution_map),
                             None if name_map is None else tuple(name_map.items())))


@functools.lru_cache(maxsize=256)
def _sample_keys(distribution_keys: tuple, name_map_items: tuple | None) -> tuple:
    # Cached: a policy builds its distribution from the same maps at every call.
    heads = [unravel_key(h) for h in distribution_keys]
    if name_map_items is None:
        return tuple((h, h) for h in heads)
    mapped = {unravel_key(k): unravel_key(v) for k, v in name_map_items}
    for key in mapped:
        if key not in heads:
            raise CompositeKeyError(
                f"name_map maps {key!r}, which is not a head of distribution_map (heads: "
                f"{heads}); name_map keys must be distribution_map keys")
    for head in heads:
        if head not in mapped:
            raise CompositeKeyError(
                f"name_map has no entry for head {head!r} of distribution_map; give every head "
                f"the key its sample is written to, e.g. {head!r}: ('action', {head!r})")
    seen: dict = {}
    for head, key in mapped.items():
        if key in seen:
            raise CompositeKeyError(
                f"name_map writes heads {seen[key]!r} and {head!r} to the same key {key!r}")
        seen[key] = head
    return tuple((h, mapped[h]) for h in heads)


class CompositeDistribution(_TensorDictCompositeDistribution):
    """Drop-in for ``tensordict.nn.CompositeDistribution`` (same arguments, same outputs) whose
    log-prob aggregates over its own batch shape and whose ``name_map`` is validated."""

    def __init__(self, params: TensorDictBase, distribution_map: dict, *, name_map=None,
                 extra_kwargs=None, log_prob_key=None, entropy_key=None):
        write_keys = composite_sample_keys(distribution_map, name_map)
        self._batch_shape = params.shape
        extra_kwargs = {unravel_key(k): v for k, v in (extra_kwargs or {}).items()}
        dists = {}
        for head, dist_class in distribution_map.items():
            head = unravel_key(head)
            head_params = params.get(head)  # None when absent
            if head_params is None:
                raise CompositeKeyError(
                    f"distribution_map declares head {head!r}, but the parameters hold no entry "
                    f"{head!r} (parameter entries: {_entries(params)})")
            if not isinstance(head_params, TensorDictBase):
                raise CompositeKeyError(
                    f"the parameters of head {head!r} must be a tensordict of keyword arguments "
                    f"of {dist_class.__name__} (e.g. {head!r}: {{'logits': ...}}), got a "
                    f"{type(head_params).__name__}")
            # dict(items()) rather than **head_params: unpacking a tensordict costs ~20 us a head
            kwargs = dict(head_params.items())
            dists[write_keys[head]] = dist_class(**kwargs, **extra_kwargs.get(head, {}))
        self.dists = dists
        self.log_prob_key = log_prob_key
        self.entropy_key = entropy_key

    # -------------------------------------------------------------- scoring one head
    def _value(self, key, dist, sample: TensorDictBase) -> torch.Tensor:
        value = sample.get(key)  # None when absent
        if value is None:
            raise CompositeKeyError(
                f"the sample has no entry {key!r} for a head of the composite distribution "
                f"(sample entries: {_entries(sample)})")
        expected = dist.batch_shape + dist.event_shape
        n = len(expected)
        # [*batch, 1] for a head whose own shape does not end in 1: a stored trailing singleton,
        # not a sample dim (which torch would broadcast into [*batch, *batch]).
        if (n and value.ndim > n and value.shape[-1] == 1 and expected[-1] != 1
                and value.shape[value.ndim - 1 - n:-1] == expected):
            value = value.squeeze(-1)
        return value

    @staticmethod
    def _head_log_prob(key, dist, value: torch.Tensor) -> torch.Tensor:
        if type(dist) is not Categorical or value.shape != dist.batch_shape:
            return dist.log_prob(value)
        # The common case (a category index per batch element), without torch's broadcast and
        # its four-kernel support check, and checked even when argument validation is off (as
        # TorchRL sets it): one min/max reduction, and an error naming the head instead of the
        # "index ... is out of bounds" a NaN or out-of-range action gives inside gather.
        n = dist.logits.shape[-1]
        if value.numel():
            low, high = (t.item() for t in torch.aminmax(value))
            if not (low >= 0 and high < n):  # also catches NaN
                raise ValueError(
                    f"the action of head {key!r} must be a category index in [0, {n}), got values "
                    f"in [{low:g}, {high:g}]")
        return dist.logits.gather(-1, value.long().unsqueeze(-1)).squeeze(-1)

    def _reduce(self, dist, lp: torch.Tensor) -> torch.Tensor:
        # lp is [*sample, *head batch]; keep [*sample, *composite batch], sum the rest (the
        # element-wise event dims of e.g. a Normal over [B, d]).
        keep = max(lp.ndim - len(dist.batch_shape), 0) + len(self.batch_shape)
        if lp.ndim > keep:  # (a sum over no dims would sum them all)
            lp = lp.sum(tuple(range(keep, lp.ndim)))
        return lp

    def _head_log_probs(self, sample: TensorDictBase) -> dict:
        """Each head's log-prob as its distribution gives it (a Normal's element-wise), by the
        key its sample is read from."""
        return {key: self._head_log_prob(key, dist, self._value(key, dist, sample))
                for key, dist in self.dists.items()}

    def _joint(self, head_log_probs: dict) -> torch.Tensor:
        # one code path for the aggregate of log_prob and of log_prob_composite's include_sum
        return sum(self._reduce(self.dists[key], lp) for key, lp in head_log_probs.items())

    # -------------------------------------------------------------- public API
    def log_prob(self, sample: TensorDictBase):
        """The joint log-prob ``[*sample, *batch]`` when ``composite_lp_aggregate()``, else a
        tensordict of per-head log-probs (``log_prob_composite``)."""
        if not composite_lp_aggregate():
            return self.log_prob_composite(sample)
        return self._joint(self._head_log_probs(sample))

    def log_prob_composite(self, sample: TensorDictBase, *, include_sum: bool | None = None):
        """Per-head log-probs under ``<head>_log_prob`` (and their aggregate under
        ``log_prob_key`` with ``include_sum``), in ``sample`` when ``composite_lp_aggregate()``
        else in a new tensordict of its structure."""
        aggregate = composite_lp_aggregate()
        head_log_probs = self._head_log_probs(sample)
        entries = {_add_suffix(key, "_log_prob"): lp for key, lp in head_log_probs.items()}
        if aggregate if include_sum is None else include_sum:
            entries[self.log_prob_key] = self._joint(head_log_probs)
        if aggregate:
            return sample.update(entries)
        return sample.empty(recurse=True).update(entries).filter_empty_()

    @property
    def mean(self) -> TensorDictBase:
        means = {}
        for key, dist in self.dists.items():
            m = dist.mean
            if m.is_floating_point() and m.numel() and bool(torch.isnan(m).all()):
                raise ValueError(
                    f"head {key!r} ({type(dist).__name__}) has no mean (a category index cannot "
                    f"be averaged); use ExplorationType.MODE or DETERMINISTIC for this head")
            means[key] = m
        return TensorDict(means, self.batch_shape)

    @property
    def deterministic_sample(self) -> TensorDictBase:
        # The mode for discrete heads, the mean for real-valued ones (upstream's fallback, without
        # a warning per call).
        samples = {}
        for key, dist in self.dists.items():
            if hasattr(dist, "deterministic_sample"):
                samples[key] = dist.deterministic_sample
                continue
            try:
                discrete = bool(dist.support.is_discrete)
            except NotImplementedError:
                discrete = False
            samples[key] = dist.mode if discrete else dist.mean
        return TensorDict(samples, self.batch_shape)


class ProbabilisticActor(_TorchRLProbabilisticActor):
    """``torchrl.modules.ProbabilisticActor`` that infers and checks ``out_keys`` for any
    composite distribution class (this module's included)."""

    def __init__(self, module, in_keys, out_keys=None, *, spec=None, **kwargs):
        dist_class = kwargs.get("distribution_class")
        if isinstance(dist_class, type) and issubclass(dist_class, _TensorDictCompositeDistribution):
            dist_kwargs = kwargs.get("distribution_kwargs") or {}
            name_map = dist_kwargs.get("name_map")
            # without a distribution_map: KeyError('distribution_map'), as the distribution raises
            written = list(composite_sample_keys(dist_kwargs["distribution_map"],
                                                 name_map).values())
            if out_keys is None:
                out_keys = written
            else:
                declared = [unravel_key(k) for k in
                            ([out_keys] if isinstance(out_keys, (str, tuple)) else out_keys)]
                # the same keys, each once, in any order (repr: str and tuple keys do not compare)
                if sorted(map(repr, declared)) != sorted(map(repr, written)):
                    raise CompositeKeyError(
                        f"out_keys declare {declared}, but the composite distribution (name_map="
                        f"{name_map}) writes its samples to {written}: declare exactly those "
                        f"out_keys, one per head, or a name_map that writes them to {declared}")
        super().__init__(module, in_keys, out_keys, spec=spec, **kwargs)
