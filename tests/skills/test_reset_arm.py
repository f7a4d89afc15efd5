"""The scripted arm reset's step back (`backoff_steps`) and planned detour (`detour`,
`ResetArm._follow`): where the canonical joints do not fit, and where the straight way
there is not clear."""

import math
from types import SimpleNamespace

import numpy as np
import pytest
from skills_testlib import backed_off, face_nearest_wall, one_target_hab_env

from rearrange.skills import action_layout
from rearrange.skills.oracle_motion import PLAN_CLEAR, clearance_at
from rearrange.skills.reset_arm import (
    BACKOFF_LAYOUT_SKILL,
    BACKOFF_MAX,
    STALL_STEPS,
    ResetArm,
    backoff_steps,
    detour,
    reset_arm_joints,
)


@pytest.fixture()
def env():
    return one_target_hab_env()


def _back(sim, n: int) -> tuple[float, float, float]:
    cfg = sim.config
    return backed_off(sim, n, cfg.base_max_linear * cfg.policy_dt)


def test_no_step_back_where_the_folded_arm_fits(env):
    sim = env.sim
    assert clearance_at(sim, arm=reset_arm_joints(sim), whole_robot=False) >= PLAN_CLEAR
    assert backoff_steps(sim) == 0


def test_steps_back_the_fewest_steps_after_which_the_folded_arm_fits(env):
    sim = env.sim
    face_nearest_wall(sim, gap=0.05)
    goal = reset_arm_joints(sim)
    assert clearance_at(sim, arm=goal, whole_robot=False) < 0.0  # the rest arm in the wall
    n = backoff_steps(sim)
    step = sim.config.base_max_linear * sim.config.policy_dt
    assert 0 < n <= BACKOFF_MAX / step
    assert clearance_at(sim, base=_back(sim, n), arm=goal, whole_robot=False) >= PLAN_CLEAR
    assert clearance_at(sim, base=_back(sim, n - 1), arm=goal, whole_robot=False) < PLAN_CLEAR
    # driven through the nav's layout, full reverse: straight back, n steps' worth but the
    # step where the arm (set into the wall here) leaves it, which the sim may cut short
    start = np.array(sim.base_pose())
    reverse = action_layout(BACKOFF_LAYOUT_SKILL).compose(base=np.array([-1.0, 0.0]))
    for _ in range(n):
        env.apply_action(BACKOFF_LAYOUT_SKILL, reverse)
    delta = (np.array(sim.base_pose()) - start)[:2]
    back = -(delta @ np.array([math.cos(start[2]), math.sin(start[2])]))
    assert (n - 1) * step <= back <= n * step + 1e-6
    assert float(np.hypot(*delta)) == pytest.approx(back, abs=0.02)
    # and the reset then reaches the canonical joints
    arm = ResetArm(action_layout("pick"))
    for _ in range(arm.budget()):
        if arm.is_done(sim):
            break
        env.apply_action("pick", arm.act(sim))
    assert arm.is_done(sim)


def test_no_step_back_when_no_pose_within_reach_fits(env, monkeypatch):
    sim = env.sim
    face_nearest_wall(sim, gap=0.05)
    monkeypatch.setattr("rearrange.skills.reset_arm.BACKOFF_MAX", 0.05)  # less than a step
    assert backoff_steps(sim) == 0


def test_no_detour_where_the_straight_way_is_clear(env):
    sim = env.sim
    layout = action_layout("pick")
    for _ in range(10):  # a little off rest, in the open
        env.apply_action("pick", layout.compose(arm=np.full(7, 0.3), grip=-1.0))
    assert np.abs(reset_arm_joints(sim) - sim.arm_joint_pos()).max() > 0.02
    assert detour(sim) is None
    arm = ResetArm(layout)
    arm.act(sim)
    assert arm.checked and not arm.planned and arm.budget(140) == 140


class _Sim:
    """What `ResetArm._follow` reads: the arm joints and the per-step bound."""

    def __init__(self, q):
        self.q = np.asarray(q, dtype=np.float64)
        self.config = SimpleNamespace(arm_delta_scale=0.05)

    def arm_joint_pos(self):
        return self.q.copy()


def test_follow_moves_every_joint_alike_toward_the_next_waypoint_and_passes_it():
    sim = _Sim(np.zeros(7))
    arm = ResetArm(action_layout("pick"))
    arm.path = [np.r_[0.5, -0.25, np.zeros(5)], np.r_[0.5, 0.5, np.zeros(5)]]
    a = arm._follow(sim)
    # err (0.5, -0.25): scaled by the largest, so the step stays on the segment
    np.testing.assert_allclose(a, np.r_[1.0, -0.5, np.zeros(5)])
    sim.q = np.r_[0.49, -0.245, np.zeros(5)]  # within WAYPOINT_TOL of the first: passed
    a = arm._follow(sim)
    assert len(arm.path) == 1
    np.testing.assert_allclose(a, np.r_[0.01, 0.745, np.zeros(5)] / 0.745)
    sim.q = np.r_[0.5, 0.47, np.zeros(5)]  # under the bound: exactly the rest of the way
    np.testing.assert_allclose(arm._follow(sim), np.r_[0.0, 0.6, np.zeros(5)])
    sim.q = np.r_[0.5, 0.49, np.zeros(5)]  # within JOINT_TOL of the last: the path is done
    assert arm._follow(sim) is None and arm.path is None


def test_follow_drops_a_stalled_path_to_the_joint_phase():
    sim = _Sim(np.zeros(7))
    arm = ResetArm(action_layout("pick"))
    arm.path = [np.r_[1.0, np.zeros(6)]]
    results = [arm._follow(sim) for _ in range(STALL_STEPS + 1)]  # the arm never moves
    assert all(r is not None for r in results[:-1])
    assert results[-1] is None and arm.path is None and arm.joint_phase
