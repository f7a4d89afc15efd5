"""The Actor (PQL §3.1, Algorithm 1): steps all N env workers in lockstep with the mixed-
exploration policy and writes each step, one row per step, into the replay buffer.

The env workers and their shared-memory buffers are the training runtime's
(`runtime/env_worker.py`): the Actor writes actions into the shared `actions` array,
sends STEP to every worker and reads obs/reward/flags (and the final observation of a
truncated episode) back from shared memory. Its policy is a local copy of the P-learner's,
pulled before every step; it also keeps the observation statistics and publishes them.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from rearrange.pql.exploration import noisy_actions
from rearrange.pql.networks import RunningMeanStd
from rearrange.pql.param_sync import VectorSlot, pull
from rearrange.pql.policy import PQLActorPolicy, flatten_obs
from rearrange.pql.replay import ReplayBuffer, TransitionRows
from rearrange.runtime.env_worker import stuck_error


class Actor:
    def __init__(
        self,
        pool: Any,
        policy: PQLActorPolicy,
        replay: ReplayBuffer,
        sigmas: np.ndarray,
        rng: np.random.Generator,
        obs_stats: RunningMeanStd | None,
        policy_slot: VectorSlot,
        obs_stats_slot: VectorSlot,
        worker_timeout_s: float = 120.0,
    ):
        self.pool, self.policy, self.replay = pool, policy, replay
        self.sigmas, self.rng, self.obs_stats = sigmas, rng, obs_stats
        self.policy_slot, self.obs_stats_slot = policy_slot, obs_stats_slot
        self.worker_timeout_s = worker_timeout_s
        self.num_envs = pool.num_envs
        self.policy_version = 0
        self.busy_s = 0.0
        self._wait_all()  # the workers' first observations (after their reset)
        self.obs = self._read_obs()
        self._observe(self.obs)

    def _read_obs(self, final: bool = False) -> np.ndarray:
        buffers = self.pool.buffers
        return flatten_obs(buffers.final_obs if final else buffers.obs, self.policy.layout)

    def _observe(self, obs: np.ndarray) -> None:
        """Update and publish the observation statistics (and the local policy's copy)."""
        if self.obs_stats is None:
            return
        self.obs_stats.update(obs)
        packed = self.obs_stats.packed()
        self.obs_stats_slot.write(packed)
        self.policy.obs_norm.set_stats(packed)

    def _wait_all(self) -> list[dict[str, Any]]:
        """Collect one result from every env; their finished-episode summaries."""
        pending, episodes = set(range(self.num_envs)), []
        last = time.monotonic()
        while pending:
            results = self.pool.poll(timeout=1.0, limit=self.num_envs)
            for r in results:
                pending.discard(r.env_id)
                if r.episode is not None:
                    episodes.append(r.episode)
            if results:
                last = time.monotonic()
            elif time.monotonic() - last > self.worker_timeout_s:
                raise stuck_error(self.pool, sorted(pending), self.worker_timeout_s)
            self.pool.check_alive()
        return episodes

    def sync_policy(self) -> None:
        """Pull the P-learner's newest policy into the local (deployable) copy."""
        self.policy_version = pull(self.policy_slot, self.policy.actor, self.policy_version)

    def actions(self, random: bool) -> np.ndarray:
        """[N, A] actions: uniform in [-1, 1] (warm-up) or π(s) + mixed noise."""
        if random:
            shape = (self.num_envs, self.policy.act_dim)
            return self.rng.uniform(-1.0, 1.0, shape).astype(np.float32)
        self.sync_policy()
        with torch.no_grad():
            mean = self.policy(torch.from_numpy(self.obs)).numpy()
        return noisy_actions(mean, self.sigmas, self.rng)

    def step(self, random: bool = False) -> list[dict[str, Any]]:
        """One step of every env; the row goes to the replay. Returns finished episodes."""
        start = time.perf_counter()
        actions = self.actions(random)
        buffers = self.pool.buffers
        buffers.actions[:] = actions
        self.pool.step(range(self.num_envs))
        episodes = self._wait_all()
        sc = buffers.scalars
        terminated, truncated = sc["terminated"].copy(), sc["truncated"].copy()
        new_obs = self._read_obs()
        next_obs = new_obs.copy()
        cut = truncated & ~terminated  # the env reset: its real last observation is final_obs
        if cut.any():
            next_obs[cut] = self._read_obs(final=True)[cut]
        rewards = sc["reward"].astype(np.float32)
        self.replay.add(TransitionRows(self.obs, actions, rewards, terminated, truncated, next_obs))
        self.obs = new_obs
        self._observe(new_obs)
        self.busy_s += time.perf_counter() - start
        return episodes
