"""Shared-memory replay ring: one row per Actor step, one column per env.

Layout [rows C, envs N, ...]: row `t % C` holds absolute step t of every env (obs, action,
reward, terminated, truncated, next_obs). The Actor writes a whole row, then advances
`head` (steps written); the learners map the same memory and read only rows below `head`,
so a sample never sees a half-written row. Keeping each env's steps in time order makes the
n-step look-ahead one index away (t+k) and the wrap-around a modulo.

When full, the oldest `guard` rows are not sampled: the Actor overwrites them next, possibly
while a learner is reading (it runs at most ~1 row ahead under ratio control).

`next_obs` is the observation after the step: the next step's obs within an episode, the
real final observation at a time-limit truncation (the env auto-resets), unused at a
termination (no bootstrap).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from rearrange.pql.shared_arrays import SharedArrays
from rearrange.runtime.shared_memory import ArraySpec

GUARD_ROWS = 4


class TransitionRows(NamedTuple):
    """One Actor step of all N envs (what `ReplayBuffer.add` takes)."""

    obs: np.ndarray  # [N, D]
    actions: np.ndarray  # [N, A]
    rewards: np.ndarray  # [N]
    terminated: np.ndarray  # [N] bool
    truncated: np.ndarray  # [N] bool
    next_obs: np.ndarray  # [N, D]


class NStepSample(NamedTuple):
    """A V-learner batch: B sampled steps with their next n steps (numpy)."""

    obs: np.ndarray  # [B, D] s_t
    actions: np.ndarray  # [B, A] a_t
    rewards: np.ndarray  # [B, n] r_{t+k}
    terminated: np.ndarray  # [B, n] bool
    truncated: np.ndarray  # [B, n] bool
    available: np.ndarray  # [B, n] bool: step t+k has been written
    next_obs: np.ndarray  # [B, n, D] next_obs of step t+k (bootstrap candidates)


@dataclass(frozen=True)
class ReplaySpec:
    """Picklable handle: what a learner process needs to attach the buffer."""

    arrays: dict[str, ArraySpec]
    rows: int
    num_envs: int


class ReplayBuffer:
    def __init__(self, arrays: SharedArrays, rows: int, num_envs: int):
        self.arrays, self.rows, self.num_envs = arrays, rows, num_envs
        a = arrays.arrays
        self.obs, self.next_obs, self.actions = a["obs"], a["next_obs"], a["actions"]
        self.rewards, self.terminated, self.truncated = (
            a["rewards"],
            a["terminated"],
            a["truncated"],
        )
        self._head = a["head"]

    @classmethod
    def create(
        cls, rows: int, num_envs: int, obs_dim: int, act_dim: int, shared: bool = True
    ) -> ReplayBuffer:
        layout = {
            "obs": ((rows, num_envs, obs_dim), np.float32),
            "next_obs": ((rows, num_envs, obs_dim), np.float32),
            "actions": ((rows, num_envs, act_dim), np.float32),
            "rewards": ((rows, num_envs), np.float32),
            "terminated": ((rows, num_envs), np.bool_),
            "truncated": ((rows, num_envs), np.bool_),
            "head": ((1,), np.int64),
        }
        return cls(SharedArrays.create(layout, shared), rows, num_envs)

    @classmethod
    def attach(cls, spec: ReplaySpec) -> ReplayBuffer:
        return cls(SharedArrays.attach(spec.arrays), spec.rows, spec.num_envs)

    @property
    def spec(self) -> ReplaySpec:
        return ReplaySpec(self.arrays.specs, self.rows, self.num_envs)

    @property
    def head(self) -> int:
        """Absolute number of rows (Actor steps) written so far."""
        return int(self._head[0])

    def __len__(self) -> int:
        """Transitions currently held."""
        return min(self.head, self.rows) * self.num_envs

    def add(self, rows: TransitionRows) -> None:
        """Write one Actor step of all envs, then publish it by advancing `head`."""
        r = self.head % self.rows
        self.obs[r], self.actions[r], self.next_obs[r] = rows.obs, rows.actions, rows.next_obs
        self.rewards[r], self.terminated[r], self.truncated[r] = (
            rows.rewards,
            rows.terminated,
            rows.truncated,
        )
        self._head[0] = self.head + 1

    def set_head(self, head: int) -> None:
        """Set the rows written so far: restoring a saved buffer (`replay_io.load_replay`)
        before any learner reads it."""
        self._head[0] = head

    def _sample_steps(self, batch: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(absolute step t [B], env [B]) uniformly over the readable rows."""
        head = self.head
        if head == 0:
            raise RuntimeError("replay buffer is empty: sample after the warm-up")
        low = head - self.rows + GUARD_ROWS if head >= self.rows else 0
        t = rng.integers(low, head, batch)
        env = rng.integers(0, self.num_envs, batch)
        return t, env

    def sample_obs(self, batch: int, rng: np.random.Generator) -> np.ndarray:
        """[B, D] states (what the P-learner needs)."""
        t, env = self._sample_steps(batch, rng)
        return self.obs[t % self.rows, env]

    def sample_nstep(self, batch: int, nstep: int, rng: np.random.Generator) -> NStepSample:
        """B steps with the rewards, flags and next observations of their next `nstep` steps."""
        t, env = self._sample_steps(batch, rng)
        head = self.head
        future = t[:, None] + np.arange(nstep)[None, :]
        rows, cols = future % self.rows, env[:, None]
        return NStepSample(
            obs=self.obs[t % self.rows, env],
            actions=self.actions[t % self.rows, env],
            rewards=self.rewards[rows, cols],
            terminated=self.terminated[rows, cols],
            truncated=self.truncated[rows, cols],
            available=future < head,
            next_obs=self.next_obs[rows, cols],
        )

    def close(self) -> None:
        self.arrays.close()
