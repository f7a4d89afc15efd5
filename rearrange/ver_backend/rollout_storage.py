"""VER rollout storage: one flat buffer of (T+1)·N step slots.

A slot is allocated when the policy acts on an observation (the step becomes *pending*: its
action is in flight) and *completed* when the env's result arrives: its reward, done flag and,
for a time-limit end, the value of the episode's final observation are written back into that
slot. A rollout ends after T·N completions; each env then still has
at most one pending slot, which `start_next_rollout` moves to the front of the buffer, so the
in-flight step is collected by the next rollout (no step lost or duplicated, VER §2.2).
The learner only ever sees completed slots, in slot (= collection) order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from gymnasium import spaces
from torch import Tensor

from rearrange.ver_backend.rollout import STEP_TENSOR_FIELDS, Rollout, index_obs

_STEP_FIELDS = ("actions", "prev_actions", "log_probs", "values", "rewards", "dones",
                "hidden_in", "episode_starts", "env_ids", "episode_ids", "step_ids",
                "policy_versions", "truncated", "final_values", "complete")  # fmt: skip


def _torch_dtype(dtype: np.dtype) -> torch.dtype:
    return torch.from_numpy(np.zeros(0, dtype)).dtype


class RolloutStorage:
    """Flat VER buffer plus each env's recurrent state and pending slot."""

    def __init__(
        self,
        num_envs: int,
        rollout_steps: int,
        observation_space: spaces.Dict,
        action_space: spaces.Box,
        num_recurrent_layers: int,
        hidden_size: int,
        device: torch.device | str = "cpu",
    ):
        n, a = num_envs, int(np.prod(action_space.shape))
        self.num_envs, self.rollout_steps, self.device = n, rollout_steps, torch.device(device)
        self.capacity = (rollout_steps + 1) * n
        c, dev = self.capacity, self.device
        self.obs = {
            k: torch.zeros((c, *s.shape), dtype=_torch_dtype(s.dtype), device=dev)
            for k, s in observation_space.items()
        }
        f32, i64, b = torch.float32, torch.long, torch.bool
        self.actions = torch.zeros(c, a, dtype=f32, device=dev)
        self.prev_actions = torch.zeros(c, a, dtype=f32, device=dev)
        self.log_probs = torch.zeros(c, dtype=f32, device=dev)
        self.values = torch.zeros(c, dtype=f32, device=dev)
        self.rewards = torch.zeros(c, dtype=f32, device=dev)
        self.dones = torch.zeros(c, dtype=b, device=dev)
        self.hidden_in = torch.zeros(c, num_recurrent_layers, hidden_size, dtype=f32, device=dev)
        self.episode_starts = torch.zeros(c, dtype=b, device=dev)
        self.env_ids = torch.zeros(c, dtype=i64, device=dev)
        self.episode_ids = torch.zeros(c, dtype=i64, device=dev)
        self.step_ids = torch.zeros(c, dtype=i64, device=dev)
        self.policy_versions = torch.zeros(c, dtype=i64, device=dev)
        self.complete = torch.zeros(c, dtype=b, device=dev)
        self.truncated = torch.zeros(c, dtype=b, device=dev)
        self.final_values = torch.zeros(c, dtype=f32, device=dev)
        # Per-env state carried across rollouts.
        self.hidden = torch.zeros(n, num_recurrent_layers, hidden_size, dtype=f32, device=dev)
        self.prev_action = torch.zeros(n, a, dtype=f32, device=dev)
        self.not_done = torch.zeros(n, dtype=b, device=dev)  # False: next obs starts an episode
        self.pending = np.full(n, -1, np.int64)  # slot whose action is in flight, -1 if none
        self.episode_id = np.zeros(n, np.int64)
        self.next_step_id = np.zeros(n, np.int64)
        self.steps_this_rollout = np.zeros(n, np.int64)
        self.total_collected = np.zeros(n, np.int64)
        self.num_used = 0
        self.num_complete = 0

    # ------------------------------------------------------------------ collection
    def has_pending(self, env_id: int) -> bool:
        return self.pending[env_id] >= 0

    def policy_inputs(self, env_ids: Sequence[int]) -> tuple[Tensor, Tensor, Tensor]:
        """(hidden [B,R,H], prev_action [B,A], not_done [B]) to act on these envs' next obs."""
        idx = torch.as_tensor(env_ids, dtype=torch.long, device=self.device)
        return self.hidden[idx], self.prev_action[idx], self.not_done[idx]

    def insert(
        self,
        env_ids: Sequence[int],
        obs: dict[str, Tensor],
        values: Tensor,
        actions: Tensor,
        log_probs: Tensor,
        hidden_out: Tensor,
        policy_version: int,
    ) -> None:
        """Allocate pending slots for the policy's output on `env_ids`' current observations."""
        ids = np.asarray(env_ids, np.int64)
        if np.any(self.pending[ids] >= 0):
            bad = ids[self.pending[ids] >= 0].tolist()
            raise RuntimeError(f"envs {bad} already have an in-flight step: complete it first")
        b = len(ids)
        if self.num_used + b > self.capacity:
            raise RuntimeError(f"rollout buffer full ({self.capacity} slots): rollout not ended")
        slots = torch.arange(self.num_used, self.num_used + b, device=self.device)
        e = torch.as_tensor(ids, device=self.device)
        for key, value in obs.items():
            self.obs[key][slots] = value.to(self.device)
        starts = ~self.not_done[e]
        keep = self.not_done[e].to(torch.float32)
        self.hidden_in[slots] = self.hidden[e] * keep.view(-1, 1, 1)
        self.prev_actions[slots] = self.prev_action[e] * keep.view(-1, 1)
        self.episode_starts[slots] = starts
        self.actions[slots] = actions.to(self.device, torch.float32)
        self.log_probs[slots] = log_probs.to(self.device, torch.float32).view(-1)
        self.values[slots] = values.to(self.device, torch.float32).view(-1)
        self.env_ids[slots] = e
        self.episode_ids[slots] = torch.as_tensor(self.episode_id[ids], device=self.device)
        self.step_ids[slots] = torch.as_tensor(self.next_step_id[ids], device=self.device)
        self.policy_versions[slots] = policy_version
        self.complete[slots] = False
        self.rewards[slots] = 0.0
        self.dones[slots] = False
        self.truncated[slots] = False
        self.final_values[slots] = 0.0
        self.hidden[e] = hidden_out.to(self.device, torch.float32)
        self.prev_action[e] = self.actions[slots]
        self.not_done[e] = True
        self.pending[ids] = np.arange(self.num_used, self.num_used + b)
        self.next_step_id[ids] += 1
        self.num_used += b

    def complete_step(
        self,
        env_id: int,
        reward: float,
        done: bool,
        truncated: bool = False,
        final_value: float = 0.0,
    ) -> None:
        """The env's in-flight step finished: write its reward/done back into its slot.

        `truncated`: the episode ended by a time limit (not terminated); `final_value` is
        V(final observation), which its return bootstraps from."""
        slot = int(self.pending[env_id])
        if slot < 0:
            raise RuntimeError(f"env {env_id} has no in-flight step to complete")
        if truncated and not done:
            raise ValueError(f"env {env_id}: a truncated step ends its episode: pass done=True")
        self.rewards[slot] = float(reward)
        self.dones[slot] = bool(done)
        self.truncated[slot] = bool(truncated)
        self.final_values[slot] = float(final_value) if truncated else 0.0
        self.complete[slot] = True
        self.pending[env_id] = -1
        self.num_complete += 1
        self.steps_this_rollout[env_id] += 1
        self.total_collected[env_id] += 1
        if done:
            self.not_done[env_id] = False
            self.episode_id[env_id] += 1

    # ------------------------------------------------------------------ hand-off
    def completed_indices(self) -> Tensor:
        return torch.nonzero(self.complete[: self.num_used]).view(-1)

    def bootstrap_values(self, values_without_pending: dict[int, float] | None = None) -> Tensor:
        """[N]: value of each env's pending step (or the given value for envs without one);
        0 where the env's last completed step ended its episode."""
        out = torch.zeros(self.num_envs, dtype=torch.float32, device=self.device)
        given = values_without_pending or {}
        for e in range(self.num_envs):
            if not bool(self.not_done[e]) and self.pending[e] < 0:
                continue
            if self.pending[e] >= 0:
                slot = int(self.pending[e])
                out[e] = 0.0 if bool(self.episode_starts[slot]) else self.values[slot]
            else:
                out[e] = float(given.get(e, 0.0))
        return out

    def build_rollout(self, bootstrap_values: Tensor, stale: Rollout | None = None) -> Rollout:
        """The completed steps as a contract §6 Rollout (copies; the buffer can be reused).

        `stale` (preemption fill) is a set of older steps of the same envs, placed first:
        they come right before this rollout's steps in each env's time line."""
        idx = self.completed_indices()
        rollout = Rollout(
            obs=index_obs(self.obs, idx),
            **{name: getattr(self, name)[idx] for name in STEP_TENSOR_FIELDS},
            bootstrap_values=bootstrap_values,
            is_stale=torch.zeros(idx.numel(), dtype=torch.bool, device=self.device),
        )
        return rollout if stale is None else concat_rollouts(stale, rollout)

    def completed_step_ids(self) -> tuple[Tensor, Tensor, Tensor]:
        """(env_ids, episode_ids, step_ids) of the completed steps, for checks and tests."""
        idx = self.completed_indices()
        return self.env_ids[idx], self.episode_ids[idx], self.step_ids[idx]

    def start_next_rollout(self) -> None:
        """Move every pending (in-flight) slot to the front and forget completed ones."""
        envs = np.nonzero(self.pending >= 0)[0]
        src = torch.as_tensor(self.pending[envs], device=self.device)
        dst = torch.arange(len(envs), device=self.device)
        for key in self.obs:
            self.obs[key][dst] = self.obs[key][src]
        for name in _STEP_FIELDS:
            tensor = getattr(self, name)
            tensor[dst] = tensor[src]
        self.pending[envs] = np.arange(len(envs))
        self.num_used = len(envs)
        self.num_complete = 0
        self.steps_this_rollout[:] = 0


def concat_rollouts(first: Rollout, second: Rollout) -> Rollout:
    """Steps of `first` (marked stale) followed by `second`; `second`'s bootstrap values."""

    def cat(a: Tensor, b: Tensor) -> Tensor:
        return torch.cat([a, b.to(a.device)], 0)

    return Rollout(
        obs={k: cat(first.obs[k], second.obs[k]) for k in second.obs},
        **{name: cat(getattr(first, name), getattr(second, name)) for name in STEP_TENSOR_FIELDS},
        bootstrap_values=second.bootstrap_values,
        is_stale=cat(torch.ones_like(first.is_stale), second.is_stale),
    )


def stale_fill(previous: Rollout | None, num_steps: int) -> Rollout | None:
    """The last `num_steps` fresh steps of `previous` (per env, a suffix of its time line, so
    GAE over them stays exact), or None if there is nothing to fill."""
    if previous is None or num_steps <= 0:
        return None
    fresh = torch.nonzero(~previous.is_stale).view(-1)
    take = fresh[-num_steps:]
    if take.numel() == 0:
        return None
    filled = previous.select_steps(take)
    filled.is_stale = torch.ones(take.numel(), dtype=torch.bool, device=take.device)
    return filled
