"""A tiny learnable gymnasium env with controllable simulation time.

It stands in for a real simulator in tests and in the systems benchmark: each step sleeps (or
spins for that much CPU time) for a time drawn from a lognormal whose scale differs per
environment, which reproduces the action-level and environment-level straggler effects of
VER §2 without a GPU.

Task (1-D reach): the agent starts at 0 and must move to a goal in [-1, 1]. Observation
`delta` = goal - position, `pos` = position; the action moves by `move_scale · clip(a, -1, 1)`;
reward = `dist_coef` × (decrease of |goal - pos|) - `slack` per step, plus `success_bonus` when
within `success_radius` (the episode ends). Random actions average ~0; reaching is ~+3.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
from gymnasium import spaces


@dataclass
class SyntheticEnvConfig:
    """Timing and task knobs of the synthetic reach env."""

    step_time_ms: float = 0.0
    """Median simulated step time (ms) of the fastest env; 0 = no delay."""
    step_time_sigma: float = 0.0
    """Lognormal sigma of the per-step time (0 = constant step time)."""
    scale_spread: float = 1.0
    """Ratio between the slowest and fastest env's median step time (1 = homogeneous);
    env i of N gets scale spread**(i/(N-1))."""
    busy_wait: bool = False
    """Spin for the step time in CPU time of the env's process instead of sleeping: the step
    costs a fixed amount of CPU work, like a real simulator, so envs compete for cores (with
    more busy envs than free cores a step takes longer than its nominal time)."""
    depth_size: int = 0
    """Also observe a `depth` image [d, d, 1] (a ramp shifted by the position: costs what a
    rendered depth image costs to move, and its content is not needed to learn) when > 0,
    so the depth policy can run on a zero-cost env (benchmarks/trainer_ceiling)."""
    max_episode_steps: int = 20
    move_scale: float = 0.25
    success_radius: float = 0.1
    success_bonus: float = 2.0
    dist_coef: float = 2.0
    slack: float = 0.01


def env_time_scale(index: int, num_envs: int, spread: float) -> float:
    """Median step-time multiplier of env `index`: geometric from 1 to `spread`."""
    if num_envs <= 1 or spread == 1.0:
        return 1.0
    return float(spread ** (index / (num_envs - 1)))


class SyntheticReachEnv(gym.Env):
    """1-D reach with a Dict observation, Box action and a configurable step time."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, config: SyntheticEnvConfig | None = None, time_scale: float = 1.0):
        self.config = config or SyntheticEnvConfig()
        self.time_scale = time_scale
        keys = {
            "delta": spaces.Box(-2.0, 2.0, (1,), np.float32),
            "pos": spaces.Box(-2.0, 2.0, (1,), np.float32),
        }
        d = self.config.depth_size
        if d > 0:
            keys["depth"] = spaces.Box(0.0, 10.0, (d, d, 1), np.float32)
            self._ramp = np.linspace(0.0, 5.0, d * d, dtype=np.float32).reshape(d, d, 1)
        self.observation_space = spaces.Dict(keys)
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self._pos = 0.0
        self._goal = 0.0
        self._t = 0
        self._dist = 0.0

    def _obs(self) -> dict[str, np.ndarray]:
        obs = {
            "delta": np.array([self._goal - self._pos], np.float32),
            "pos": np.array([self._pos], np.float32),
        }
        if self.config.depth_size > 0:
            obs["depth"] = self._ramp + np.float32(2.0 + self._pos)
        return obs

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._pos = 0.0
        self._goal = float(self.np_random.uniform(-1.0, 1.0))
        self._t = 0
        self._dist = abs(self._goal)
        return self._obs(), {}

    def _simulate_time(self) -> None:
        cfg = self.config
        if cfg.step_time_ms <= 0:
            return
        seconds = cfg.step_time_ms * 1e-3 * self.time_scale
        if cfg.step_time_sigma > 0:
            seconds *= math.exp(self.np_random.normal(0.0, cfg.step_time_sigma))
        if cfg.busy_wait:
            end = time.thread_time() + seconds
            while time.thread_time() < end:
                pass
        else:
            time.sleep(seconds)

    def step(self, action):
        self._simulate_time()
        cfg = self.config
        move = float(np.clip(np.asarray(action, np.float32).reshape(-1)[0], -1.0, 1.0))
        self._pos = float(np.clip(self._pos + cfg.move_scale * move, -2.0, 2.0))
        self._t += 1
        dist = abs(self._goal - self._pos)
        success = dist < cfg.success_radius
        terms = {
            "dist": cfg.dist_coef * (self._dist - dist),
            "slack": -cfg.slack,
            "success": cfg.success_bonus if success else 0.0,
        }
        self._dist = dist
        reward = sum(terms.values())
        truncated = (not success) and self._t >= cfg.max_episode_steps
        info = {"success": success, "reward_terms": terms}
        return self._obs(), reward, success, truncated, info

    def render(self):
        frame = np.zeros((16, 64, 3), np.uint8)
        frame[:, int(np.clip((self._pos + 2) * 16, 0, 63))] = 255
        return frame


@dataclass
class SyntheticEnvFactory:
    """Picklable factory: env `index` of `num_envs` (heterogeneous scale by index)."""

    config: SyntheticEnvConfig
    num_envs: int

    def __call__(self, index: int) -> SyntheticReachEnv:
        scale = env_time_scale(index, self.num_envs, self.config.scale_spread)
        return SyntheticReachEnv(self.config, time_scale=scale)
