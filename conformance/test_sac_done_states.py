"""§3 SAC done-state handling and multi-agent done shapes.

SAC's target is ``y = r + gamma (1 - terminated) V(s')`` with ``V(s') = min_i Qbar_i(s', a') -
alpha log pi(a'|s')``: on terminated transitions V(s') is discarded, so a loss may skip those
next states (``skip_done_states=True``). Skipping must not change anything else:

- the flag exists on SAC and discrete SAC losses and defaults to False (run the actor on every
  next state, whatever batch size the actor insists on);
- single-agent (done [B, 1]), per-agent (done [B, N, 1] on a [B] batch) and nested agent-group
  layouts (batch [B, N] under "agents", done at the root and inside the group) all work with
  the flag False and True, and give the oracle's losses and gradients (so True == False);
- with True no terminal next state reaches the networks: an actor that raises on NaN input,
  fed NaN terminal next observations, gives finite losses, and so does a Q-network that
  propagates NaN (a Q-value computed at a terminal state and multiplied by 0 is NaN);
- truncated but not terminated transitions (done=True, terminated=False) are bootstrapped from
  the real next state in both modes: "skipping done states" means skipping *terminal* states,
  a truncated next state is a real state whose value the target needs;
- batches with no done state and with every state done;
- with True the actor is shown the batch's current and non-terminal next states only, never a
  stand-in made up for a terminal one (zeros);
- a batch without a terminated entry (data from before done was split): done is the
  termination, in both modes, and with True no done next state reaches the networks;
- the caller's batch is left as it was: a loss call adds, removes or changes no entry but the
  ones it is documented to write (TorchRL: the priority, ``td_error``), so the same batch can
  be fed to the loss again, or to another loss (optional capability ``batch_around_loss``).

Oracle: ``conformance/oracles/sac_done_states.py``, brute force in float64, one agent-step at a
time, written from the SAC papers; it never evaluates a network at a terminal next state.

Randomness: SAC draws actions. Here the draw is controlled, not seeded: the continuous policy
is a diagonal Normal whose reparametrised draw is ``loc + scale * noise`` with the noise stored
in the last A features of each observation (the actor passes it through), so the loss and the
oracle use the same draw for every state, whichever subset of states a loss runs the actor on
and in whatever order it samples. Discrete SAC needs no draw (its target is an exact
expectation). Every input is seeded.

Tolerance: rtol 1e-7, atol 1e-9 on losses and gradients (float64 networks; TorchRL keeps the
fixed alpha and log-alpha in float32: alpha = 0.5 and gamma = 0.75 are exact there, log(0.5)
is off by 3e-9 relative). On these batches the known-wrong target rules move loss_qvalue by
2.7% to 47% (relative), five orders of magnitude above the tolerance.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from conformance import capabilities, device
from conformance._assertions import assert_close, is_finite, message
from conformance.interface import SAC_LAYOUTS, SACBatch, SACNetworks
from conformance.oracles import sac_done_states as oracle

RL_2590 = "https://github.com/pytorch/rl/issues/2590"
RL_2606 = "https://github.com/pytorch/rl/pull/2606"
RL_2612 = "https://github.com/pytorch/rl/issues/2612"
RL_2613 = "https://github.com/pytorch/rl/pull/2613"
RTOL, ATOL = 1e-7, 1e-9
ALPHA, GAMMA = 0.5, 0.75
B, N, F, A, NA = 4, 3, 3, 2, 4  # rows, agents, features, action dims, discrete actions
TARGET_ENTROPY = {"continuous": -1.5, "discrete": 0.75}
KINDS = ["continuous", "discrete"]
LOSSES = ("loss_actor", "loss_qvalue", "loss_alpha")


# ---------------------------------------------------------------- networks the spec controls


class NoisyNormal(torch.distributions.Distribution):
    """Diagonal Normal(loc, scale) whose reparametrised draw is ``loc + scale * noise``."""

    arg_constraints = {}
    has_rsample = True

    def __init__(self, loc, scale, noise):
        self.loc, self.scale, self.noise = loc, scale, noise
        super().__init__(loc.shape[:-1], loc.shape[-1:], validate_args=False)

    def rsample(self, sample_shape=()):
        if tuple(sample_shape):
            raise ValueError("one draw per state: the noise is given with the state")
        return self.loc + self.scale * self.noise

    def sample(self, sample_shape=()):
        with torch.no_grad():
            return self.rsample(sample_shape)

    def log_prob(self, value):
        return oracle.normal_log_prob(value, self.loc, self.scale)


class GaussianActor(torch.nn.Module):
    """observation [..., F + A] -> (loc, scale, noise); the last A features are the noise."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(F, 5), torch.nn.Tanh(),
                                        torch.nn.Linear(5, 2 * A))

    def forward(self, observation):
        loc, pre_scale = self.body(observation[..., :F]).chunk(2, -1)
        return loc, torch.nn.functional.softplus(pre_scale) + 0.2, observation[..., F:]


class ContinuousQ(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(F + 2 * A, 5), torch.nn.Tanh(),
                                        torch.nn.Linear(5, 1))

    def forward(self, observation, action):
        return self.body(torch.cat([observation, action], -1))


def _mlp(n_in, n_out):
    return torch.nn.Sequential(torch.nn.Linear(n_in, 5), torch.nn.Tanh(), torch.nn.Linear(5, n_out))


class TerminalStateSeen(RuntimeError):
    """Raised by the NaN-guarded actor: it was called on a terminal (NaN) next state."""


class NaNGuardedActor(torch.nn.Module):
    """The actor of a network that cannot take terminal observations (e.g. a Cholesky layer)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, observation):
        bad = torch.isnan(observation).any(-1)
        if bad.any():
            raise TerminalStateSeen(
                f"TERMINAL-STATE-SEEN: actor called on {int(bad.sum())} NaN (terminal) state(s)")
        return self.inner(observation)


class UnknownStateSeen(RuntimeError):
    """Raised by the known-states actor: it was shown a state the batch does not hold."""


class KnownStatesActor(torch.nn.Module):
    """An actor defined on the batch's states only (a network undefined elsewhere: a
    normalisation by the norm, a Cholesky layer). ``known``: the states it may be shown;
    ``terminal``: the terminal next states, named apart when one is shown."""

    def __init__(self, inner, known, terminal):
        super().__init__()
        self.inner = inner
        self.register_buffer("known", known)
        self.register_buffer("terminal", terminal)

    def forward(self, observation):
        rows = observation.reshape(-1, observation.shape[-1])
        unknown = rows[~(rows[:, None] == self.known[None]).all(-1).any(-1)]
        if len(unknown):
            terminal = (unknown[:, None] == self.terminal[None]).all(-1).any(-1)
            tag = "TERMINAL-STATE-SEEN" if terminal.any() else "UNKNOWN-STATE-SEEN"
            raise UnknownStateSeen(
                f"{tag}: actor shown {len(unknown)} state(s) the batch does not hold as a "
                f"current or non-terminal next state, e.g. {unknown[0].tolist()}")
        return self.inner(observation)


class WrongBatchSize(RuntimeError):
    """Raised by the fixed-batch actor on a batch shape it was not built for."""


class FixedBatchActor(torch.nn.Module):
    """An actor that only works on the full batch shape (an RNN, a fixed-shape export)."""

    def __init__(self, inner, batch_shape):
        super().__init__()
        self.inner = inner
        self.batch_shape = tuple(batch_shape)

    def forward(self, observation):
        if tuple(observation.shape[:-1]) != self.batch_shape:
            raise WrongBatchSize(
                f"WRONG-BATCH-SIZE: actor built for batch {self.batch_shape} got "
                f"{tuple(observation.shape[:-1])}")
        return self.inner(observation)


def networks(kind: str, seed: int = 0, wrap=None,
             n_qvalues: int = 2) -> tuple[SACNetworks, torch.nn.Module]:
    """Seeded float64 networks; returns them and the bare actor (for the oracle)."""
    torch.manual_seed(seed)
    if kind == "continuous":
        actor = GaussianActor().double()
        qvalues = [ContinuousQ().double() for _ in range(n_qvalues)]
        outputs, dist = ("loc", "scale", "noise"), NoisyNormal
    else:
        actor = _mlp(F, NA).double()
        qvalues = [_mlp(F, NA).double() for _ in range(n_qvalues)]
        outputs, dist = ("logits",), torch.distributions.OneHotCategorical
    given = wrap(actor) if wrap else actor
    return SACNetworks(kind, given, outputs, dist, qvalues), actor


# ---------------------------------------------------------------- batches

#: which agent-steps end, per pattern: (terminated, truncated) index lists into [B, (N)]
PATTERNS = {
    # row 1: every agent terminated; row 2: agent 0 only (single: rows 1 and 2)
    "mixed": ([(1,), (2, 0)], []),
    # row 1: truncated (every agent); row 2: agent 1 truncated; row 3: agent 0 terminated
    # (single: rows 1 and 2 truncated, row 3 terminated)
    "truncated": ([(3, 0)], [(1,), (2, 1)]),
    "none": ([], []),
    "all": ([(slice(None),)], []),
}


def batch(kind: str, layout: str, pattern: str, *, seed: int = 1,
          nan_terminal: bool = False) -> SACBatch:
    g = torch.Generator().manual_seed(seed)
    lead = (B,) if layout == "single" else (B, N)
    obs_dim = F + A if kind == "continuous" else F
    obs = torch.randn(*lead, obs_dim, generator=g, dtype=torch.float64)
    nobs = torch.randn(*lead, obs_dim, generator=g, dtype=torch.float64)
    if kind == "continuous":
        action = torch.rand(*lead, A, generator=g, dtype=torch.float64) * 2 - 1
    else:
        action = torch.nn.functional.one_hot(torch.randint(NA, lead, generator=g), NA).double()
    reward = torch.randn(*lead, 1, generator=g, dtype=torch.float64)
    terminated = torch.zeros(*lead, 1, dtype=torch.bool)
    truncated = torch.zeros(*lead, 1, dtype=torch.bool)
    term_idx, trunc_idx = PATTERNS[pattern]
    for flag, where in ((terminated, term_idx), (truncated, trunc_idx)):
        for idx in where:
            flag[idx[: len(lead)]] = True
    if nan_terminal:
        nobs[terminated.squeeze(-1)] = math.nan
    return SACBatch(layout, obs, action, nobs, reward, terminated | truncated, terminated)


def transitions(b: SACBatch) -> oracle.Transitions:
    return oracle.flatten(b.observation, b.action, b.next_observation, b.reward, b.done,
                          b.terminated)


# ---------------------------------------------------------------- running and checking

SHAPE_CAUSE = ("the skip mask was built for the root batch [B] and applied to the whole "
               "'next' tensordict, not shaped by the done key's own batch dims and applied "
               "where that done lives (multi-agent done [B, N, 1]; pytorch/rl#2612)")
SHAPE_WORDS = ("shape", "mask", "dimension", "size")


def _chain(exc):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def run(area, kind, layout, b, skip, nets=None, *, what="", method="loss"):
    """Call the implementation (``area.<method>``, the loss by default); turn an exception
    into a one-screen failure message."""
    __tracebackhide__ = True
    nets = nets or networks(kind)[0]
    shown = "not passed" if skip is None else skip
    params = {"kind": kind, "layout": layout, "skip_done_states": shown, "B": B,
              "N": 1 if layout == "single" else N, "alpha": ALPHA, "gamma": GAMMA}
    try:
        out = getattr(area, method)(
            networks=device.put(nets), batch=device.put(b), skip_done_states=skip,
            alpha=ALPHA, gamma=GAMMA, target_entropy=TARGET_ENTROPY[kind])
        if method != "loss":
            return out
        return dataclasses.replace(
            out, losses=device.host(out.losses, "SACOutcome.losses"),
            actor_grad=device.host(out.actor_grad, "SACOutcome.actor_grad"),
            qvalue_grad=device.host(out.qvalue_grad, "SACOutcome.qvalue_grad"))
    except (AssertionError, NotImplementedError):
        # NotImplementedError is judged by the plugin: "not applicable" only when the
        # implementation's own code declares it (conformance/plugin/not_applicable.py)
        raise
    except Exception as exc:  # noqa: BLE001 - every failure of the loss is a spec failure
        text = " | ".join(str(e).splitlines()[0] for e in _chain(exc) if str(e))
        if "TERMINAL-STATE-SEEN" in text:
            cause = ("skip_done_states=True did not keep terminal next-states from the actor "
                     "(the flag is ignored, or the mask misses some terminal agent-steps)"
                     if skip else "the actor was run on terminal next-states")
            link = RL_2590
        elif "UNKNOWN-STATE-SEEN" in text:
            cause = ("the terminal next states were replaced by states the batch does not "
                     "hold (zeros, a constant) before the actor saw them: a network defined "
                     "only on real states breaks there")
            link = RL_2590
        elif "WRONG-BATCH-SIZE" in text:
            cause = ("the done states were masked out (the batch compacted) although "
                     f"skip_done_states={shown}: masking always on, the behaviour of "
                     "pytorch/rl#2606"
                     if not skip else "the skip mask compacts the batch the actor sees")
            link = RL_2606
        elif layout == "single" or not any(w in text.lower() for w in SHAPE_WORDS):
            cause, link = None, None
        elif skip:
            cause, link = SHAPE_CAUSE, RL_2612
        else:
            cause = (f"done states were masked although skip_done_states={shown}: masking "
                     "always on (pytorch/rl#2606), with a mask not shaped by the done key's "
                     "own batch dims (pytorch/rl#2612)")
            link = RL_2606
        raise AssertionError(message(
            f"{what or 'the SAC loss'} raised {type(exc).__name__}", params=params,
            expected="losses", actual=text[:300], cause=cause, link=link)) from None


def check_against_oracle(out, kind, layout, b, skip, nets, bare_actor, *, what):
    """Losses and gradients of the implementation against the oracle."""
    __tracebackhide__ = True
    t = transitions(b)
    kw = dict(alpha=ALPHA, gamma=GAMMA, target_entropy=TARGET_ENTROPY[kind])
    ref = oracle.sac_losses(kind, bare_actor, nets.qvalues, t, **kw)
    params = {"kind": kind, "layout": layout,
              "skip_done_states": "not passed" if skip is None else skip,
              "done": int(b.done.sum()), "terminated": int(b.terminated.sum()),
              "agent-steps": len(t)}
    got_q = float(out.losses["loss_qvalue"])
    ref_losses = {k: float(getattr(ref, k).detach()) for k in LOSSES}
    cause = None
    if not math.isclose(got_q, ref_losses["loss_qvalue"], rel_tol=RTOL, abs_tol=ATOL):
        cause = oracle.diagnose(kind, got_q, bare_actor, nets.qvalues, t, **kw)
        if cause is None and not is_finite(got_q):
            cause = ("a Q-value computed at a terminal next state (NaN) leaked into the "
                     "target: 0 * NaN = NaN (pytorch/rl#2590)")
    for name in LOSSES:
        assert_close(f"{what}: {name} != oracle", float(out.losses[name]),
                     ref_losses[name], params=params, rtol=RTOL, atol=ATOL,
                     cause=cause if name == "loss_qvalue" else None, link=RL_2613)
    a_names = [n for n, _ in nets.actor.named_parameters()]
    want_actor = torch.autograd.grad(ref.loss_actor, list(bare_actor.parameters()))
    got_actor = [out.actor_grad[n] for n in a_names]
    assert_close(f"{what}: d loss_actor / d actor parameters != oracle", _flat(got_actor),
                 _flat(want_actor), params=params, rtol=RTOL, atol=ATOL)
    for i, qf in enumerate(nets.qvalues):
        want_q = torch.autograd.grad(ref.loss_qvalue, list(qf.parameters()), retain_graph=True)
        got_q_grad = [out.qvalue_grad[i][n] for n, _ in qf.named_parameters()]
        assert_close(f"{what}: d loss_qvalue / d Q-network {i} parameters != oracle",
                     _flat(got_q_grad), _flat(want_q), params=params, rtol=RTOL, atol=ATOL,
                     cause=cause, link=RL_2613)


def _flat(tensors) -> np.ndarray:
    return torch.cat([t.detach().reshape(-1) for t in tensors]).numpy()


def _check(area, kind, layout, b, skip, *, wrap=None, what):
    __tracebackhide__ = True
    nets, bare = networks(kind, wrap=wrap)
    out = run(area, kind, layout, b, skip, nets, what=what)
    check_against_oracle(out, kind, layout, b, skip, nets, bare, what=what)
    return out


_kinds = pytest.mark.parametrize("kind", KINDS)
_layouts = pytest.mark.parametrize("layout", SAC_LAYOUTS)
_skips = pytest.mark.parametrize("skip", [False, True], ids=lambda s: f"skip={s}")


# ---------------------------------------------------------------- the specs


@_kinds
def test_skip_done_states_exists_and_defaults_to_false(sac_done_states, kind):
    """Without the argument the loss holds skip_done_states=False and behaves like it: the
    actor sees every next state (one that requires the full batch keeps working)."""
    b = batch(kind, "single", "mixed")
    nets, bare = networks(kind, wrap=lambda a: FixedBatchActor(a, (B,)))
    out = run(sac_done_states, kind, "single", b, None, nets, what="loss built without the flag")
    if out.skip_done_states is not False:
        raise AssertionError(message(
            "skip_done_states does not default to False", params={"kind": kind},
            expected=False, actual=out.skip_done_states,
            cause="the loss has no skip_done_states flag (added in torchrl 0.7.0)"
            if out.skip_done_states is None else "the default skips done states",
            link=RL_2613))
    check_against_oracle(out, kind, "single", b, None, nets, bare, what="flag not passed")


@_skips
@_layouts
@_kinds
def test_losses_and_gradients_match_oracle(sac_done_states, kind, layout, skip):
    """Networks defined everywhere, some (agent-)steps terminated (per-agent layouts: row 1
    every agent, row 2 agent 0 only): losses and gradients equal the oracle, with the flag
    False and True alike (so True == False)."""
    _check(sac_done_states, kind, layout, batch(kind, layout, "mixed"), skip,
           what="terminated steps, networks defined everywhere")


@_layouts
@_kinds
def test_terminal_next_states_never_reach_the_networks(sac_done_states, kind, layout):
    """skip_done_states=True, terminal next observations are NaN: the actor raises on NaN, the
    Q-networks propagate it. The losses must be finite and equal the oracle's (which never
    looks at a terminal next state)."""
    b = batch(kind, layout, "mixed", nan_terminal=True)
    nets, bare = networks(kind, wrap=NaNGuardedActor)
    out = run(sac_done_states, kind, layout, b, True, nets, what="NaN terminal next states")
    bad = [k for k, v in out.losses.items() if not is_finite(float(v))]
    if bad:
        raise AssertionError(message(
            "loss is not finite with NaN terminal next-observations and skip_done_states=True",
            params={"kind": kind, "layout": layout, "terminated": int(b.terminated.sum())},
            expected="finite losses", actual={k: float(v) for k, v in out.losses.items()},
            cause="the Q-network is still evaluated on terminal next states and 0 * NaN = NaN "
                  "in the TD target (pytorch/rl#2590)", link=RL_2590))
    check_against_oracle(out, kind, layout, b, True, nets, bare, what="NaN terminal next states")


@_skips
@_layouts
@_kinds
def test_truncated_transitions_bootstrap_from_the_next_state(sac_done_states, kind, layout, skip):
    """done=True, terminated=False (time limit): the target bootstraps V(s') at the real next
    state, with a freshly drawn next action, in both modes (not a zero action, not a zero
    value, not r alone)."""
    _check(sac_done_states, kind, layout, batch(kind, layout, "truncated"), skip,
           what="truncated steps")


@pytest.mark.parametrize("pattern", ["none", "all"], ids=lambda p: f"done={p}")
@_skips
@_layouts
@_kinds
def test_no_done_and_all_done_batches(sac_done_states, kind, layout, skip, pattern):
    """Batches with no done step and with every step terminated."""
    _check(sac_done_states, kind, layout, batch(kind, layout, pattern), skip,
           what=f"batch with done={pattern}")


@_layouts
@_kinds
def test_fixed_batch_size_actor_works_with_flag_off(sac_done_states, kind, layout):
    """skip_done_states=False: an actor that requires the full batch shape keeps working
    (nothing is compacted), and the losses equal the oracle."""
    lead = (B,) if layout == "single" else (B, N)
    _check(sac_done_states, kind, layout, batch(kind, layout, "mixed"), False,
           wrap=lambda a: FixedBatchActor(a, lead), what="fixed-batch actor")


@_skips
@_layouts
@_kinds
def test_done_alone_is_the_termination(sac_done_states, kind, layout, skip):
    """No terminated entry in the batch (data written before TorchRL split done into
    terminated and truncated): done is the termination, as TorchRL's value estimators read it.
    The losses equal the oracle's with terminated = done; with skip_done_states=True the done
    next observations are NaN and the actor raises on NaN, so none may reach it."""
    b = dataclasses.replace(batch(kind, layout, "mixed", nan_terminal=skip), has_terminated=False)
    _check(sac_done_states, kind, layout, b, skip, wrap=NaNGuardedActor if skip else None,
           what="batch without a terminated entry")


@pytest.fixture
def caller_batch(request, impl, sac_done_states):
    return capabilities.require(request, impl, "sac_done_states", sac_done_states,
                                "batch_around_loss")


def _keys(keys) -> list[str]:
    return sorted(".".join(k) for k in keys)


@_skips
@_layouts
@_kinds
def test_the_callers_batch_is_left_unchanged(caller_batch, kind, layout, skip):
    """One loss call on a batch with terminated and truncated steps: afterwards the caller's
    batch holds the same entries with the same shapes, dtypes and values, plus at most the ones
    the loss may write at the current step (TorchRL: the priority, and the actor's outputs,
    which its modules write where they run). A target that writes its next value or next
    action into the caller's batch, or neutralises the terminal next states in place, fails."""
    b = batch(kind, layout, "truncated")  # terminated steps too: a skip replaces something
    held = run(caller_batch, kind, layout, b, skip, what="the SAC loss (caller's batch kept)",
               method="batch_around_loss")
    params = {"kind": kind, "layout": layout, "skip_done_states": skip,
              "terminated": int(b.terminated.sum()), "done": int(b.done.sum())}
    before = {k: v.detach().cpu() for k, v in held.before.items()}
    after = {k: v.detach().cpu() for k, v in held.after.items()}
    if not any(v.shape == b.observation.shape and torch.equal(v, b.observation)
               for v in before.values()):
        raise AssertionError(message(
            "the batch reported before the call does not hold the spec's observations",
            params=params, expected="an entry equal to the observations given",
            actual=_keys(before)))
    allowed = {tuple(k) for k in held.written if tuple(k)[:1] != ("next",)}
    added = set(after) - set(before) - allowed
    removed = set(before) - set(after)
    changed = [k for k in set(before) & set(after)
               if before[k].shape != after[k].shape or before[k].dtype != after[k].dtype
               or not torch.equal(before[k], after[k])]
    if added or removed or changed:
        raise AssertionError(message(
            "the loss changed the caller's batch", params=params,
            expected=f"the entries given ({len(before)}), plus at most {_keys(allowed)}",
            actual={"added": _keys(added), "removed": _keys(removed),
                    "changed": _keys(changed)},
            cause="the target computation writes into the tensordict it was given instead "
                  "of a shallow copy (e.g. the next-state value under ('next', "
                  "'state_value'), or terminal next states neutralised in place)"))


@_layouts
@_kinds
def test_the_networks_are_shown_only_states_of_the_batch(sac_done_states, kind, layout):
    """skip_done_states=True: the actor may be shown the batch's current states and its
    non-terminal next states, nothing else: not a terminal next state, and not a stand-in made
    up for one (zeros, a constant), which a network defined only on real states (a
    normalisation by the norm, a Cholesky layer) cannot take. The losses equal the oracle's."""
    b = batch(kind, layout, "mixed")  # some agent-steps terminated
    rows = lambda x: x.reshape(-1, x.shape[-1])  # noqa: E731
    live = ~b.terminated.reshape(-1)
    known = torch.cat([rows(b.observation), rows(b.next_observation)[live]])
    terminal = rows(b.next_observation)[~live]
    _check(sac_done_states, kind, layout, b, True,
           wrap=lambda a: KnownStatesActor(a, known, terminal),
           what="actor defined on the batch's states only")
