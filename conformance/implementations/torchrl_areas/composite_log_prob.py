"""Composite log-probs through TorchRL's ProbabilisticActor / ClipPPOLoss and tensordict's
CompositeDistribution (also used, with the reference classes, for the reference).

Release switches (torchrl 0.6.0 .. 0.14.1, each paired with the same tensordict minor):

- tensordict >= 0.7 has ``set_composite_lp_aggregate``. The actor and the sample's aggregate are
  read with it set to True (the aggregate goes to the actor's ``log_prob_key``,
  ``"sample_log_prob"``; per-head log-probs to ``("action", "<head>_log_prob")``); per-head
  log-probs of a given sample with it set to False. PPO runs with it False (the default from
  tensordict 0.9, and what TorchRL's warning asks for) and lists of action / log-prob keys
  (torchrl >= 0.7).
- tensordict 0.6 has no switch: the actor always writes ``"sample_log_prob"`` and the per-head
  keys, ``log_prob(sample, aggregate_probabilities=True)`` gives the aggregate and
  ``log_prob_composite(sample, include_sum=False)`` the heads; PPO (torchrl 0.6) takes a single
  action key (the ``"action"`` sub-tensordict) and the aggregate ``"sample_log_prob"``.
- ``ClipPPOLoss._log_weight`` gives the importance ratio: ``(tensordict)`` in 0.6,
  ``(tensordict, adv_shape)`` from 0.7; its first output is the log-ratio in every release.
- ExplorationType members: RANDOM, MODE, MEAN and DETERMINISTIC exist from 0.6.
- torchrl 0.5 (tensordict 0.5): the specs are ``CompositeSpec`` / ``DiscreteTensorSpec`` /
  ``UnboundedContinuousTensorSpec`` (renamed in 0.6 by pytorch/rl#2368), and
  ``CompositeDistribution.log_prob(sample)`` always writes both the per-head
  ``<key>_log_prob`` entries and the summed ``"sample_log_prob"``. torchrl 0.4's
  CompositeDistribution has no ``name_map``: the specs fail on it with tensordict's own error.
- ``"action_log_prob"`` (the default log-prob key of a single-sample actor from tensordict 0.9)
  is never written by a composite actor: its per-head keys are ``<sample key>_log_prob``.
- ProbabilisticActor infers the out_keys from the name_map only for tensordict's own class
  (``distribution_class is CompositeDistribution``), so the reference passes its actor class.
"""

from __future__ import annotations

import contextlib
import inspect

import torch

from conformance.implementations.introspect import quiet
from conformance.interface import (
    COMPOSITE_EXPLORATION_TYPES,
    CompositeHead,
    CompositeLogProbs,
    CompositePPOStep,
)

ACTION = "action"


class _Gain(torch.nn.Module):
    # The policy network: every parameter tensor times a learnable scalar held at exactly 1, so
    # the distribution sees the heads' parameters bit for bit, gradients reach them, and the
    # PPO loss has parameters to make functional.
    def __init__(self, device):
        super().__init__()
        self.gain = torch.nn.Parameter(torch.ones((), device=device))

    def forward(self, *tensors):
        return tuple(t * self.gain for t in tensors)


class _ZeroCritic(torch.nn.Module):
    def forward(self, x):
        return torch.zeros(x.shape[:-1] + (1,), dtype=x.dtype, device=x.device)


def _lp_key(head: str):
    return (ACTION, f"{head}_log_prob")


def _spec_class(new: str, old: str):
    """A spec class by its name from torchrl 0.6 on, or by its name before (pytorch/rl#2368)."""
    import torchrl.data as specs

    return getattr(specs, new, None) or getattr(specs, old)


def _device(heads: dict[str, CompositeHead]) -> torch.device:
    """Where the heads' parameters live (the run's device): what the adapter builds goes there."""
    return next(iter(next(iter(heads.values())).params.values())).device


def _key_text(key) -> str:
    return repr(key if isinstance(key, str) else tuple(key))


class TensorDictComposite:
    devices = ("cpu", "cuda")  # conformance.interface: everything follows the heads' device

    def __init__(self, dist_cls, actor_cls, loss_cls):
        import tensordict.nn as tdnn
        from torchrl.envs.utils import ExplorationType

        self.dist_cls = dist_cls
        self.actor_cls = actor_cls
        self.loss_cls = loss_cls
        self._set_aggregate = getattr(tdnn, "set_composite_lp_aggregate", None)
        self.exploration_types = tuple(
            t for t in COMPOSITE_EXPLORATION_TYPES if hasattr(ExplorationType, t.upper()))

    # ------------------------------------------------------------------ building blocks
    def _aggregate(self, value: bool):
        if self._set_aggregate is None:
            return contextlib.nullcontext()
        return self._set_aggregate(value)

    @staticmethod
    def _distribution_class(head: CompositeHead):
        return {"categorical": torch.distributions.Categorical,
                "normal": torch.distributions.Normal}[head.kind]

    @staticmethod
    def _spec(head: CompositeHead):
        if head.kind == "categorical":
            return _spec_class("Categorical", "DiscreteTensorSpec")(head.params["logits"].shape[-1])
        return _spec_class("Unbounded", "UnboundedContinuousTensorSpec")(
            shape=head.params["loc"].shape[-1:])

    def _build(self, heads: dict[str, CompositeHead], *, fault: str | None = None):
        from tensordict.nn import TensorDictModule

        Composite = _spec_class("Composite", "CompositeSpec")
        names = list(heads)
        pairs = [(h, p) for h in names for p in heads[h].params]
        module = TensorDictModule(_Gain(_device(heads)), in_keys=[("obs", h, p) for h, p in pairs],
                                  out_keys=[("params", h, p) for h, p in pairs])
        dist_map = {h: self._distribution_class(heads[h]) for h in names}
        name_map = {h: (ACTION, h) for h in names}
        head_specs = {h: self._spec(heads[h]) for h in names}
        spec = Composite({ACTION: Composite(head_specs)})
        out_keys = None
        if fault == "flat_spec":
            spec = Composite(head_specs)
        elif fault == "no_name_map":
            name_map = None
            out_keys = [(ACTION, h) for h in names]
        elif fault == "name_map_missing_head":
            name_map.pop(names[-1])
        elif fault == "name_map_unknown_key":
            name_map["actionX"] = name_map.pop(names[-1])
        elif fault == "missing_params":
            dist_map["action3"] = torch.distributions.Categorical
            name_map["action3"] = (ACTION, "action3")
        elif fault is not None:
            raise ValueError(f"unknown misconfiguration {fault!r}")
        if fault in ("name_map_missing_head", "name_map_unknown_key", "missing_params",
                     "no_name_map"):
            spec = None  # the fault under test is in the maps, not in a spec mismatch
        kwargs = {"distribution_map": dist_map}
        if name_map is not None:
            kwargs["name_map"] = name_map
        return self.actor_cls(module, in_keys=["params"], out_keys=out_keys, spec=spec,
                              distribution_class=self.dist_cls, distribution_kwargs=kwargs,
                              return_log_prob=True)

    @staticmethod
    def _observation(heads: dict[str, CompositeHead]):
        from tensordict import TensorDict

        batch = next(iter(heads.values())).batch_shape
        return TensorDict({"obs": {h: dict(head.params) for h, head in heads.items()}}, batch)

    @staticmethod
    def _params(heads: dict[str, CompositeHead]):
        from tensordict import TensorDict

        batch = next(iter(heads.values())).batch_shape
        return TensorDict({h: dict(head.params) for h, head in heads.items()}, batch)

    @staticmethod
    def _exploration(name: str):
        from torchrl.envs.utils import ExplorationType, set_exploration_type

        return set_exploration_type(getattr(ExplorationType, name.upper()))

    @staticmethod
    @contextlib.contextmanager
    def _seeded(seed: int, device: torch.device):
        # the global RNG of the device that samples is put back afterwards too
        with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
            torch.manual_seed(seed)
            yield

    def _read(self, out, heads, aggregate_key) -> CompositeLogProbs:
        written = [k for k in out.keys(True, True) if not (isinstance(k, tuple) and k[0] in ("obs", "params"))]
        actions, lps, where = {}, {}, {"written": ", ".join(_key_text(k) for k in written)}
        for h in heads:
            a = out.get((ACTION, h), None)
            if a is not None:
                actions[h] = a
            lp = out.get(_lp_key(h), None)
            if lp is not None:
                lps[h] = lp
                where[h] = _key_text(_lp_key(h))
        agg = out.get(aggregate_key, None) if aggregate_key is not None else None
        if agg is not None:
            where["aggregate"] = _key_text(aggregate_key)
        return CompositeLogProbs(actions, lps, agg, where)

    # ------------------------------------------------------------------ the interface
    def actor(self, heads, *, exploration, seed):
        with quiet():
            with self._aggregate(True):
                actor = self._build(heads)
                with self._exploration(exploration), self._seeded(seed, _device(heads)):
                    out = actor(self._observation(heads))
                key = getattr(actor.module[-1], "log_prob_key", "sample_log_prob")
            return self._read(out, heads, key)

    def log_prob(self, heads, actions, *, sample_batch_shape):
        from tensordict import TensorDict

        with quiet():
            dist = self.dist_cls(self._params(heads),
                                 distribution_map={h: self._distribution_class(heads[h]) for h in heads},
                                 name_map={h: (ACTION, h) for h in heads})
            sample = TensorDict({ACTION: dict(actions)}, list(sample_batch_shape))
            if self._set_aggregate is not None:
                with self._set_aggregate(True):
                    agg = dist.log_prob(sample.clone(False))
                with self._set_aggregate(False):
                    per_head = dist.log_prob(sample.clone(False))
                how = "dist.log_prob(sample) under set_composite_lp_aggregate({})".format
            elif "aggregate_probabilities" not in inspect.signature(dist.log_prob).parameters:
                # tensordict 0.5: one call writes the heads and their sum
                per_head = dist.log_prob(sample.clone(False))
                agg = per_head.get("sample_log_prob")
                how = {True: "dist.log_prob(sample)['sample_log_prob']",
                       False: "dist.log_prob(sample)"}.get
            else:
                agg = dist.log_prob(sample.clone(False), aggregate_probabilities=True)
                per_head = dist.log_prob_composite(sample.clone(False), include_sum=False)
                how = "dist.log_prob(sample, aggregate_probabilities={})".format
        lps, where = {}, {"aggregate": how(True)}
        for h in heads:
            lp = per_head.get(_lp_key(h), None)
            if lp is not None:
                lps[h] = lp
                where[h] = f"{how(False)}[{_key_text(_lp_key(h))}]"
        return CompositeLogProbs({}, lps, agg, where)

    def actor_out_keys(self, heads):
        """§2 capability: the actor's ``out_keys`` (built as :meth:`actor` builds it)."""
        with quiet():
            with self._aggregate(False):
                actor = self._build(heads)
                return [k if isinstance(k, str) else tuple(k) for k in actor.out_keys]

    def log_prob_with_sum(self, heads, actions, *, in_place):
        """§2 capability: ``log_prob_composite`` with the sum included, at the log-prob key
        given to the distribution (tensordict >= 0.6; before, ``"sample_log_prob"``)."""
        from tensordict import TensorDict

        key, kwargs = (ACTION, "joint_log_prob"), {}
        if "log_prob_key" in inspect.signature(self.dist_cls).parameters:
            kwargs["log_prob_key"] = key
        else:
            key = "sample_log_prob"
        batch = list(next(iter(heads.values())).batch_shape)
        with quiet():
            dist = self.dist_cls(self._params(heads),
                                 distribution_map={h: self._distribution_class(heads[h]) for h in heads},
                                 name_map={h: (ACTION, h) for h in heads}, **kwargs)
            sample = TensorDict({ACTION: dict(actions)}, batch)
            if self._set_aggregate is None:  # tensordict < 0.7: no switch, one behaviour
                read = dist.log_prob_composite(sample, include_sum=True)
                how = "dist.log_prob_composite(sample, include_sum=True)"
            elif in_place:
                with self._set_aggregate(True):
                    dist.log_prob_composite(sample)
                read = sample
                how = "the sample after log_prob_composite(sample) under set_composite_lp_aggregate(True)"
            else:
                with self._set_aggregate(False):
                    read = dist.log_prob_composite(sample, include_sum=True)
                how = ("log_prob_composite(sample, include_sum=True) under "
                       "set_composite_lp_aggregate(False)")
        lps, where = {}, {"aggregate": f"{how}[{_key_text(key)}]",
                          "written": ", ".join(_key_text(k) for k in read.keys(True, True))}
        for h in heads:
            lp = read.get(_lp_key(h), None)
            if lp is not None:
                lps[h] = lp
                where[h] = f"{how}[{_key_text(_lp_key(h))}]"
        return CompositeLogProbs({}, lps, read.get(key, None), where)

    def ppo_step(self, heads, *, advantage, clip_epsilon, seed, trailing_singleton):
        out, ratio, data = self._ppo(heads, advantage=advantage, clip_epsilon=clip_epsilon,
                                     seed=seed, trailing_singleton=trailing_singleton)
        actions = {h: data.get((ACTION, h)) for h in heads}
        return CompositePPOStep(float(out["loss_objective"].detach()), ratio, actions)

    def ppo_step_changed(self, heads, new_heads, *, advantage, clip_epsilon, seed):
        """§2 family capability: collected under ``heads``, evaluated under ``new_heads`` (the
        actor reads its parameters from the observation, so the policy changes with it)."""
        out, ratio, data = self._ppo(heads, advantage=advantage, clip_epsilon=clip_epsilon,
                                     seed=seed, trailing_singleton=False, new_heads=new_heads)
        actions = {h: data.get((ACTION, h)) for h in heads}
        return CompositePPOStep(float(out["loss_objective"].detach()), ratio, actions)

    def entropy_loss(self, heads, *, coeff, seed):
        """§2 family capability: ``loss_entropy`` of the loss of :meth:`ppo_step` with the
        entropy bonus on; a per-head ``coeff`` is keyed as TorchRL keys the head's entropy."""
        if isinstance(coeff, dict):
            coeff = {(ACTION, f"{h}_entropy"): c for h, c in coeff.items()}
        batch = next(iter(heads.values())).batch_shape
        advantage = torch.zeros(*batch, 1, device=_device(heads))
        out, _, _ = self._ppo(heads, advantage=advantage, clip_epsilon=0.2, seed=seed,
                              trailing_singleton=False, entropy_coeff=coeff)
        return float(out["loss_entropy"].detach())

    def _ppo(self, heads, *, advantage, clip_epsilon, seed, trailing_singleton, new_heads=None,
             entropy_coeff=None):
        from tensordict.nn import TensorDictModule

        names = list(heads)
        with quiet():
            with self._aggregate(False):
                actor = self._build(heads)
                with torch.no_grad(), self._exploration("random"), self._seeded(seed, _device(heads)):
                    data = actor(self._observation(heads))
                if trailing_singleton:
                    for h in names:
                        if heads[h].kind == "categorical":
                            data.set((ACTION, h), data.get((ACTION, h)).unsqueeze(-1))
                data.set("advantage", advantage)
                data.set("value_target", torch.zeros_like(advantage))
                if new_heads is not None:  # the policy changed since collection
                    data.set("obs", self._observation(new_heads).get("obs"))
                first = ("obs", names[0], next(iter(heads[names[0]].params)))
                critic = TensorDictModule(_ZeroCritic(), in_keys=[first], out_keys=["state_value"])
                bonus = {} if entropy_coeff is None else {"entropy_coeff": entropy_coeff}
                loss = self.loss_cls(actor, critic, clip_epsilon=clip_epsilon,
                                     entropy_bonus=entropy_coeff is not None, **bonus)
                if self._set_aggregate is not None:  # torchrl >= 0.7: lists of keys
                    loss.set_keys(action=[(ACTION, h) for h in names],
                                  sample_log_prob=[_lp_key(h) for h in names])
                else:
                    loss.set_keys(action=ACTION, sample_log_prob="sample_log_prob")
                out = loss(data.clone())
                ratio = None
                log_weight = getattr(loss, "_log_weight", None)
                if log_weight is not None:
                    args = (data.clone(),)
                    if "adv_shape" in inspect.signature(log_weight).parameters:
                        args += (advantage.shape[:-1],)
                    with torch.no_grad():
                        lw = log_weight(*args)[0]
                    ratio = lw.exp()
                    if ratio.numel() == advantage.numel():
                        ratio = ratio.reshape(advantage.shape[:-1])
        return out, ratio, data

    def misconfigured_actor(self, heads, *, fault):
        with quiet():
            with self._aggregate(True):
                actor = self._build(heads, fault=fault)
                with self._exploration("random"), self._seeded(0, _device(heads)):
                    out = actor(self._observation(heads))
        return self._read(out, heads, None)


def make(adapter):
    from tensordict.nn import CompositeDistribution
    from torchrl.modules import ProbabilisticActor
    from torchrl.objectives import ClipPPOLoss

    return TensorDictComposite(CompositeDistribution, ProbabilisticActor, ClipPPOLoss)
