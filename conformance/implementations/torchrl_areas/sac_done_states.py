"""SAC done-state handling through TorchRL's ``SACLoss`` / ``DiscreteSACLoss`` API (also used
for the reference drop-ins and the mutants).

Works on torchrl 0.4.0 .. 0.14.1: ``skip_done_states`` exists from 0.7.0 (pytorch/rl#2613) and is
detected in the signature (a source without it runs the flag-off specs as its only behaviour and
fails only those that need the flag on); ``gamma`` goes through ``make_value_estimator`` (a constructor
``gamma`` was deprecated, then removed); the entropy coefficient is fixed (``fixed_alpha``).
The loss owns copies of the spec's networks (TorchRL swaps parameters in and out of the module
it is given, and expands the Q-network into a re-sampled ensemble), so the spec's parameter
values are written into the loss's parameter containers after construction, and gradients
are read back from them and keyed by the spec's parameter names.
"""

from __future__ import annotations

import copy

import torch

from conformance.implementations.introspect import accepts, quiet
from conformance.implementations.torchrl_areas import sac_target_entropy
from conformance.interface import (
    SACActionSpace,
    SACBatch,
    SACHeldBatch,
    SACNetworks,
    SACOutcome,
    SACUnreduced,
    SACWeighted,
)

FLAG = "skip_done_states"
FLAG_PR = "https://github.com/pytorch/rl/pull/2613"
#: the scalar outputs (alpha, entropy) beside unreduced losses: an option since pytorch/rl#3426
#: (torchrl 0.11.1); before it, they are always in the output, which had batch size []
SCALARS = "scalar_output_mode"
SCALAR_NAMES = ("alpha", "entropy")


def _by_suffix(params_td, names):
    """Map each dotted parameter name to the key of ``params_td`` ending with its parts."""
    keys = [k if isinstance(k, tuple) else (k,) for k in params_td.keys(True, True)]
    found = {}
    for name in names:
        tail = tuple(name.split("."))
        hits = [k for k in keys if k[-len(tail):] == tail]
        if len(hits) != 1:
            raise AssertionError(
                f"cannot locate parameter {name!r} in the loss ({len(hits)} matches)")
        found[name] = hits[0]
    return found


def _write(params_td, modules, ensemble: bool) -> None:
    """Copy the spec's parameter values into the loss's (stacked when ``ensemble``)."""
    names = [n for n, _ in modules[0].named_parameters()]
    for name, key in _by_suffix(params_td, names).items():
        values = [dict(m.named_parameters())[name].detach() for m in modules]
        with torch.no_grad():
            target = params_td.get(key)
            target.data.copy_(torch.stack(values) if ensemble else values[0])


def _grads(loss, params_td, module, ensemble_size: int | None):
    names = [n for n, _ in module.named_parameters()]
    keys = _by_suffix(params_td, names)
    leaves = [params_td.get(keys[n]) for n in names]
    grads = torch.autograd.grad(loss, leaves, allow_unused=True, retain_graph=True)
    grads = [torch.zeros_like(p) if g is None else g.detach()
             for g, p in zip(grads, leaves, strict=True)]
    if ensemble_size is None:
        return dict(zip(names, grads, strict=True))
    return [{n: g[i] for n, g in zip(names, grads, strict=True)} for i in range(ensemble_size)]


def _tensordict(batch: SACBatch):
    from tensordict import TensorDict

    b = batch.reward.shape[0]
    steps = {"observation": batch.observation, "action": batch.action}
    nxt = {"observation": batch.next_observation, "reward": batch.reward, "done": batch.done}
    root = {"done": batch.root_done}
    if batch.has_terminated:  # else: data from before done was split (done is termination)
        nxt["terminated"] = batch.terminated
        root["terminated"] = batch.root_terminated
    if batch.layout == "nested":
        n = batch.reward.shape[1]
        return TensorDict({
            "agents": TensorDict(steps, [b, n]),
            "next": TensorDict({"agents": TensorDict(nxt, [b, n]), **root}, [b]),
        }, [b])
    return TensorDict({**steps, "next": TensorDict(nxt, [b])}, [b])


def _entries(td) -> dict[tuple[str, ...], torch.Tensor]:
    return {k if isinstance(k, tuple) else (k,): v
            for k, v in td.items(include_nested=True, leaves_only=True)}


class TorchRLSACDoneStates:
    devices = ("cpu", "cuda")  # conformance.interface: the loss follows the networks' device

    def __init__(self, sac_cls, discrete_cls, *, library: str = "torchrl"):
        self.classes = {"continuous": sac_cls, "discrete": discrete_cls}
        self.library = library

    def _build(self, networks: SACNetworks, prefix: tuple, num_actions: int, skip, alpha, gamma,
               target_entropy, **options):
        from tensordict.nn import TensorDictModule
        from torchrl.modules import ProbabilisticActor
        from torchrl.objectives.utils import ValueEstimators

        cls = self.classes[networks.kind]
        if skip is not None and not accepts(cls, FLAG):
            if skip:
                raise AssertionError(
                    f"{cls.__name__} of {self.library} has no {FLAG} argument (added in "
                    f"torchrl 0.7.0 by {FLAG_PR}); cannot run with {FLAG}={skip}")
            # flag off is the default: a source without the option is judged on its only
            # behaviour (what changed between the commits before 0.7.0), not on the option
            skip = None
        key = (lambda name: (*prefix, name)) if prefix else (lambda name: name)
        outputs = [key(n) for n in networks.actor_outputs]
        actor = ProbabilisticActor(
            TensorDictModule(copy.deepcopy(networks.actor), [key("observation")], outputs),
            in_keys={n: key(n) for n in networks.actor_outputs},
            out_keys=[key("action")],
            distribution_class=networks.distribution,
        )
        q_in = [key("observation")]
        if networks.kind == "continuous":
            q_in.append(key("action"))
            q_out = "state_action_value"
        else:
            q_out = "action_value"
        qvalue = TensorDictModule(copy.deepcopy(networks.qvalues[0]), q_in, [key(q_out)])
        kwargs = dict(num_qvalue_nets=len(networks.qvalues), loss_function="l2",
                      alpha_init=alpha, fixed_alpha=True, target_entropy=target_entropy)
        if networks.kind == "discrete":
            kwargs.update(action_space="one-hot", num_actions=num_actions)
        if skip is not None:
            kwargs[FLAG] = skip
        kwargs.update(options)
        loss = cls(actor, qvalue, **kwargs)
        if prefix:
            wanted = {"action": key("action"), "reward": key("reward"), "done": key("done"),
                      "terminated": key("terminated"), q_out: key(q_out)}
            loss.set_keys(**{k: v for k, v in wanted.items() if hasattr(loss.tensor_keys, k)})
        loss.make_value_estimator(ValueEstimators.TD0, gamma=gamma)
        _write(loss.actor_network_params, [networks.actor], ensemble=False)
        _write(loss.qvalue_network_params, networks.qvalues, ensemble=True)
        _write(loss.target_qvalue_network_params, networks.qvalues, ensemble=True)
        return loss

    def loss(self, *, networks, batch, skip_done_states, alpha, gamma,
             target_entropy) -> SACOutcome:
        prefix = ("agents",) if batch.layout == "nested" else ()
        with quiet():  # e.g. "no target network updater": irrelevant to a single evaluation
            loss = self._build(networks, prefix, batch.action.shape[-1], skip_done_states,
                               alpha, gamma, target_entropy)
            return self._evaluate(loss, networks, batch)

    def batch_around_loss(self, *, networks, batch, skip_done_states, alpha, gamma,
                          target_entropy) -> SACHeldBatch:
        """The tensordict handed to the loss, read before and after the call."""
        prefix = ("agents",) if batch.layout == "nested" else ()
        held = _tensordict(batch)
        before = _entries(held.clone())
        with quiet():
            loss = self._build(networks, prefix, batch.action.shape[-1], skip_done_states,
                               alpha, gamma, target_entropy)
            self._evaluate(loss, networks, batch, held)
        priority = getattr(loss.tensor_keys, "priority", "td_error")
        # TorchRL's SACLoss runs its actor on the batch itself (DiscreteSACLoss on a copy):
        # tensordict modules write their outputs where they run, at the current step
        actor = [(*prefix, name) for name in networks.actor_outputs]
        return SACHeldBatch(before=before, after=_entries(held), written=(
            priority if isinstance(priority, tuple) else (priority,), *actor))

    def losses_unreduced(self, *, networks, batch, skip_done_states, alpha, gamma,
                         target_entropy) -> SACUnreduced:
        """``reduction="none"``, with the scalars asked for as non-tensor data where the loss
        has ``scalar_output_mode`` (0.11.1 on; before, they were always in the output)."""
        prefix = ("agents",) if batch.layout == "nested" else ()
        options = {"reduction": "none"}
        if accepts(self.classes[networks.kind], SCALARS):
            options[SCALARS] = "non_tensor"
        with quiet():
            loss = self._build(networks, prefix, batch.action.shape[-1], skip_done_states,
                               alpha, gamma, target_entropy, **options)
            out = loss(_tensordict(batch))
        losses = {k: out.get(k).detach().to(torch.float64)
                  for k in ("loss_actor", "loss_qvalue", "loss_alpha")}
        scalars = {}
        for name in SCALAR_NAMES:
            if name in out.keys():
                value = out.get(name)
                value = getattr(value, "data", value) if not torch.is_tensor(value) else value
                scalars[name] = torch.as_tensor(value).detach().to(torch.float64)
        return SACUnreduced(losses=losses, batch_shape=tuple(out.batch_size), scalars=scalars)

    def losses_weighted(self, *, networks, batch, alpha, gamma, target_entropy, weights,
                        reduction) -> SACWeighted:
        """The batch with ``weights`` at the loss's ``priority_weight`` key (what
        ``TensorDictPrioritizedReplayBuffer`` writes since pytorch/rl#3235; before, losses read
        no weight). TorchRL's weighted mean is ``sum(w * loss) / sum(w)`` (``_reduce``)."""
        prefix = ("agents",) if batch.layout == "nested" else ()
        options = {"reduction": reduction}
        if reduction == "none" and accepts(self.classes[networks.kind], SCALARS):
            options[SCALARS] = "exclude"
        with quiet():
            loss = self._build(networks, prefix, batch.action.shape[-1], None, alpha, gamma,
                               target_entropy, **options)
            td = _tensordict(batch)
            td.set(getattr(loss.tensor_keys, "priority_weight", "priority_weight"), weights)
            out = loss(td)
        losses = {k: out.get(k).detach().to(torch.float64)
                  for k in ("loss_actor", "loss_qvalue", "loss_alpha")}
        return SACWeighted(losses=losses, normalisation="weights")

    def auto_target_entropy(self, *, action_space: SACActionSpace) -> float:
        with quiet():
            return sac_target_entropy.auto_target_entropy(self.classes["continuous"],
                                                          action_space)

    def _evaluate(self, loss, networks, batch, held=None) -> SACOutcome:
        out = loss(_tensordict(batch) if held is None else held)
        losses = {k: out.get(k).detach().to(torch.float64)
                  for k in ("loss_actor", "loss_qvalue", "loss_alpha")}
        return SACOutcome(
            losses=losses,
            actor_grad=_grads(out.get("loss_actor"), loss.actor_network_params,
                              networks.actor, None),
            qvalue_grad=_grads(out.get("loss_qvalue"), loss.qvalue_network_params,
                               networks.qvalues[0], len(networks.qvalues)),
            skip_done_states=getattr(loss, FLAG, None),
        )


def make(adapter):
    from torchrl.objectives import DiscreteSACLoss, SACLoss

    return TorchRLSACDoneStates(SACLoss, DiscreteSACLoss, library=f"torchrl {adapter.version}")
