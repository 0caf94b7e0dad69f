"""What the §2 composite specs ask that a library's multi-categorical distribution cannot express.

SB3's ``MultiCategoricalDistribution`` and skrl's ``MultiCategoricalMixin`` are the counterparts
of TorchRL's composite distribution in those libraries: several categorical heads, one action
tensor ``[*batch, n_heads]``, the joint log-prob the sum of the heads'. They have no Normal head,
no sample container with its own batch size (a tensordict), no per-head action layout (a head
stored as ``[*batch, 1]``), no action spec, keys or name map to misconfigure. The adapters raise
``NotImplementedError`` with the reasons worded here (raised from the adapter's own module, so
that it counts as "not applicable", see conformance/plugin/not_applicable.py).
"""

from __future__ import annotations

import torch

from conformance.interface import COMPOSITE_MISCONFIGURATIONS, CompositeHead


def categorical_only(library: str, heads: dict[str, CompositeHead]) -> str | None:
    normal = [h for h, x in heads.items() if x.kind != "categorical"]
    if normal:
        return (f"{library}'s multi-categorical distribution has categorical heads only: the "
                f"Normal head(s) {', '.join(map(repr, normal))} cannot be part of it")
    return None


def batch_shape(heads: dict[str, CompositeHead]) -> torch.Size:
    return next(iter(heads.values())).batch_shape


def one_action_tensor(library: str, heads, actions, sample_batch_shape) -> str | None:
    """Why the sample cannot be given as the library's one ``[*batch, n_heads]`` tensor."""
    batch = batch_shape(heads)
    if tuple(sample_batch_shape) != tuple(batch):
        return (f"{library} takes the actions as one [*batch, n_heads] tensor, with no container "
                f"of its own batch size: a sample tensordict of batch {tuple(sample_batch_shape)} "
                f"for a distribution of batch {tuple(batch)} cannot be given")
    odd = [h for h in heads if tuple(actions[h].shape) != tuple(batch)]
    if odd:
        return (f"{library} stores a multi-discrete action as one [*batch, n_heads] tensor: "
                f"head(s) {', '.join(map(repr, odd))} stored as {tuple(actions[odd[0]].shape)} "
                "(a per-head trailing dim) cannot be given")
    return None


def misconfiguration(library: str, fault: str) -> str:
    return (f"{library}'s multi-categorical distribution has no action spec, keys or name map: "
            f"the misconfiguration '{fault}' ({COMPOSITE_MISCONFIGURATIONS[fault]}) cannot be "
            "made")


def logits(heads: dict[str, CompositeHead]) -> torch.Tensor:
    """The heads' logits side by side, ``[*batch, sum n]`` (still attached to their graph)."""
    return torch.cat([x.params["logits"] for x in heads.values()], dim=-1)
