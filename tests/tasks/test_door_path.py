"""The EE->rest distance round an open door (tasks/door_path.py): hand-computed geometry,
then the scripted open_fridge, whose released gripper starts behind the panel."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rearrange.tasks.door_path import distance_round, segments_cross

WALL = (np.array([0.0, 0.0]), np.array([1.0, 0.0]))  # hinge at the origin, tip at x = 1


def test_segments_cross_only_when_they_pass_through_each_other():
    a, b = WALL
    assert segments_cross(np.array([0.5, 1.0]), np.array([0.5, -1.0]), a, b)
    assert not segments_cross(np.array([2.0, 1.0]), np.array([2.0, -1.0]), a, b)  # past the tip
    assert not segments_cross(np.array([0.5, 1.0]), np.array([0.5, 0.5]), a, b)  # same side
    assert not segments_cross(np.array([1.0, 1.0]), np.array([1.0, -1.0]), a, b)  # through the tip


def test_the_way_behind_the_wall_goes_round_its_tip():
    p, q = np.array([0.5, 1.0, 0.0]), np.array([0.5, -1.0, 0.0])
    assert distance_round(p, q, *WALL) == pytest.approx(2 * math.sqrt(0.25 + 1.0))
    q_up = np.array([0.5, -1.0, 1.0])  # the height change spread along the way round
    assert distance_round(p, q_up, *WALL) == pytest.approx(math.hypot(2 * math.sqrt(1.25), 1.0))


def test_a_clear_line_is_the_straight_distance_and_the_two_meet_at_the_tip():
    p, q = np.array([2.0, 1.0, 0.0]), np.array([2.0, -1.0, 0.5])
    assert distance_round(p, q, *WALL) == pytest.approx(np.linalg.norm(q - p))
    through_tip = distance_round(np.array([1.0, 1.0, 0.0]), np.array([1.0, -1.0, 0.0]), *WALL)
    just_inside = distance_round(np.array([0.999, 1.0, 0.0]), np.array([0.999, -1.0, 0.0]), *WALL)
    assert through_tip == pytest.approx(2.0)
    assert just_inside == pytest.approx(2.0, abs=1e-4)  # continuous: no jump in the reward


def test_the_scripted_open_fridge_lets_go_behind_the_door_and_comes_round():
    pytest.importorskip("mujoco")
    from rearrange.skills.registry import make_oracle
    from rearrange.tasks import default_task_config, make_env
    from rearrange.tasks.door_path import ee_to_rest_round_door
    from rearrange.tasks.rewards import ee_to_rest

    cfg = default_task_config("open_fridge", obs_preset="state", num_episodes=1)
    env = make_env("open_fridge", cfg, split="val", seed=0)
    try:
        obs, _ = env.reset(options={"episode_index": 0})
        base = env.unwrapped
        sim, skill = base.sim, make_oracle("open_fridge")
        skill.reset(base.target, sim)
        extra, info = [], {}
        for _ in range(cfg.max_episode_steps):
            obs, _, term, trunc, info = env.step(skill.act(obs, sim))
            if base._reached:
                extra.append(ee_to_rest_round_door(sim, "fridge") - ee_to_rest(sim))
            if term or trunc or info.get("success"):
                break
        assert info.get("success")
        assert min(extra) >= -1e-9  # never shorter than the straight line
        assert max(extra) > 0.05  # behind the panel when the door reached its target
        assert extra[-1] == pytest.approx(0.0, abs=1e-9)  # round the edge at the end
    finally:
        env.close()
