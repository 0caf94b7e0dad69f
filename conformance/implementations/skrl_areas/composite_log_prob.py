"""§2 through skrl's ``MultiCategoricalMixin``: a skrl model over a ``MultiDiscrete`` space.

The model is built the way skrl's documentation builds one (``class Policy(
MultiCategoricalMixin, Model)`` whose ``compute()`` returns the logits, here the heads' own
tensors side by side, so gradients reach them) and run with ``act(inputs)``: it samples every
head and returns the joint log-prob (``reduction="sum"``, the default) as ``outputs["log_prob"]``.
Each head's log-prob is the same model built with ``reduction="none"`` (a public option) scoring
the actions through ``inputs["taken_actions"]``, which is also how scoring works. skrl's
log-prob has a trailing ``(…, 1)`` dim (``num_samples, 1``); the adapter drops exactly that one.

Exploration: "random" is ``act()``; "deterministic" is what skrl's trainers do in a deterministic
evaluation, ``outputs.get("mean_actions", actions)`` (``trainers/torch/base.py``): a
multi-categorical model has no ``mean_actions``, so that is the sample. skrl has no "mode" or
"mean" action of its own (NotImplementedError).

Not expressible (NotImplementedError, see conformance/implementations/library_composite.py):
Normal heads, a sample container of another batch size, per-head ``[*batch, 1]`` actions, the
misconfigurations, and PPO: skrl's PPO always standardises the advantages it computes
(``compute_gae``: ``(A - mean) / (std + 1e-8)``, no option), so the spec's advantages, and the
objective ``-mean(advantage)`` of an unchanged policy, cannot be given. A ``(B, T)`` batch is
given as it is.
"""

from __future__ import annotations

import torch

from conformance.implementations.introspect import quiet
from conformance.implementations.library_composite import (
    batch_shape,
    categorical_only,
    logits,
    misconfiguration,
    one_action_tensor,
)
from conformance.implementations.skrl import HOST_ONLY
from conformance.interface import COMPOSITE_EXPLORATION_TYPES, CompositeLogProbs

SKRL_GAE = ("https://github.com/Toni-SM/skrl/blob/2.1.1/skrl/agents/torch/ppo/ppo.py#L61-L62")
_WHERE = "MultiCategoricalMixin.act"


class SkrlMultiCategorical:
    devices = ("cpu",)  # conformance.interface: the devices this area runs on
    devices_why = HOST_ONLY
    # "mode" and "mean" raise NotImplementedError (not applicable): skrl has no such notion
    exploration_types = COMPOSITE_EXPLORATION_TYPES

    def __init__(self, skrl):
        self.skrl = skrl

    def _model(self, heads, reduction):
        import gymnasium

        s = self.skrl
        why = categorical_only("skrl", heads)
        if why:
            raise NotImplementedError(why)
        nvec = [int(x.params["logits"].shape[-1]) for x in heads.values()]
        table = logits(heads)

        class Policy(s.MultiCategoricalMixin, s.Model):
            def __init__(self):
                s.Model.__init__(self, observation_space=gymnasium.spaces.Box(-1.0, 1.0, (1,)),
                                 action_space=gymnasium.spaces.MultiDiscrete(nvec), device="cpu")
                s.MultiCategoricalMixin.__init__(self, reduction=reduction)

            def compute(self, inputs, role=""):
                return table, {}

        with quiet():
            return Policy()

    @staticmethod
    def _inputs(heads):
        return {"observations": torch.zeros(*batch_shape(heads), 1), "states": None}

    def _score(self, heads, action) -> tuple[dict, torch.Tensor]:
        inputs = {**self._inputs(heads), "taken_actions": action}
        _, out = self._model(heads, "none").act(inputs, role="policy")
        per_head = {h: out["log_prob"][..., i] for i, h in enumerate(heads)}
        return per_head, out["log_prob"]

    @staticmethod
    def _squeeze(log_prob, heads):
        """skrl's joint log-prob is (num_samples, 1): drop that documented trailing dim."""
        batch = batch_shape(heads)
        if log_prob.dim() == len(batch) + 1 and log_prob.shape[-1] == 1:
            return log_prob.squeeze(-1)
        return log_prob

    def _written(self, heads, action, aggregate, *, sampled: bool) -> CompositeLogProbs:
        per_head, _ = self._score(heads, action)
        where = {h: f"MultiCategoricalMixin(reduction='none').act(taken_actions)[..., {i}]"
                 for i, h in enumerate(heads)}
        where.update(aggregate=f"{_WHERE} outputs['log_prob']",
                     written=f"{_WHERE}: actions [*batch, {len(heads)}], outputs['log_prob']")
        actions = {h: action[..., i] for i, h in enumerate(heads)} if sampled else {}
        return CompositeLogProbs(actions, per_head, self._squeeze(aggregate, heads), where)

    def actor(self, heads, *, exploration, seed) -> CompositeLogProbs:
        if exploration in ("mode", "mean"):
            raise NotImplementedError(
                f"skrl models have no '{exploration}' action: a deterministic evaluation uses "
                "outputs['mean_actions'] when the model returns one, else the sample")
        model = self._model(heads, "sum")
        torch.manual_seed(seed)
        action, out = model.act(self._inputs(heads), role="policy")
        if exploration == "deterministic":  # skrl's trainers, stochastic_evaluation=False
            action = out.get("mean_actions", action)
        return self._written(heads, action, out["log_prob"], sampled=True)

    def log_prob(self, heads, actions, *, sample_batch_shape) -> CompositeLogProbs:
        why = categorical_only("skrl", heads) or one_action_tensor(
            "skrl", heads, actions, sample_batch_shape)
        if why:
            raise NotImplementedError(why)
        action = torch.stack([actions[h] for h in heads], dim=-1)
        inputs = {**self._inputs(heads), "taken_actions": action}
        _, out = self._model(heads, "sum").act(inputs, role="policy")
        return self._written(heads, action, out["log_prob"], sampled=False)

    def ppo_step(self, heads, *, advantage, clip_epsilon, seed, trailing_singleton):
        raise NotImplementedError(
            "skrl's PPO always standardises the advantages it computes ((A - mean) / (std + "
            f"1e-8) in compute_gae, no option; {SKRL_GAE}): the given advantages, and the "
            "objective -mean(advantage) of an unchanged policy, cannot be expressed")

    def misconfigured_actor(self, heads, *, fault) -> CompositeLogProbs:
        raise NotImplementedError(misconfiguration("skrl", fault))


def make(adapter):
    import types

    from skrl.models.torch import Model, MultiCategoricalMixin

    return SkrlMultiCategorical(types.SimpleNamespace(
        Model=Model, MultiCategoricalMixin=MultiCategoricalMixin))
