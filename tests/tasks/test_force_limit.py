"""Habitat's force_terminate: the meter's arithmetic, and episodes ended by it (skill env,
skill rollout, HAB env) on FakeSim transitions with forces set by hand."""

from __future__ import annotations

import numpy as np
import pytest
from tasks_fakes import FakeSim, make_episode

from rearrange.skills.rollout import failure_cause
from rearrange.tasks import HabConfig, HabEnv, default_task_config, make_env
from rearrange.tasks.force_limit import EXCESSIVE_FORCE, ForceLimit, ForceMeter

ZERO8 = np.zeros(8, dtype=np.float32)


def test_only_force_above_the_minimum_accumulates_until_the_limit():
    meter = ForceMeter(ForceLimit(max_accum=100.0, min_force=20.0))
    assert [meter.update(f) for f in (10.0, 50.0, 80.0)] == [False, False, False]
    assert meter.accum == pytest.approx(0.0 + 30.0 + 60.0)
    assert meter.update(31.0)  # 90 + 11 = 101 > 100
    assert meter.update(0.0) and meter.peak == 80.0  # stays exceeded
    meter.reset()
    assert (meter.accum, meter.peak, meter.exceeded) == (0.0, 0.0, False)


def test_instant_limit_and_limits_turned_off():
    meter = ForceMeter(ForceLimit(max_accum=-1.0, max_instant=500.0))
    assert not meter.update(499.0) and not meter.update(500.0)
    assert meter.update(501.0)
    off = ForceMeter(ForceLimit(max_accum=0.0, max_instant=-1.0))
    assert not any(off.update(1e9) for _ in range(3))
    with pytest.raises(ValueError, match="min_force"):
        ForceLimit(min_force=-1.0)


def _pick(limit: ForceLimit):
    config = default_task_config("pick", obs_preset="state", force_limit=limit)
    sim = FakeSim()
    env = make_env("pick", config, "train", 0, sim=sim, episodes=[make_episode("pick")])
    env.reset(seed=0)
    return env, sim


def test_skill_episode_ends_as_excessive_force_with_habitats_end_penalty():
    env, sim = _pick(ForceLimit(max_accum=1000.0))
    sim.force = 520.0  # 500 N above the 20 N floor per step
    _, _, term, _, info = env.step(ZERO8)
    assert not term and info["accum_force"] == pytest.approx(500.0)
    assert info["reward_terms"]["force_end"] == 0.0
    _, reward, term, trunc, info = env.step(ZERO8)  # 1000 N: not above the limit yet
    assert not term
    _, reward, term, trunc, info = env.step(ZERO8)  # 1500 N
    assert term and not trunc and not info["success"] and info["excessive_force"]
    assert info["reward_terms"]["force_end"] == -1.0  # RewardConfig.force_end
    assert reward == pytest.approx(sum(info["reward_terms"].values()))
    assert failure_cause("terminated", info) == EXCESSIVE_FORCE
    env.reset()  # FakeSim.reset zeroes its force
    sim.force = 520.0
    _, _, term, _, info = env.step(ZERO8)  # a new episode starts from zero
    assert info["accum_force"] == pytest.approx(500.0) and not term


def test_hab_env_meters_the_whole_episode_across_skills():
    ep = make_episode("tidy_house")
    ep.split = "val"
    sim = FakeSim()
    env = HabEnv(
        "tidy_house",
        HabConfig(obs_preset="state", force_limit=ForceLimit(max_accum=250.0)),
        "val",
        0,
        sim=sim,
        episodes=[ep],
    )
    env.reset(seed=0)
    sim.force, sim.static_depth = 120.0, 0.004
    env.apply_action("pick", ZERO8)
    assert not env.force_exceeded and env.max_depth == pytest.approx(0.004)
    env.apply_action("place", ZERO8)  # 100 + 100 N
    assert not env.force_exceeded
    sim.static_depth = 0.001
    env.apply_action("nav", np.zeros(3, dtype=np.float32))  # 300 N > 250
    assert env.force_exceeded and env.max_depth == pytest.approx(0.004)
    env.reset(seed=0)
    assert not env.force_exceeded and env.force.accum == 0.0
