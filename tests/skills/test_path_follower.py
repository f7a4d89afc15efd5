"""PathFollower / OracleNav on a hand-made kinematic base (no MuJoCo): exact arrival."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from rearrange.sim.config import SimConfig
from rearrange.skill_spec import SkillTarget
from rearrange.skills.base import SkillError
from rearrange.skills.oracle_nav import OracleNav, PathFollower

POLICY_DT = SimConfig().policy_dt

MAX_LIN, MAX_ANG = 1.0, 1.5


class OpenFloor:
    """A NavMap with no obstacles: the shortest path is the straight segment."""

    def shortest_path(self, a, b):
        return [tuple(a), tuple(b)]

    def is_navigable(self, x, y):
        return True

    def line_of_sight(self, a, b):
        return True


class KinematicBase:
    """The sim's base model (`RearrangeSim.step` with a base action): midpoint-heading
    integration; the arm at rest, no objects. Only the Simulator members the follower reads."""

    def __init__(self, x=0.0, y=0.0, yaw=0.0):
        self.pose = np.array([x, y, yaw], dtype=np.float64)
        self.navmap = OpenFloor()
        self.config = SimpleNamespace(
            base_max_linear=MAX_LIN, base_max_angular=MAX_ANG, policy_dt=POLICY_DT
        )
        self.episode = SimpleNamespace(objects=[])

    def base_pose(self):
        return self.pose.copy()

    def planning_navmap(self):
        return self.navmap

    def ee_pos(self, frame="world"):
        return np.array([0.5, 0.0, 1.0])

    def held_object(self):
        return None

    def drive(self, action):
        lin, ang = np.clip(action, -1, 1)
        yaw = self.pose[2] + ang * MAX_ANG * POLICY_DT
        mid = 0.5 * (self.pose[2] + yaw)
        dist = lin * MAX_LIN * POLICY_DT
        self.pose = np.array(
            [self.pose[0] + dist * math.cos(mid), self.pose[1] + dist * math.sin(mid), yaw]
        )


def _run(sim, goal, limit=500):
    f = PathFollower(MAX_LIN, MAX_ANG)
    f.reset(goal)
    for step in range(limit):
        cmd = f.command(sim)
        if cmd is None:
            return step
        sim.drive(cmd)
    raise AssertionError("follower never arrived")


def test_straight_drive_lands_on_the_goal_in_distance_over_speed_steps():
    sim = KinematicBase()
    steps = _run(sim, (1.0, 0.0, 0.0))
    # 1 m at 1/30 m per step: 30 full steps, nothing left to turn
    assert steps == 30
    assert math.dist(sim.pose[:2], (1.0, 0.0)) < 0.03 and abs(sim.pose[2]) < math.radians(2)


def test_turns_in_place_then_drives_then_aligns_to_the_goal_yaw():
    sim = KinematicBase()
    goal = (0.0, 2.0, math.pi)
    steps = _run(sim, goal)
    assert math.dist(sim.pose[:2], goal[:2]) < 0.03
    assert abs(math.remainder(sim.pose[2] - math.pi, 2 * math.pi)) < math.radians(2)
    # a 90 deg turn is 32 steps at 1.5 rad/s: the first overlaps the 60 steps of driving
    # (it arcs once the heading error is below turn_in_place), the last one does not
    assert 60 + 32 <= steps <= 60 + 2 * 32 + 10


def test_goal_just_behind_is_reached_by_reversing():
    sim = KinematicBase(yaw=0.0)
    _run(sim, (-0.3, 0.0, 0.0))
    assert math.dist(sim.pose[:2], (-0.3, 0.0)) < 0.03
    assert abs(sim.pose[2]) < math.radians(2)  # never turned around


def test_oracle_nav_calls_stop_exactly_once_at_the_goal():
    sim = KinematicBase()
    nav = OracleNav()
    nav.reset(SkillTarget(nav_goal=(0.5, 0.5, 0.0)))
    for _ in range(300):
        action = nav.act({}, sim)
        if nav.is_done({}, sim):
            break
        sim.drive(action[:2])
    assert action[2] > 0 and nav.stop_called
    assert math.dist(sim.pose[:2], (0.5, 0.5)) < 0.03


def test_nav_without_a_goal_is_a_one_line_error():
    with pytest.raises(SkillError, match="nav_goal"):
        OracleNav().reset(SkillTarget())


def test_hab_step_limits_fit_the_apartments_and_nonav_adds_a_nav():
    from rearrange.skill_spec import NAV_STEP_LIMIT_HAB, step_limit_for

    assert step_limit_for("nav") == 300
    assert step_limit_for("pick") == 200
    assert step_limit_for("pick", base_movement=True) == 200 + NAV_STEP_LIMIT_HAB
    # ~13 m at 1/30 m per step is 390 steps of driving
    assert NAV_STEP_LIMIT_HAB * MAX_LIN * POLICY_DT > 13.0
