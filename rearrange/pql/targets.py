"""Critic targets: n-step returns, the clipped double-Q target, the categorical projection.

n-step return of a sampled step t, over the next n steps of the same env (k = 0..n-1):

    G = Σ_{k<m} γ^k r_{t+k}        y = G + γ^m · min(Q'_1, Q'_2)(s', π(s'))  (no bootstrap if
                                                                               step t+m-1 terminated)

where m ≤ n stops early at the first episode end (terminated or truncated) or at the newest
step written so far; s' is the `next_obs` of step t+m-1. A time-limit truncation keeps the
bootstrap (s' is then the episode's real final observation), a termination drops it.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor


class NStepReturns(NamedTuple):
    returns: Tensor
    """[B] discounted reward sum G over the steps taken."""
    last: Tensor
    """[B] long: index k of the last step taken (the bootstrap observation is its next_obs)."""
    bootstrap_discount: Tensor
    """[B] γ^(last+1), or 0 where step `last` terminated the episode."""


def nstep_returns(
    rewards: Tensor, terminated: Tensor, truncated: Tensor, available: Tensor, gamma: float
) -> NStepReturns:
    """n-step returns from [B, n] rewards/flags along each sample's future steps.

    `available[:, k]` is False where step t+k has not been written yet (column 0 must be True).
    """
    batch, n = rewards.shape
    taking = torch.ones(batch, dtype=torch.bool, device=rewards.device)
    returns = torch.zeros(batch, dtype=torch.float32, device=rewards.device)
    last = torch.zeros(batch, dtype=torch.long, device=rewards.device)
    for k in range(n):
        taking = taking & available[:, k]
        returns = returns + torch.where(taking, (gamma**k) * rewards[:, k].float(), 0.0)
        last = torch.where(taking, torch.full_like(last, k), last)
        taking = taking & ~(terminated[:, k] | truncated[:, k])
    ended = terminated.gather(1, last[:, None]).squeeze(1)
    discount = torch.pow(torch.full_like(returns, gamma), (last + 1).float())
    return NStepReturns(returns, last, torch.where(ended, 0.0, discount))


def clipped_double_q_target(
    returns: Tensor, bootstrap_discount: Tensor, q1_next: Tensor, q2_next: Tensor
) -> Tensor:
    """y = G + discount · min(Q'_1, Q'_2): the minimum curbs Q over-estimation (double Q)."""
    return returns + bootstrap_discount * torch.minimum(q1_next, q2_next)


def categorical_projection(
    next_probs: Tensor, returns: Tensor, bootstrap_discount: Tensor, support: Tensor
) -> Tensor:
    """Project the distribution G + discount·Z (Z on `support`, probabilities `next_probs`
    [B, K]) back onto `support` (C51, Bellemare et al. 2017): each atom's mass is split
    between the two neighbouring atoms in proportion to its distance to them."""
    v_min, v_max = support[0], support[-1]
    delta = (v_max - v_min) / (support.numel() - 1)
    shifted = returns[:, None] + bootstrap_discount[:, None] * support[None, :]
    position = (shifted.clamp(v_min, v_max) - v_min) / delta
    lower, upper = position.floor().long(), position.ceil().long()
    upper_weight = position - lower.float()
    lower_weight = 1.0 - upper_weight
    target = torch.zeros_like(next_probs)
    target.scatter_add_(1, lower, next_probs * lower_weight)
    target.scatter_add_(1, upper, next_probs * upper_weight)
    return target
