"""Inference worker: dynamic batching of env requests and acting with the policy.

Between rollouts the main process is the learner; during collection it is this inference
worker (VER Appendix A.1: no second CUDA context). Batching rule (VER §2.1, reference impl.):
run the policy once at least `min_batch` requests are ready or once the oldest ready request
has waited half the average env step time, on at most `max_batch` requests, lagging
environments (fewest steps this rollout) first, so slow envs are not starved further.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from rearrange.ver_backend.rollout_storage import RolloutStorage
from rearrange.ver_backend.shared_memory import SharedBuffers


@dataclass
class DynamicBatcher:
    """When to run inference and on which requests (pure logic, unit-testable)."""

    min_batch: int
    max_batch: int
    lockstep: bool = False  # DD-PPO: wait for every active env

    def should_infer(
        self, num_ready: int, num_busy: int, waited_s: float, avg_step_s: float
    ) -> bool:
        """`num_busy`: envs still simulating (could join the batch by waiting)."""
        if num_ready == 0:
            return False
        if self.lockstep or num_busy == 0:
            return num_busy == 0
        if num_ready >= self.min_batch:
            return True
        return waited_s >= 0.5 * avg_step_s

    def select(self, ready: Sequence[int], steps_this_rollout: np.ndarray) -> list[int]:
        """Up to `max_batch` of `ready` (in arrival order), fewest steps collected first."""
        limit = len(ready) if self.lockstep else self.max_batch
        order = sorted(range(len(ready)), key=lambda k: (steps_this_rollout[ready[k]], k))
        return [ready[k] for k in order[:limit]]


@dataclass
class StepTimer:
    """Per-env time between sending an action and its result (EMA, for the batching wait)."""

    num_envs: int
    decay: float = 0.9
    sent_at: np.ndarray = field(init=False)
    avg_step_s: float = field(init=False, default=0.01)

    def __post_init__(self) -> None:
        self.sent_at = np.full(self.num_envs, np.nan)

    def sent(self, env_ids: Sequence[int], now: float) -> None:
        self.sent_at[list(env_ids)] = now

    def arrived(self, env_id: int, now: float) -> float | None:
        start = self.sent_at[env_id]
        self.sent_at[env_id] = np.nan
        if np.isnan(start):
            return None
        dt = now - start
        self.avg_step_s = self.decay * self.avg_step_s + (1 - self.decay) * dt
        return dt


class InferenceWorker:
    """Runs the policy on a batch of envs, records the steps and returns the actions."""

    def __init__(self, policy: nn.Module, storage: RolloutStorage, buffers: SharedBuffers):
        self.policy, self.storage, self.buffers = policy, storage, buffers
        self.device = storage.device
        self.batch_sizes: list[int] = []
        self.policy_version = 0

    def batch_obs(self, env_ids: Sequence[int]) -> dict[str, torch.Tensor]:
        ids = np.asarray(env_ids, np.int64)
        return {k: torch.from_numpy(v[ids]).to(self.device) for k, v in self.buffers.obs.items()}

    @torch.no_grad()
    def act(self, env_ids: Sequence[int]) -> None:
        """Act on the envs' current observations; writes actions into shared memory."""
        obs = self.batch_obs(env_ids)
        hidden, prev_action, not_done = self.storage.policy_inputs(env_ids)
        value, action, log_prob, hidden_out = self.policy.act(obs, hidden, prev_action, not_done)
        self.storage.insert(env_ids, obs, value, action, log_prob, hidden_out, self.policy_version)
        self.buffers.actions[np.asarray(env_ids, np.int64)] = action.cpu().numpy()
        self.batch_sizes.append(len(env_ids))

    @torch.no_grad()
    def values(self, env_ids: Sequence[int]) -> dict[int, float]:
        """V of the envs' current observations (bootstrap for envs without a pending step)."""
        if not env_ids:
            return {}
        obs = self.batch_obs(env_ids)
        hidden, prev_action, not_done = self.storage.policy_inputs(env_ids)
        value = self.policy.get_value(obs, hidden, prev_action, not_done)
        return {e: float(v) for e, v in zip(env_ids, value.view(-1).cpu())}


def now() -> float:
    return time.perf_counter()
