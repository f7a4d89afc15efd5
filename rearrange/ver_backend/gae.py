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
recursion runs backwards over its columns, vectorised over environments (in numpy).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor


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
    None = no truncation (every done step is terminal).

    The backward recursion runs in numpy on the host: it is L_max small steps, each a handful
    of ops on N numbers, where torch pays ~5 µs per op on CPU and a kernel launch per op on a
    GPU. One host round trip of S numbers replaces ~8 L_max launches."""
    device, dtype = values.device, values.dtype
    num_envs = bootstrap_values.shape[0]
    host = _np_dtype(dtype)
    r = rewards.detach().cpu().numpy().astype(host, copy=False)
    v = values.detach().cpu().numpy().astype(host, copy=False)
    not_done = (~dones.detach().cpu().numpy()).astype(host)
    if truncated is None or final_values is None:
        end_value = np.zeros_like(v)
    else:
        fv = final_values.detach().cpu().numpy().astype(host, copy=False)
        end_value = fv * truncated.detach().cpu().numpy().astype(host)
    table, lengths = per_env_step_table(env_ids.detach().cpu().numpy(), num_envs)
    advantages = np.zeros_like(v)
    next_value = bootstrap_values.detach().cpu().numpy().astype(host).copy()
    next_adv = np.zeros(num_envs, host)
    with np.errstate(invalid="ignore", over="ignore"):  # NaN/inf propagate, as in torch
        for col in range(table.shape[1] - 1, -1, -1):
            active = lengths > col  # envs that have a step at this position
            idx = table[active, col]
            nd = not_done[idx]
            nxt = next_value[active] * nd + end_value[idx]
            delta = r[idx] + gamma * nxt - v[idx]
            adv = delta + gamma * gae_lambda * nd * next_adv[active]
            advantages[idx] = adv
            next_adv[active] = adv
            next_value[active] = v[idx]
    adv_t = torch.from_numpy(advantages).to(device)
    return adv_t, adv_t + values.detach()


def _np_dtype(dtype: torch.dtype) -> np.dtype:
    return torch.zeros(0, dtype=dtype).numpy().dtype


def per_env_step_table(env_ids: np.ndarray, num_envs: int) -> tuple[np.ndarray, np.ndarray]:
    """Index table of each env's steps in time order.

    Returns (table [N, L_max] int64, lengths [N]); unused cells hold -1. Relies on the
    rollout storing each env's steps in time order, which a stable sort preserves.
    """
    lengths = np.bincount(env_ids, minlength=num_envs)
    order = np.argsort(env_ids, kind="stable")
    table = np.full((num_envs, int(lengths.max()) if lengths.size else 0), -1, np.int64)
    starts = np.cumsum(lengths) - lengths
    sorted_env = env_ids[order]
    table[sorted_env, np.arange(order.size) - starts[sorted_env]] = order
    return table, lengths
