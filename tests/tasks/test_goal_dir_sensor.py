"""Nav's goal_dir sensor: the goal bearing and the heading error as (cos, sin) pairs, smooth
where the raw wrapped angles of goal_polar / goal_heading jump (goal straight behind)."""

import math

import numpy as np
from tasks_fakes import FakeSim, make_episode

from rearrange.skill_spec import SkillTarget
from rearrange.tasks.sensors import build_observation, task_observation_space, task_sensors


def _obs_at(x, y, yaw, goal):
    sim = FakeSim()
    sim.reset(make_episode("nav"))
    sim.set_base_pose(x, y, yaw)
    return build_observation("nav", "state", sim, SkillTarget(nav_goal=np.asarray(goal, float)))


def test_nav_observes_goal_dir_in_both_cpu_presets():
    for preset in ("state", "state_rays"):
        assert "goal_dir" in task_sensors("nav", preset)
        assert task_observation_space("nav", preset)["goal_dir"].shape == (4,)
    assert "goal_dir" not in task_sensors("pick", "state")


def test_values_match_hand_computed_angles():
    # Robot at (1, 1) facing +y (yaw 90 deg); goal at (2, 1), i.e. 90 deg to the robot's
    # right (bearing -pi/2); goal yaw 180 deg, so the heading error is +90 deg.
    obs = _obs_at(1.0, 1.0, math.pi / 2, [2.0, 1.0, math.pi])
    np.testing.assert_allclose(obs["goal_polar"], [1.0, -math.pi / 2], atol=1e-6)
    np.testing.assert_allclose(obs["goal_dir"], [0.0, -1.0, 0.0, 1.0], atol=1e-6)


def test_smooth_where_the_raw_angle_wraps():
    # Goal straight behind, a hair to either side: goal_polar's angle flips sign (+-pi),
    # goal_dir moves by ~1e-3.
    left = _obs_at(0.0, 0.0, 0.0, [-2.0, 1e-3, math.pi])
    right = _obs_at(0.0, 0.0, 0.0, [-2.0, -1e-3, math.pi])
    assert left["goal_polar"][1] > 3.1 and right["goal_polar"][1] < -3.1
    assert np.abs(left["goal_dir"] - right["goal_dir"]).max() < 2e-3
    np.testing.assert_allclose(left["goal_dir"][:2], [-1.0, 0.0], atol=1e-3)
    np.testing.assert_allclose(left["goal_dir"][2:], [-1.0, 0.0], atol=1e-6)
