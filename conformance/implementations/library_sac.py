"""What the §3 SAC specs ask that other RL libraries cannot express, shared by their adapters.

No library but TorchRL has ``skip_done_states`` or the multi-agent done layouts of the spec. What
each library's SAC does is its only behaviour: it evaluates the actor on every next state, which
is what ``skip_done_states=False`` asks, so the specs run with False; True (skip terminal next
states) and None ("the flag's default") cannot be asked of a loss that has no flag. The adapters
raise ``NotImplementedError`` with the reason this module words (it must be raised from the
adapter's own module to count as "not applicable", see conformance/plugin/not_applicable.py).
"""

from __future__ import annotations

import torch


def unsupported(library: str, *, kind: str, layout: str, skip: bool | None,
                kinds: tuple[str, ...] = ("continuous",)) -> str | None:
    """Why the spec's request cannot be expressed for ``library``'s SAC, or None."""
    if kind not in kinds:
        return (f"{library} has no {kind} SAC (its SAC is {' and '.join(kinds)} only)")
    if layout != "single":
        return (f"{library}'s SAC takes one agent per transition: the {layout} multi-agent done "
                "layout ([B, N, 1] done) cannot be given to it")
    if skip is None:
        return (f"{library}'s SAC has no skip_done_states flag (a TorchRL option), so its "
                "default cannot be asked; its only behaviour, evaluating the actor on every next "
                "state as skip_done_states=False does, is checked by the skip=False specs")
    if skip:
        return (f"{library}'s SAC has no skip_done_states option: it always evaluates the actor "
                "(and the target critics) on every next state, terminal ones included")
    return None


def grads(loss: torch.Tensor, named: list[tuple[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """d loss / d each named parameter (zeros where the loss does not depend on it)."""
    params = [p for _, p in named]
    got = torch.autograd.grad(loss, params, allow_unused=True, retain_graph=True)
    return {n: (torch.zeros_like(p) if g is None else g.detach())
            for (n, p), g in zip(named, got, strict=True)}


def state_table(batch) -> torch.Tensor:
    """observations then next observations, [2B, F] float64: libraries that cast observations to
    float32 are given row numbers (exact in float32) and the networks look the state up here."""
    return torch.cat([batch.observation, batch.next_observation]).to(torch.float64)


def as_rows(x) -> torch.Tensor:
    """Row numbers passed through a float32 observation, back as indices."""
    return torch.as_tensor(x).reshape(-1, torch.as_tensor(x).shape[-1])[:, 0].round().long()
