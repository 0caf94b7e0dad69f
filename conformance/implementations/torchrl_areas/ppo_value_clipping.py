"""PPO value clipping through TorchRL's ``ClipPPOLoss`` API (also used for the reference drop-in).

The critic loss is read from a full forward of the loss module, the way training code reads it,
with ``loss_critic_type="l2"``: TorchRL's "l2" is ``F.mse_loss`` without Baselines' 0.5, so the
declared scale is 2 and the critic coefficient multiplies.
"""

from __future__ import annotations

import torch

from conformance.implementations.introspect import first_accepted, quiet
from conformance.interface import (
    PPO_LOSS_CLASSES,
    CompositeCriticReport,
    CriticLoss,
    CriticReport,
    PolicyObjective,
)
from conformance.interface.ppo_value_clipping import VALUE_NORM_LOSS_CLASSES


def _normal_actor(mean_and_scale: torch.nn.Module):
    """TorchRL's actor over a module writing ``loc`` and ``scale`` from ``observation``: a
    ``Normal`` policy with its log-probability (every §4 capability builds its actor so)."""
    from tensordict.nn import TensorDictModule
    from torchrl.modules import ProbabilisticActor

    return ProbabilisticActor(
        TensorDictModule(mean_and_scale, ["observation"], ["loc", "scale"]),
        in_keys=["loc", "scale"], distribution_class=torch.distributions.Normal,
        return_log_prob=True)

class _ZeroMeanUnitScale(torch.nn.Module):
    # The policy is irrelevant to the critic loss; a fixed Normal keeps the ratio exactly 1.
    def forward(self, observation):
        return torch.zeros_like(observation), torch.ones_like(observation)


class _ZeroValue(torch.nn.Module):
    # A critic of one parameter that predicts 0 per element (ESS needs none; old releases
    # need one)
    def __init__(self, like):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.zeros((), dtype=like.dtype, device=like.device))

    def forward(self, observation):
        return torch.zeros_like(observation).unsqueeze(-1) + self.bias


class _SharedMean(torch.nn.Module):
    # The policy of critic_loss_with: Normal(mean, 1) over one action column, its mean read
    # from ``shared`` when given (whose parameters are then the policy's too), else 0.
    def __init__(self, shared):
        super().__init__()
        self.shared = shared

    def forward(self, observation):
        if self.shared is None:
            loc = torch.zeros_like(observation[..., :1])
        else:
            loc = self.shared(observation)[..., :1]
        return loc, torch.ones_like(loc)


class ClipPPOCritic:
    critic_scale = 2.0
    devices = ("cpu", "cuda")  # conformance.interface: the loss follows the value net's device

    def __init__(self, loss_cls, *, takes_clip_epsilon: bool = True):
        self.loss_cls = loss_cls
        self.takes_clip_epsilon = takes_clip_epsilon
        # critic_coef (<= 0.9.1) was renamed critic_coeff (0.9.2); unknown names are silently
        # swallowed by **kwargs in many releases, so pick the name the release really has
        self.coeff_name = first_accepted(loss_cls, "critic_coeff", "critic_coef") or "critic_coef"

    def _build(self, value_net, clip_value, clip_epsilon, critic_coeff):
        from tensordict.nn import TensorDictModule

        actor = _normal_actor(_ZeroMeanUnitScale())
        critic = TensorDictModule(value_net, ["observation"], ["state_value"])
        kwargs = {
            "entropy_bonus": False,
            "loss_critic_type": "l2",
            self.coeff_name: critic_coeff,
        }
        if self.takes_clip_epsilon:
            kwargs["clip_epsilon"] = clip_epsilon
        if clip_value is not None:
            kwargs["clip_value"] = clip_value
        with quiet():
            loss = self.loss_cls(actor, critic, **kwargs)
        applied = getattr(loss, self.coeff_name, None)
        if applied is None or abs(float(applied) - critic_coeff) > 1e-12:
            raise AssertionError(
                f"{self.loss_cls.__name__}({self.coeff_name}={critic_coeff}) kept the critic "
                f"coefficient at {applied!r}: the argument was ignored"
            )
        return loss, actor

    def critic_loss(
        self, *, value_net, observation, old_value, returns, clip_value, clip_epsilon, critic_coeff
    ) -> CriticLoss:
        loss, actor = self._build(value_net, clip_value, clip_epsilon, critic_coeff)
        return _evaluate(loss, actor, observation, old_value, returns)


def _evaluate(loss, actor, observation, old_value, returns) -> CriticLoss:
    """One forward of ``loss`` on a batch whose policy term is neutral (ratio 1)."""
    from tensordict import TensorDict

    batch = observation.shape[:1]
    td = TensorDict(
        {
            "observation": observation,
            "action": torch.zeros_like(observation),
            "advantage": torch.ones_like(observation),
            "value_target": returns,
            "state_value": old_value,
        },
        batch,
    )
    log_prob_key = getattr(loss.tensor_keys, "sample_log_prob", None)  # A2C reads none
    if log_prob_key is not None:
        with torch.no_grad():
            td[log_prob_key] = actor.get_dist(td).log_prob(td["action"])
    out = loss(td)
    frac = out.get("value_clip_fraction", None)
    return CriticLoss(out["loss_critic"], None if frac is None else float(frac))


class PPOLossFamilyCritic(ClipPPOCritic):
    """The §4 family capability (``conformance.interface.PPOLossFamily``): every loss class
    of the release that takes ``clip_value``, built like ``ClipPPOLoss`` above (only
    ``ClipPPOLoss`` has a ``clip_epsilon``), and ``loss.clip_value = x`` for rescheduling; and
    the options capability (``conformance.interface.PPOCriticOptions``) on ``ClipPPOLoss``."""

    def __init__(self, loss_cls, family: dict):
        super().__init__(loss_cls)
        self.family = {name: ClipPPOCritic(cls, takes_clip_epsilon=name == "ClipPPOLoss")
                       for name, cls in family.items()}

    def critic_loss_of(self, loss_class, *, value_net, observation, old_value, returns,
                       clip_value, clip_epsilon, critic_coeff,
                       reschedule_clip_value=None) -> CriticLoss:
        if loss_class not in self.family:
            raise AssertionError(f"this TorchRL release has no {loss_class}")
        member = self.family[loss_class]
        loss, actor = member._build(value_net, clip_value, clip_epsilon, critic_coeff)
        if reschedule_clip_value is not None:
            loss.clip_value = reschedule_clip_value  # what a scheduler does (pytorch/rl#3612)
        return _evaluate(loss, actor, observation, old_value, returns)

    def critic_loss_with(self, *, value_net, observation, old_value, returns, clip_value,
                         critic_coeff, log_explained_variance, separate_losses, shared,
                         functional) -> CriticReport:
        """The §4 options capability (``conformance.interface.PPOCriticOptions``) on
        ``ClipPPOLoss``: TorchRL's options passed to its constructor as a user passes them,
        the diagnostics read from its forward's output keys."""
        from tensordict import TensorDict
        from tensordict.nn import TensorDictModule

        actor = _normal_actor(_SharedMean(shared))
        critic = TensorDictModule(value_net, ["observation"], ["state_value"])
        kwargs = {"entropy_bonus": False, "loss_critic_type": "l2", self.coeff_name: critic_coeff,
                  "separate_losses": separate_losses, "functional": functional}
        # log_explained_variance came with pytorch/rl#3010 (0.10): an older release logs no
        # explained variance at all, and is built without the argument it would refuse
        if first_accepted(self.loss_cls, "log_explained_variance"):
            kwargs["log_explained_variance"] = log_explained_variance
        if clip_value is not None:
            kwargs["clip_value"] = clip_value
        with quiet():
            loss = self.loss_cls(actor, critic, **kwargs)
        action = torch.zeros_like(observation[..., :1])
        td = TensorDict({"observation": observation, "action": action,
                         "advantage": torch.ones_like(action)}, observation.shape[:1])
        for key, entry in (("value_target", returns), ("state_value", old_value)):
            if entry is not None:
                td[key] = entry
        return _report(loss, actor, td, action)


    def critic_loss_masked(self, *, value_net, observation, old_value, returns, clip_value,
                           critic_coeff, valid, shifted_valid=None) -> CriticReport:
        """The §4 masks capability (``conformance.interface.PPOCriticMasks``): the batch of
        ``critic_loss_with`` with TorchRL's trajectory mask at ``("collector", "mask")``, where
        ``SliceSampler(pad_output=True)`` writes it, and ``shifted_valid`` where the value
        estimators write it, each as given (a release that reads no such mask leaves it in the
        batch, unread)."""
        from tensordict import TensorDict
        from tensordict.nn import TensorDictModule

        actor = _normal_actor(_SharedMean(None))
        critic = TensorDictModule(value_net, ["observation"], ["state_value"])
        with quiet():
            loss = self.loss_cls(actor, critic, entropy_bonus=False, loss_critic_type="l2",
                                 clip_value=clip_value, **{self.coeff_name: critic_coeff})
        action = torch.zeros_like(observation[..., :1])
        td = TensorDict({"observation": observation, "action": action,
                         "advantage": torch.ones_like(action), "value_target": returns,
                         "state_value": old_value}, observation.shape[:1])
        td.set(("collector", "mask"), valid)
        if shifted_valid is not None:
            td.set("shifted_valid", shifted_valid)
        return _report(loss, actor, td, action)


    def objective_with(self, *, clip_epsilon, log_weight, advantage) -> PolicyObjective:
        """The §4 clip-range capability (``conformance.interface.PPOClipRange``): a fixed
        Normal policy, and the stored log-probability set so that the loss's log-ratio is
        ``log_weight``; ``clip_epsilon`` handed to the constructor as given."""
        from tensordict import TensorDict
        from tensordict.nn import TensorDictModule

        actor = _normal_actor(_SharedMean(None))
        value_net = torch.nn.Linear(1, 1, dtype=log_weight.dtype, device=log_weight.device)
        critic = TensorDictModule(value_net, ["observation"], ["state_value"])
        with quiet():
            loss = self.loss_cls(actor, critic, clip_epsilon=clip_epsilon, entropy_bonus=False,
                                 loss_critic_type="l2")
        observation = torch.zeros_like(log_weight)
        action = torch.zeros_like(log_weight)
        td = TensorDict({"observation": observation, "action": action, "advantage": advantage,
                         "value_target": torch.zeros_like(advantage),
                         "state_value": torch.zeros_like(advantage)}, log_weight.shape[:1])
        with torch.no_grad():
            td[loss.tensor_keys.sample_log_prob] = (actor.get_dist(td).log_prob(action)
                                                    - log_weight)
        out = loss(td)
        frac = out.get("clip_fraction", None)
        return PolicyObjective(float(out["loss_objective"].detach()),
                               None if frac is None else float(frac))


    def critic_loss_composite(self, *, value_net, heads, observation, old_value, returns,
                              clip_value, critic_coeff) -> CompositeCriticReport:
        """The §4 composite-critic capability (``conformance.interface.PPOCriticComposite``):
        ``ClipPPOLoss`` with a critic whose out_keys are ``("state_value", head)``, a batch
        with composite ``"state_value"`` and ``"value_target"`` entries, one forward; its
        ``loss_critic`` and ``value_clip_fraction`` read per head when they are tensordicts."""
        from tensordict import TensorDict, is_tensor_collection
        from tensordict.nn import TensorDictModule

        actor = _normal_actor(_SharedMean(None))
        critic = TensorDictModule(value_net, ["observation"],
                                  [("state_value", head) for head in heads])
        with quiet():
            loss = self.loss_cls(actor, critic, entropy_bonus=False, loss_critic_type="l2",
                                 clip_value=clip_value, **{self.coeff_name: critic_coeff})
        batch = observation.shape[:1]
        action = torch.zeros_like(observation[..., :1])
        td = TensorDict({"observation": observation, "action": action,
                         "advantage": torch.ones_like(action),
                         "value_target": TensorDict(dict(returns), batch),
                         "state_value": TensorDict(dict(old_value), batch)}, batch)
        with torch.no_grad():
            td[loss.tensor_keys.sample_log_prob] = actor.get_dist(td).log_prob(action)
        out = loss(td)

        def per_head(entry, as_float):
            if entry is None or not is_tensor_collection(entry):
                return entry if entry is None or not as_float else float(entry)
            return {head: float(entry[head]) if as_float else entry[head] for head in heads}

        return CompositeCriticReport(per_head(out["loss_critic"], False),
                                     per_head(out.get("value_clip_fraction", None), True))

    def ess_of(self, *, log_weight):
        """The §4 ESS capability (``conformance.interface.PPOEffectiveSampleSize``): a fixed
        Normal per element (its log-probability is not summed over the feature dimensions),
        a critic that predicts 0 for every element (releases before 0.14 refuse a loss
        without one), the stored log-probability set so that the log-ratio is
        ``log_weight``; ``out["ESS"]`` as the forward reports it."""
        from tensordict import TensorDict
        from tensordict.nn import TensorDictModule

        actor = _normal_actor(_ZeroMeanUnitScale())
        critic = TensorDictModule(_ZeroValue(log_weight), ["observation"], ["state_value"])
        with quiet():
            loss = self.loss_cls(actor, critic, entropy_bonus=False, loss_critic_type="l2")
        action = torch.zeros_like(log_weight)
        column = torch.zeros(*log_weight.shape, 1, dtype=log_weight.dtype,
                             device=log_weight.device)
        td = TensorDict({"observation": torch.zeros_like(log_weight), "action": action,
                         "advantage": column + 1, "value_target": column,
                         "state_value": column}, log_weight.shape[:1])
        with torch.no_grad():
            td[loss.tensor_keys.sample_log_prob] = (actor.get_dist(td).log_prob(action)
                                                    - log_weight)
        return loss(td).get("ESS", None)


class PPOLossFamilyCriticValueNorm(PPOLossFamilyCritic):
    """The family, with the multi-agent PPO losses and TorchRL's value normalisers
    (``conformance.interface.PPOCriticValueNorm``): releases from 0.13 (pytorch/rl#3748)."""

    def __init__(self, loss_cls, family: dict, multiagent: dict, norms: dict):
        super().__init__(loss_cls, family)
        self.multiagent = multiagent
        self.norms = norms

    def critic_loss_value_norm(self, *, loss_class, norm, warmup, value_net, observation,
                               old_value, returns, clip_value, critic_coeff,
                               valid=None) -> CriticReport:
        from tensordict import TensorDict
        from tensordict.nn import TensorDictModule

        value_norm = self.norms[norm](shape=1, device=observation.device)
        if warmup is not None:
            value_norm.update(warmup)
        actor = _normal_actor(_SharedMean(None))
        critic = TensorDictModule(value_net, ["observation"], ["state_value"])
        with quiet():
            loss = self.multiagent[loss_class](
                actor, critic, value_norm=value_norm, entropy_bonus=False,
                loss_critic_type="l2", clip_value=clip_value, **{self.coeff_name: critic_coeff},
                # the batch has no agent dimension for MAPPO's default (-2,) to exclude: the
                # advantage (1 everywhere, the policy term is not under test) is left as it is
                normalize_advantage=False)
        action = torch.zeros_like(observation[..., :1])
        td = TensorDict({"observation": observation, "action": action,
                         "advantage": torch.ones_like(action), "value_target": returns,
                         "state_value": old_value}, observation.shape[:1])
        if valid is not None:
            td.set(("collector", "mask"), valid)
        return _report(loss, actor, td, action)


def value_normalisers() -> dict | None:
    """TorchRL's value normalisers by the specs' names, or None before 0.13."""
    import torchrl.modules as modules

    if not hasattr(modules, "RunningValueNorm"):
        return None
    return {"running": modules.RunningValueNorm, "popart": modules.PopArtValueNorm}


def make(adapter):
    import torchrl.objectives as objectives

    family = {name: getattr(objectives, name) for name in PPO_LOSS_CLASSES
              if hasattr(objectives, name)}
    norms = value_normalisers()
    if norms is None or not hasattr(objectives, "MAPPOLoss"):
        return PPOLossFamilyCritic(objectives.ClipPPOLoss, family)
    multiagent = {name: getattr(objectives, name) for name in VALUE_NORM_LOSS_CLASSES}
    return PPOLossFamilyCriticValueNorm(objectives.ClipPPOLoss, family, multiagent, norms)


def _report(loss, actor, td, action) -> CriticReport:
    """One forward of ``loss`` on ``td`` (its behaviour log-prob written first, as a collector
    would), read as the §4 diagnostics: critic loss, clip fraction, explained variance."""
    with torch.no_grad():
        td[loss.tensor_keys.sample_log_prob] = actor.get_dist(td).log_prob(action)
    out = loss(td)
    frac = out.get("value_clip_fraction", None)
    return CriticReport(out["loss_critic"], None if frac is None else float(frac),
                        out.get("explained_variance", None))
