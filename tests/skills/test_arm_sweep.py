"""Turning in place must not sweep the arm into loose objects (`skills.arm_sweep`), and HAB
oracle episodes where a turn beside a counter could knock objects off it succeed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rearrange.skills.arm_sweep import sweep_hits


def test_sweep_hits_only_objects_on_the_swept_side():
    # one disc 0.6 m ahead of the base at 0.9-1.1 m; an object 0.6 m to the left, 0.9-1.0 m
    disc = np.array([[0.6, 0.0, 0.1, 0.9, 1.1]])
    obj = np.array([[0.0, 0.6, 0.05, 0.9, 1.0]])
    left = np.linspace(0.05, math.pi / 2, 20)
    assert sweep_hits(disc, obj, 0.0, 0.0, left)
    assert not sweep_hits(disc, obj, 0.0, 0.0, -left)  # the long way round stays clear
    # the same object 0.3 m lower (under the arm) is not hit
    low = obj.copy()
    low[0, 3:] -= 0.3
    assert not sweep_hits(disc, low, 0.0, 0.0, left)


@pytest.fixture(scope="module")
def tidy_episodes():
    from rearrange.tasks.base import load_task_episodes

    eps = load_task_episodes("tidy_house", None, 3, "val", 0)
    return [e for e in eps if e.episode_id.endswith(("0001", "0002"))]


def test_oracle_tidy_house_leaves_counter_objects_in_place(tidy_episodes):
    """tidy_house val 0001/0002, where turning away from a counter can sweep the next target
    (and a placed object) onto the floor: every episode succeeds, nothing lies on the floor."""
    from rearrange.eval.executor import FLOOR_Z, TPSRLExecutor
    from rearrange.eval.runner import plan_all
    from rearrange.skills import make_skill
    from rearrange.tasks import HabConfig, HabEnv

    plans = plan_all(tidy_episodes, "val", False)
    env = HabEnv("tidy_house", HabConfig(obs_preset="state"), split="val", episodes=tidy_episodes)
    skills = {n: make_skill(n, "oracle") for n in ("nav", "pick", "place")}
    try:
        for ep, plan in zip(tidy_episodes, plans):
            env.reset(options={"episode": ep})
            rec = TPSRLExecutor(env, skills).run_episode(plan)
            z = [float(env.sim.object_pos(i)[2]) for i in range(env.sim.num_objects)]
            assert rec.success, (ep.episode_id, rec.failure_reason)
            assert min(z) > FLOOR_Z
    finally:
        env.close()


def test_pick_oracle_carries_the_object_above_counter_height(tidy_episodes):
    """At the rest pose a held object hangs at 0.76-1.03 m, into 0.9 m counters; the pick
    oracle ends at the carry pose instead: still within the 0.15 m EE-rest tolerance."""
    from rearrange.eval.executor import TPSRLExecutor
    from rearrange.eval.runner import plan_all
    from rearrange.sim.apartment import COUNTER_HEIGHT
    from rearrange.sim.placement import RobotClearance
    from rearrange.skills import make_skill
    from rearrange.skills.termination import ee_at_rest
    from rearrange.tasks import HabConfig, HabEnv

    ep = tidy_episodes[0]
    plan = plan_all([ep], "val", False)[0][:2]  # nav, pick
    env = HabEnv("tidy_house", HabConfig(obs_preset="state"), split="val", episodes=[ep])
    skills = {n: make_skill(n, "oracle") for n in ("nav", "pick")}
    try:
        env.reset(options={"episode": ep})
        TPSRLExecutor(env, skills).run_episode(plan)
        sim = env.sim
        held = sim.held_object()
        assert held == plan[1].obj_index and ee_at_rest(sim)
        assert float(sim.object_pos(held)[2]) > COUNTER_HEIGHT + 0.02
        # the stand-pose check sees the object where it is (not at the rest grasp)
        disc = (0.7, 0.0, 0.1, 1.0, 1.2)
        rc = RobotClearance(sim.layout, {}, held_size=(0.05, 0.05, 0.05), held_disc=disc)
        assert tuple(rc.discs[-1]) == disc
    finally:
        env.close()
