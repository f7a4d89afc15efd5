"""The base-moving scripted pick's way to a fridge shelf: a robot already facing its stand
pose drives straight in (`oracle_nav.drives_straight_in`) instead of going back to the
pre-goal point to turn, and the stand pose is preferably one whose straight way in keeps the
resting arm clear (`oracle_manip.lane_clear`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rearrange.skills import oracle_manip, oracle_motion
from rearrange.skills.oracle_nav import DIRECT_MAX, DIRECT_YAW, drives_straight_in

GOAL = (0.0, 0.0, math.pi / 2)  # a stand pose facing +y (into a fridge at y > 0)


def _clear() -> bool:
    return True


def test_facing_the_goal_close_by_drives_straight_in():
    # 0.4 m behind and 0.2 m beside the goal, heading at the goal point: 63.4 deg, which is
    # 26.6 deg off the goal heading (inside DIRECT_YAW = 40)
    pose = (-0.2, -0.4, math.atan2(0.4, 0.2))
    assert drives_straight_in(pose, GOAL, _clear)


def test_the_line_test_decides_last():
    pose = (-0.2, -0.4, math.atan2(0.4, 0.2))
    assert not drives_straight_in(pose, GOAL, lambda: False)
    asked = []
    far = (0.0, -(DIRECT_MAX + 0.01), math.pi / 2)
    assert not drives_straight_in(far, GOAL, lambda: asked.append(1) or True)
    assert asked == []  # beyond DIRECT_MAX: the costly test is never run


def test_heading_tolerances():
    # straight behind the goal, facing it: the goal point dead ahead, heading error = yaw error
    inside = math.pi / 2 + DIRECT_YAW - math.radians(1)
    outside = math.pi / 2 + DIRECT_YAW + math.radians(1)
    assert drives_straight_in((0.0, -0.5, inside), GOAL, _clear)
    assert not drives_straight_in((0.0, -0.5, outside), GOAL, _clear)
    # facing the goal heading but the goal point 45 deg to the side (0.5 m behind, 0.5 beside)
    assert not drives_straight_in((-0.5, -0.5, math.pi / 2), GOAL, _clear)


class _LaneSim:
    """base_fits everywhere except x >= `wall_x`."""

    def __init__(self, wall_x: float = math.inf):
        self.wall_x = wall_x

    def base_fits(self, x: float, y: float) -> bool:
        return x < self.wall_x


@pytest.fixture
def arm_gap(monkeypatch):
    """The resting arm's clearance as a function of the base's x (set per test)."""
    gaps: dict = {"f": lambda x: 1.0}
    monkeypatch.setattr(
        oracle_motion, "clearance_at", lambda sim, base, arm, whole_robot: gaps["f"](base[0])
    )
    return gaps


FRONT = np.array([1.0, 0.0])  # backing out along +x from a stand at x = 0
REST = np.zeros(7)


def test_lane_clear_checks_every_step_out_to_the_lane_length(arm_gap):
    pose = (0.0, 0.0, math.pi)
    assert oracle_manip.lane_clear(_LaneSim(), pose, FRONT, REST)
    # the door's handle 0.8 m out: the arm meets it with the base there
    arm_gap["f"] = lambda x: -0.01 if abs(x - 0.8) < 1e-6 else 1.0
    assert not oracle_manip.lane_clear(_LaneSim(), pose, FRONT, REST)
    # ... beyond CONTAINER_LANE it does not count
    arm_gap["f"] = lambda x: -0.01 if x > oracle_manip.CONTAINER_LANE + 0.05 else 1.0
    assert oracle_manip.lane_clear(_LaneSim(), pose, FRONT, REST)
    # a gap below LANE_GAP blocks, one at it does not
    arm_gap["f"] = lambda x: oracle_manip.LANE_GAP - 1e-3
    assert not oracle_manip.lane_clear(_LaneSim(), pose, FRONT, REST)
    arm_gap["f"] = lambda x: oracle_manip.LANE_GAP
    assert oracle_manip.lane_clear(_LaneSim(), pose, FRONT, REST)


def test_a_lane_the_base_cannot_back_out_along_is_not_clear(arm_gap):
    pose = (0.0, 0.0, math.pi)
    assert not oracle_manip.lane_clear(_LaneSim(wall_x=0.35), pose, FRONT, REST)
    # the wall just beyond the lane's end does not matter
    assert oracle_manip.lane_clear(
        _LaneSim(wall_x=oracle_manip.CONTAINER_LANE + 0.05), pose, FRONT, REST
    )


def test_scripted_pick_drives_in_between_the_wall_and_the_open_door():
    """Seed 1's fridge val pick 27: the robot starts facing the fridge, between a wall and the
    open door, 0.45 m from its stand pose. Sent back to the pre-goal point first, it turned on
    the spot to the step limit; now it drives straight in and picks."""
    pytest.importorskip("mujoco")
    import dataclasses

    from rearrange.skills.registry import make_oracle
    from rearrange.skills.rollout import run_skill_episode
    from rearrange.tasks import default_task_config, make_env

    cfg = default_task_config("pick", obs_preset="state", num_episodes=28, base_movement=True)
    cfg = dataclasses.replace(cfg, episodes=dataclasses.replace(cfg.episodes, fridge_pick_prob=1.0))
    env = make_env("pick", cfg, split="val", seed=1)
    skill = make_oracle("pick", True)
    skill.step_limit = cfg.max_episode_steps
    try:
        result = run_skill_episode(env, skill, 27)
        assert env.unwrapped.sim.episode.objects[
            env.unwrapped.target.obj_index
        ].receptacle.startswith("fridge")
        assert result.success, result.cause
        assert result.steps < 200
    finally:
        env.close()


class _FollowSim:
    """A base at `pose`; the planning map's straight lines all navigable."""

    layout = None

    def __init__(self, pose):
        self.pose = pose

    def base_pose(self):
        return np.asarray(self.pose, dtype=np.float64)

    def planning_navmap(self):
        class _Map:
            def line_of_sight(self, a, b) -> bool:
                return True

        return _Map()


def _heading_for_pre_goal(straight_in: bool):
    from rearrange.skills.oracle_nav import PathFollower

    f = PathFollower()
    f.reset((0.0, -0.5, math.pi / 2))  # the pre-goal point, 0.5 m behind GOAL
    f._stage_goal = GOAL
    f._straight_in = straight_in
    # 6 cm beside the pre-goal point, facing the real goal
    sim = _FollowSim((0.06, -0.5, math.atan2(0.5, -0.06)))
    f._skip_pre_goal(sim)
    return f


def test_facing_the_goal_on_the_way_to_the_pre_goal_goes_straight_on():
    f = _heading_for_pre_goal(straight_in=True)
    assert f.goal == GOAL and f._stage_goal is None and f._direct


def test_only_a_straight_in_approach_skips_its_pre_goal():
    # a plain nav leg that switched to a pre-goal approach (blocked turns) keeps it
    f = _heading_for_pre_goal(straight_in=False)
    assert f.goal == (0.0, -0.5, math.pi / 2) and f._stage_goal == GOAL and not f._direct
