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
        dim = _widened_dim(value, ours, old_width, new_width)
        if dim is None:
            out[name] = value
            continue
        start = ours.detach().clone() if name.endswith("log_std") else torch.zeros_like(ours)
        start = start.to(value.dtype)
        start.narrow(dim, 0, old_width).copy_(value)
        out[name] = start
        widened.append(name)
    return out, widened


def _widened_dim(value, ours, old_width: int, new_width: int) -> int | None:
    if ours is None or value.dim() != ours.dim() or value.shape == ours.shape:
        return None
    differ = [d for d in range(value.dim()) if value.shape[d] != ours.shape[d]]
    if len(differ) != 1:
        return None
    d = differ[0]
    return d if (value.shape[d], ours.shape[d]) == (old_width, new_width) else None
