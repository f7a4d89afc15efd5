"""VER mini-batches (paper §2.2, Fig. 3B).

The rollout is cut into sequences: contiguous runs of one environment's steps within ONE
episode (a new sequence starts at each env's first step in the rollout, at every episode start,
and where fresh steps follow stale ones), so there are K >= N of them. The sequences are shuffled
and concatenated, and the resulting step list is cut into `num_mini_batch` chunks whose sizes
differ by at most one step. A cut may split a sequence; the second piece starts from
`hidden_in` at its first step, which the rollout stores per step, so the split is exact.

Each mini-batch is laid out sequence after sequence (contract §5): `seq_lengths[k]` steps of
piece k, with `hidden[k]` the recurrent state at its first step.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import torch
from torch import Tensor

from rearrange.ver_backend.rollout import ObsDict, Rollout


class MiniBatch(NamedTuple):
    """One PPO mini-batch of M steps in K_b sequences, laid out sequence after sequence."""

    obs: ObsDict
    """Observation tensors [M, ...]."""
    actions: Tensor
    """[M, A] actions taken."""
    prev_actions: Tensor
    """[M, A] previous actions, zero at episode starts."""
    old_log_probs: Tensor
    """[M] log-probs of the acting policy."""
    old_values: Tensor
    """[M] values of the acting policy."""
    advantages: Tensor
    """[M] GAE advantages."""
    returns: Tensor
    """[M] value targets."""
    is_weights: Tensor
    """[M] untruncated VER IS weights (the loss truncates them)."""
    hidden: Tensor
    """[K_b, R, H] recurrent state at each sequence's first step."""
    seq_lengths: Tensor
    """[K_b] long, steps per sequence; sums to M."""
    step_indices: Tensor
    """[M] long, index of each step in the rollout (for diagnostics and tests)."""


def partition_sizes(total: int, parts: int) -> list[int]:
    """`parts` sizes summing to `total` that differ by at most one."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def find_sequences(rollout: Rollout) -> tuple[Tensor, Tensor, Tensor]:
    """Single-episode sequences of the rollout.

    Returns (order [S], starts [K], lengths [K]): `order` lists the steps env by env in time
    order; sequence k is order[starts[k] : starts[k] + lengths[k]].
    """
    order = torch.sort(rollout.env_ids, stable=True).indices
    env = rollout.env_ids[order]
    stale = rollout.is_stale[order]
    new_seq = rollout.episode_starts[order].clone()
    new_seq[0] = True
    new_seq[1:] |= env[1:] != env[:-1]
    new_seq[1:] |= rollout.dones[order][:-1]
    new_seq[1:] |= stale[1:] != stale[:-1]
    starts = torch.nonzero(new_seq).flatten()
    ends = torch.cat([starts[1:], starts.new_tensor([order.numel()])])
    return order, starts, ends - starts


def _shuffled_step_order(
    order: Tensor, starts: Tensor, lengths: Tensor, generator: torch.Generator | None
) -> tuple[Tensor, Tensor]:
    """Steps of the sequences in a random sequence order: (step index [S], sequence id [S])."""
    perm = torch.randperm(starts.numel(), generator=generator).to(order.device)
    lengths_p, starts_p = lengths[perm], starts[perm]
    seq_of_step = torch.repeat_interleave(
        torch.arange(perm.numel(), device=order.device), lengths_p
    )
    offset_in_seq = (
        torch.arange(seq_of_step.numel(), device=order.device)
        - (torch.cumsum(lengths_p, 0) - lengths_p)[seq_of_step]
    )
    return order[starts_p[seq_of_step] + offset_in_seq], seq_of_step


def _gather(
    rollout: Rollout,
    steps: Tensor,
    seq_of_step: Tensor,
    advantages: Tensor,
    returns: Tensor,
    is_weights: Tensor,
) -> MiniBatch:
    _, seq_lengths = torch.unique_consecutive(seq_of_step, return_counts=True)
    first_steps = steps[torch.cumsum(seq_lengths, 0) - seq_lengths]
    # evaluate_actions has no not_done input, so the reset of prev_action at episode starts
    # (done by act() during collection) is applied here.
    keep_prev = (~rollout.episode_starts[steps]).to(rollout.prev_actions.dtype).unsqueeze(-1)
    return MiniBatch(
        obs=rollout.select_obs(steps),
        actions=rollout.actions[steps],
        prev_actions=rollout.prev_actions[steps] * keep_prev,
        old_log_probs=rollout.log_probs[steps],
        old_values=rollout.values[steps],
        advantages=advantages[steps],
        returns=returns[steps],
        is_weights=is_weights[steps],
        hidden=rollout.hidden_in[first_steps],
        seq_lengths=seq_lengths.to(torch.long),
        step_indices=steps,
    )


def iter_minibatches(
    rollout: Rollout,
    advantages: Tensor,
    returns: Tensor,
    is_weights: Tensor,
    num_mini_batch: int,
    generator: torch.Generator | None = None,
) -> Iterator[MiniBatch]:
    """One epoch of VER mini-batches; every step of the rollout appears exactly once."""
    if not 1 <= num_mini_batch <= rollout.num_steps:
        raise ValueError(
            f"num_mini_batch={num_mini_batch} but the rollout has {rollout.num_steps} steps: "
            "use 1 <= num_mini_batch <= steps per rollout"
        )
    order, starts, lengths = find_sequences(rollout)
    steps, seq_of_step = _shuffled_step_order(order, starts, lengths, generator)
    sizes = partition_sizes(rollout.num_steps, num_mini_batch)
    offsets = [sum(sizes[:i]) for i in range(num_mini_batch)]
    # Visit the chunks in random order: the cut positions themselves are not random.
    for mb in torch.randperm(num_mini_batch, generator=generator).tolist():
        lo, hi = offsets[mb], offsets[mb] + sizes[mb]
        yield _gather(rollout, steps[lo:hi], seq_of_step[lo:hi], advantages, returns, is_weights)
