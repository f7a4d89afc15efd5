"""Truncated importance-sampling weights that correct VER's uneven per-env sampling.

VER (paper §2.2, §4 'Training') collects T·N steps without fixing how many come from each
environment, so fast environments are over-represented. The paper corrects this with truncated
IS weighting (max 1.0). The sampling distribution it corrects towards is the uniform one of
SyncOnRL, where every environment contributes the same share S/N of the S steps, so each step of
environment e gets

    w_e = (S / N) / n_e            n_e = steps of env e in the rollout,

then min(w_e, max_is) inside the loss: over-sampled envs (n_e > S/N) are down-weighted,
under-sampled ones are not up-weighted beyond 1. DESIGN §5 writes this as (T+1)/n_e because the
reference buffer holds (T+1)·N steps including each env's bootstrap step; our Rollout keeps the
bootstrap outside (`bootstrap_values`), so S/N is the same 'average steps per env'.

Stale steps (preemption fill, paper §2.3) are ordinary samples here: the paper runs extra PPO
epochs on them without an off-policy return correction, so they count towards n_e and take their
env's weight; PPO's ratio uses their stored (older-policy) log-probs.
"""

from __future__ import annotations

import torch
from torch import Tensor


def per_env_is_coefficients(env_ids: Tensor, num_envs: int) -> Tensor:
    """[N] float: (S/N) / n_e for each env; inf for envs without steps (never indexed)."""
    counts = torch.bincount(env_ids, minlength=num_envs).to(torch.float32)
    expected = env_ids.numel() / num_envs
    return expected / counts


def compute_is_weights(env_ids: Tensor, num_envs: int) -> Tensor:
    """[S] untruncated IS weight of each step (its env's coefficient)."""
    return per_env_is_coefficients(env_ids, num_envs)[env_ids]


def truncate_is_weights(weights: Tensor, max_is: float) -> Tensor:
    """min(w, max_is), the truncation applied inside the PPO loss."""
    return weights.clamp(max=max_is)
