"""Start a base-moving policy from its fixed-base twin's weights (`pretrained_weights=`).

A manipulation skill's actions are [7 arm deltas, grip], and with base movement
[7 arm deltas, grip, linear, angular] (`skill_spec.action_layout`): the base's two dimensions
come last. Every layer of the policy is the same size in both variants except those that
read or write an action: the action head's mean (rows), its log-std, and the
previous-action embedding (columns). `widen_actions` copies the fixed-base weights into the
prefix of those layers and starts the new entries so that the widened policy acts exactly
as its source on the arm and grip, with a base mean of 0 (the base stands still until it
learns to move) and a previous base action that changes nothing: zero rows and columns. A
log-std starts at the new policy's own initialisation (`model.action_log_std_init`).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch


def widen_actions(
    weights: Mapping[str, torch.Tensor],
    target: Mapping[str, torch.Tensor],
    old_width: int,
    new_width: int,
) -> tuple[dict[str, torch.Tensor], list[str]]:
    """`weights` (a policy with `old_width` actions) fitted to `target` (the new policy's
    state_dict, `new_width` actions). A tensor whose shape differs from the target's in one
    dimension only, `old_width` there against `new_width`, keeps its values in the first
    `old_width` entries of that dimension; the rest are zero, or the target's own values for
    a log-std. Other tensors pass unchanged (a misfit still fails at `load_state_dict`).
    Returns the weights and the names of the tensors widened."""
    if new_width <= old_width:
        raise ValueError(f"widen_actions: {old_width} -> {new_width} actions is not a widening")
    out: dict[str, torch.Tensor] = {}
    widened: list[str] = []
    for name, value in weights.items():
        ours = target.get(name)
        dim = _differing_dim(value, ours)
        if dim is None or (value.shape[dim], ours.shape[dim]) != (old_width, new_width):
            out[name] = value
            continue
        start = ours.detach().clone() if name.endswith("log_std") else torch.zeros_like(ours)
        start = start.to(value.dtype)
        start.narrow(dim, 0, old_width).copy_(value)
        out[name] = start
        widened.append(name)
    return out, widened


def _differing_dim(value, ours) -> int | None:
    """The one dimension in which `value`'s shape differs from `ours` (the target's), or
    None (no target, other rank, same shape, or several dimensions differ)."""
    if ours is None or value.dim() != ours.dim() or value.shape == ours.shape:
        return None
    differ = [d for d in range(value.dim()) if value.shape[d] != ours.shape[d]]
    return differ[0] if len(differ) == 1 else None


def vector_positions(old_keys, old_sizes, new_keys, new_sizes) -> list[int]:
    """Where each element of the old concatenated vector observation sits in the new one
    (both concatenated in sorted key order, `models.encoders.flatten_vectors`); every old
    key must be in the new layout with its size."""
    starts, at = {}, 0
    for key, size in zip(new_keys, new_sizes, strict=True):
        starts[key], at = (at, size), at + size
    out: list[int] = []
    for key, size in zip(old_keys, old_sizes, strict=True):
        start, new_size = starts[key]
        if new_size != size:
            raise ValueError(f"observation {key!r} is {size} wide, now {new_size}")
        out.extend(range(start, start + size))
    return out


def widen_observations(
    weights: Mapping[str, torch.Tensor],
    target: Mapping[str, torch.Tensor],
    positions: list[int],
    new_vector: int,
    input_offset: int,
) -> tuple[dict[str, torch.Tensor], list[str]]:
    """`weights` of a policy whose vector observation had `len(positions)` elements fitted to
    one with `new_vector` (observations added; `positions`: `vector_positions`). The input
    layer reads [`input_offset` visual features, the vector, the rest]: its old columns move
    to their new places and the added observations' columns are zero, so the widened policy
    ignores them until it learns to use them. The vector normaliser's statistics move the
    same way; the added entries keep the target's own (mean 0, var 1). Other tensors pass
    unchanged. Returns the weights and the names of the tensors widened."""
    old_vector = len(positions)
    added = new_vector - old_vector
    if added <= 0:
        raise ValueError(f"widen_observations: {old_vector} -> {new_vector} is not a widening")
    out: dict[str, torch.Tensor] = {}
    widened: list[str] = []
    for name, value in weights.items():
        ours = target.get(name)
        dim = _differing_dim(value, ours)
        if dim is None or ours.shape[dim] - value.shape[dim] != added:
            out[name] = value
            continue
        old = value.shape[dim]
        if old == old_vector:  # the vector itself (the normaliser)
            index = list(positions)
        else:  # the input layer: [visual, vector, rest]
            tail = old - input_offset - old_vector
            if tail < 0:
                out[name] = value
                continue
            index = [*range(input_offset), *(input_offset + p for p in positions)]
            index += range(input_offset + new_vector, input_offset + new_vector + tail)
        keep_target = "norm." in name  # statistics: the target's own for the added entries
        start = ours.detach().clone() if keep_target else torch.zeros_like(ours)
        start = start.to(value.dtype)
        start.index_copy_(dim, torch.tensor(index, dtype=torch.long), value)
        out[name] = start
        widened.append(name)
    return out, widened
