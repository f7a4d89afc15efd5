"""Shared builders for the VER system tests."""

from __future__ import annotations

import time

import torch

from rearrange.runtime.env_worker import make_env_pool
from rearrange.runtime.synthetic_env import SyntheticEnvConfig, SyntheticEnvFactory
from rearrange.ver_backend.distributed import DistContext
from rearrange.ver_backend.inference import DynamicBatcher, InferenceWorker
from rearrange.ver_backend.rollout_storage import RolloutStorage
from rearrange.ver_backend.systems import Collector
from ver_backend.tiny_policy import TinyPolicy


def build_collector(system="ver", num_envs=3, rollout_steps=5, serial=True, env_cfg=None, **kw):
    torch.manual_seed(0)
    env_cfg = env_cfg or SyntheticEnvConfig(max_episode_steps=4)
    factory = SyntheticEnvFactory(env_cfg, num_envs)
    pool = make_env_pool(
        factory, num_envs, list(range(num_envs)), serial=serial,
        envs_per_worker=kw.pop("envs_per_worker", 1),
    )  # fmt: skip
    probe = factory(0)
    policy = TinyPolicy(probe.observation_space, probe.action_space)
    storage = RolloutStorage(
        num_envs, rollout_steps, probe.observation_space, probe.action_space, 1, 2
    )
    inference = InferenceWorker(policy, storage, pool.buffers)
    batcher = DynamicBatcher(
        kw.pop("min_batch", 1), kw.pop("max_batch", num_envs), system == "ddppo"
    )
    collector = Collector(pool, storage, inference, system, batcher, DistContext(), **kw)
    return collector, pool, storage


class MisbehavingEnvFactory:
    """Synthetic envs; env `bad_index` calls `misbehave(n)` before each of its steps (n from
    1); picklable for spawn."""

    def __init__(self, num_envs: int, bad_index: int):
        self.inner = SyntheticEnvFactory(SyntheticEnvConfig(), num_envs)
        self.bad_index = bad_index

    def misbehave(self, n: int) -> None:
        raise NotImplementedError

    def __call__(self, index: int):
        env = self.inner(index)
        if index == self.bad_index:
            original, count = env.step, [0]

            def step(action):
                count[0] += 1
                self.misbehave(count[0])
                return original(action)

            env.step = step
        return env


class FailingEnvFactory(MisbehavingEnvFactory):
    """Env `bad_index` raises on its `fail_at`-th step."""

    def __init__(self, num_envs: int, bad_index: int, fail_at: int = 3):
        super().__init__(num_envs, bad_index)
        self.fail_at = fail_at

    def misbehave(self, n: int) -> None:
        if n >= self.fail_at:
            raise ValueError("simulator exploded")


class HangingEnvFactory(MisbehavingEnvFactory):
    """Env `bad_index` sleeps `hang_s` in its `hang_at`-th step (a worker alive but stuck)."""

    def __init__(self, num_envs: int, bad_index: int, hang_at: int = 3, hang_s: float = 30.0):
        super().__init__(num_envs, bad_index)
        self.hang_at, self.hang_s = hang_at, hang_s

    def misbehave(self, n: int) -> None:
        if n == self.hang_at:
            time.sleep(self.hang_s)
