"""GAE(λ) over a flat VER rollout with a variable number of steps per environment.

Per environment e, take its steps in time order t = 0..n_e-1 and compute
    delta_t = r_t + γ [V_{t+1} (1 - done_t) + V^final_t trunc_t] - V_t
    A_t     = delta_t + γ λ (1 - done_t) A_{t+1}
with V_{n_e} = bootstrap_values[e] and A_{n_e} = 0. A done step (terminated or truncated)
cuts the recursion and the bootstrap from the next step, which belongs to a new episode; a
step truncated by a time limit (gymnasium `truncated` without `terminated`) instead
bootstraps from V^final_t, the value of the episode's final observation, because the return
of the unfinished episode would have continued. Returns are A_t + V_t.

The steps are arranged into an [N, L_max] index table (L_max = longest per-env run) and the
recursion runs backwards over its columns, vectorised over environments.
"""

from __future__ import annotations

import torch
from torch import Tensor


def per_env_step_table(env_ids: Tensor, num_envs: int) -> tuple[Tensor, Tensor]:
    """Index table of each env's steps in time order.

    Returns (table [N, L_max] long, lengths [N] long); unused cells hold -1. Relies on the
    rollout storing each env's steps in time order, which a stable sort preserves.
    """
    lengths = torch.bincount(env_ids, minlength=num_envs)
    order = torch.sort(env_ids, stable=True).indices
    max_len = int(lengths.max()) if lengths.numel() else 0
    table = torch.full((num_envs, max_len), -1, dtype=torch.long, device=env_ids.device)
    starts = torch.cumsum(lengths, 0) - lengths
    sorted_env = env_ids[order]
    position = torch.arange(order.numel(), device=env_ids.device) - starts[sorted_env]
    table[sorted_env, position] = order
    return table, lengths


def compute_gae(
    rewards: Tensor,
    values: Tensor,
    dones: Tensor,
    env_ids: Tensor,
    bootstrap_values: Tensor,
    gamma: float,
    gae_lambda: float,
    truncated: Tensor | None = None,
    final_values: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """Advantages [S] and returns [S] for a flat rollout (see module docstring).

    `truncated` [S] bool and `final_values` [S]: time-limit ends and V(final observation);
    None = no truncation (every done step is terminal)."""
    num_envs = bootstrap_values.shape[0]
    table, lengths = per_env_step_table(env_ids, num_envs)
    dtype = values.dtype
    advantages = torch.zeros_like(values)
    next_value = bootstrap_values.to(dtype).clone()
    next_adv = torch.zeros(num_envs, dtype=dtype, device=values.device)
    not_done = (~dones).to(dtype)
    if truncated is None or final_values is None:
        end_value = torch.zeros_like(values)
    else:
        end_value = final_values.to(dtype) * truncated.to(dtype)
    for col in range(table.shape[1] - 1, -1, -1):
        active = lengths > col  # envs that have a step at this position
        idx = table[active, col]
        nd = not_done[idx]
        nxt = next_value[active] * nd + end_value[idx]
        delta = rewards[idx].to(dtype) + gamma * nxt - values[idx]
        adv = delta + gamma * gae_lambda * nd * next_adv[active]
        advantages[idx] = adv
        next_adv[active] = adv
        next_value[active] = values[idx]
    return advantages, advantages + values
