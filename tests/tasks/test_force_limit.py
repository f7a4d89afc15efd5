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


def test_rises_accumulate_as_habitats_robot_force_until_the_limit():
    meter = ForceMeter(ForceLimit(max_accum=100.0, min_force=20.0))
    # 10: the reference; 50: +40 counts; 80: +30 counts; 95: +15 <= 20 adds nothing and
    # keeps the reference at 80; 80 (steady): nothing; 0: a drop lowers the reference
    steps = [10.0, 50.0, 80.0, 95.0, 80.0, 0.0]
    assert not any(meter.update(f) for f in steps)
    assert meter.accum == pytest.approx(40.0 + 30.0)
    assert meter.update(31.0)  # +31 from 0: 101 > 100
    assert meter.update(0.0) and meter.peak == 95.0  # stays exceeded
    meter.reset()
    assert (meter.accum, meter.peak, meter.exceeded) == (0.0, 0.0, False)
    assert not meter.update(500.0)  # after a reset the first reading is the reference again


def test_instant_limit_and_limits_turned_off():
    meter = ForceMeter(ForceLimit(max_accum=-1.0, max_instant=500.0))
    assert not meter.update(499.0) and not meter.update(500.0)
    assert meter.update(501.0)
    off = ForceMeter(ForceLimit(max_accum=0.0, max_instant=-1.0))
    assert not any(off.update(f) for f in (0.0, 1e9, 0.0, 1e9))
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
    forces = iter([0.0, 520.0, 0.0, 520.0])  # bumping: +520 N, off, +520 N
    sim.on_step = lambda s: setattr(s, "force", next(forces))
    for accum in (0.0, 520.0, 520.0):
        _, _, term, _, info = env.step(ZERO8)
        assert not term and info["accum_force"] == pytest.approx(accum)
        assert info["reward_terms"]["force_end"] == 0.0
    _, reward, term, trunc, info = env.step(ZERO8)  # 1040 N > 1000 N
    assert term and not trunc and not info["success"] and info["excessive_force"]
    assert info["reward_terms"]["force_end"] == -1.0  # RewardConfig.force_end
    assert reward == pytest.approx(sum(info["reward_terms"].values()))
    assert failure_cause("terminated", info) == EXCESSIVE_FORCE


def test_a_steady_contact_counts_once():
    env, sim = _pick(ForceLimit(max_accum=1000.0))
    sim.on_step = lambda s: setattr(s, "force", 600.0)
    for _ in range(20):  # leaning at 600 N: the first reading is the reference, no rise
        _, _, term, _, info = env.step(ZERO8)
        assert not term
    assert info["accum_force"] == 0.0
    env.reset()  # a new episode starts from zero
    sim.on_step = None
    sim.force = 0.0
    _, _, term, _, info = env.step(ZERO8)
    assert info["accum_force"] == 0.0 and not term


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
    sim.force, sim.static_depth = 0.0, 0.004
    env.apply_action("pick", ZERO8)  # the reference
    assert not env.force_exceeded and env.max_depth == pytest.approx(0.004)
    sim.force = 120.0
    env.apply_action("place", ZERO8)  # +120 N
    sim.force = 0.0
    env.apply_action("place", ZERO8)  # a drop: the reference is 0 again
    assert not env.force_exceeded and env.force.accum == pytest.approx(120.0)
    sim.force, sim.static_depth = 140.0, 0.001
    env.apply_action("nav", np.zeros(3, dtype=np.float32))  # 120 + 140 N > 250
    assert env.force_exceeded and env.max_depth == pytest.approx(0.004)
    env.reset(seed=0)
    assert not env.force_exceeded and env.force.accum == 0.0
