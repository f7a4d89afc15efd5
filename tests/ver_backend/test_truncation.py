"""Truncated episodes: env workers pass the final observation through shared memory and the
collector stores V(final observation) with the truncated step (issue 11, item 8)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rearrange.runtime.env_worker import EnvRunner
from rearrange.runtime.shared_memory import create_buffers
from rearrange.runtime.synthetic_env import SyntheticEnvConfig, SyntheticReachEnv
from ver_backend.helpers import build_collector


def test_runner_writes_the_final_observation_before_the_reset():
    env = SyntheticReachEnv(SyntheticEnvConfig(max_episode_steps=2, success_radius=0.0))
    buf = create_buffers(env.observation_space, env.action_space, 1, shared=False)
    runner = EnvRunner(0, env, buf)
    runner.reset(seed=3)
    goal = float(buf.obs["delta"][0, 0])  # delta = goal - 0
    buf.actions[0] = 1.0
    runner.step()
    assert not buf.scalars["truncated"][0]
    runner.step()  # second step hits the time limit
    assert buf.scalars["truncated"][0] and not buf.scalars["terminated"][0]
    # final observation: position 0.5 after two moves of 0.25; the live row holds the reset
    assert buf.final_obs["pos"][0, 0] == pytest.approx(0.5)
    assert buf.final_obs["delta"][0, 0] == pytest.approx(goal - 0.5)
    assert buf.obs["pos"][0, 0] == 0.0


def final_obs_of(rollout, i, move_scale=0.25):
    """The synthetic env's observation after step i's action (before its auto-reset)."""
    pos = float(rollout.obs["pos"][i, 0])
    delta = float(rollout.obs["delta"][i, 0])
    new_pos = float(np.clip(pos + move_scale * np.clip(float(rollout.actions[i, 0]), -1, 1), -2, 2))
    return {
        "delta": torch.tensor([[delta - (new_pos - pos)]], dtype=torch.float32),
        "pos": torch.tensor([[new_pos]], dtype=torch.float32),
    }


@pytest.mark.parametrize("serial", [True, False])
def test_collector_stores_the_value_of_the_final_observation(serial):
    # success impossible: every episode ends by the time limit after 3 steps
    cfg = SyntheticEnvConfig(max_episode_steps=3, success_radius=0.0)
    collector, pool, storage = build_collector("ver", 2, 6, serial=serial, env_cfg=cfg)
    try:
        collector.collect(0)
        rollout = storage.build_rollout(collector.bootstrap_values())
        policy = collector.inference.policy
        truncated = torch.nonzero(rollout.truncated).view(-1).tolist()
        assert len(truncated) >= 2
        assert torch.equal(rollout.truncated, rollout.dones)  # no terminations here
        for i in truncated:
            obs = final_obs_of(rollout, i)
            with torch.no_grad():
                expected = float(policy.get_value(obs, None, None, None))
            assert float(rollout.final_values[i]) == pytest.approx(expected, abs=1e-5)
        assert not bool(rollout.final_values[~rollout.truncated].any())
    finally:
        pool.close()
