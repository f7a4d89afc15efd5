"""`skills.oracle_motion`: the constrained least squares on hand-solved problems, the axis
and ball helpers, and the collision-constrained arm step on the real MuJoCo world (the
gripper levelled on a hand-computed target, an arm that stops short of a counter top
instead of being blocked by it, distances that agree with the world's own depth pass)."""

import math

import numpy as np
import pytest

from rearrange.skills.oracle_motion import (
    SAFE,
    ArmMotion,
    box_axis,
    clearance_at,
    gripper_axis,
    near_pairs,
    solve_ls_constrained,
    toward_ball,
    yaw_pitch,
)

pytest.importorskip("mujoco")


def test_constrained_least_squares_matches_hand_solutions():
    a, b = np.eye(2), np.array([1.0, 1.0])
    # unconstrained optimum (1, 1) violates x0 + x1 <= 1: the projection is (0.5, 0.5)
    x = solve_ls_constrained(a, b, np.array([[1.0, 1.0]]), np.array([1.0]))
    np.testing.assert_allclose(x, [0.5, 0.5], atol=1e-9)
    # an inactive constraint leaves the optimum alone
    x = solve_ls_constrained(a, b, np.array([[1.0, 0.0]]), np.array([3.0]))
    np.testing.assert_allclose(x, [1.0, 1.0], atol=1e-9)
    # x0 <= -1 and -x0 <= -1 (x0 >= 1) cannot both hold
    g = np.array([[1.0, 0.0], [-1.0, 0.0]])
    assert solve_ls_constrained(a, b, g, np.array([-1.0, -1.0])) is None


def test_box_axis_turns_only_as_far_as_the_range_needs():
    down = np.array([0.0, 0.0, -1.0])
    # straight down, asked for a heading of 0 pitched 10-40 deg: pitched up to 40 deg
    a = box_axis(down, 0.0, math.radians(15), (math.radians(10), math.radians(40)))
    yaw, pitch = yaw_pitch(a)
    assert pitch == pytest.approx(math.radians(40)) and np.linalg.norm(a) == pytest.approx(1)
    # already inside the range: unchanged
    inside = np.array([math.cos(0.3), 0.0, -math.sin(0.3)])
    np.testing.assert_allclose(box_axis(inside, 0.0, 0.2, (0.1, 0.5)), inside, atol=1e-12)
    # heading 60 deg off, tolerance 15 deg: turned to 15 deg, pitch kept
    off = np.array([math.cos(math.radians(60)), math.sin(math.radians(60)), 0.0])
    yaw, pitch = yaw_pitch(box_axis(off, 0.0, math.radians(15), (0.0, 1.0)))
    assert yaw == pytest.approx(math.radians(15)) and pitch == pytest.approx(0.0)


def test_toward_ball_aims_at_the_nearest_point_of_the_ball():
    c = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(toward_ball(c + [0.5, 0, 0], c, 0.1), c + [0.1, 0, 0])
    inside = c + [0.05, 0, 0]
    np.testing.assert_allclose(toward_ball(inside, c, 0.1), inside)


@pytest.fixture
def pick_env():
    from rearrange.sim.config import SimConfig
    from rearrange.tasks import default_task_config, make_env
    from rearrange.tasks.force_limit import ForceLimit

    cfg = default_task_config(
        "pick",
        obs_preset="state",
        num_episodes=4,
        sim=SimConfig(world_blocks_robot=True),
        force_limit=ForceLimit(max_accum=5000.0),
    )
    env = make_env("pick", cfg, split="val", seed=0)
    env.reset(options={"episode_index": 2})  # a counter pick, the robot in front of it
    yield env
    env.close()


def test_orientation_step_levels_the_gripper_on_a_hand_computed_target(pick_env):
    """From rest (gripper pitched ~57 deg down, 70 deg off the heading) toward a point
    0.15 m ahead of the resting EE with the axis asked level and straight ahead: the EE is
    there within 20 steps, and within 160 the axis is within 5 deg of horizontal and 10 deg
    of the heading (turning is slow: every joint moves <= 0.72 deg a step)."""
    from rearrange.skills.oracle_common import base_to_world

    sim = pick_env.unwrapped.sim
    assert abs(yaw_pitch(gripper_axis(sim))[1]) > math.radians(45)
    target = base_to_world(sim, sim.rest_ee_pos_base + np.array([0.15, 0.0, 0.05]))
    yaw = float(sim.base_pose()[2])
    axis = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    motion = ArmMotion()
    for k in range(160):
        sim.step(motion.action(sim, target, axis), None, None)
        if k == 20:
            assert np.linalg.norm(sim.ee_pos("world") - target) < 0.02
    a = gripper_axis(sim)
    assert math.degrees(math.asin(abs(a[2]))) < 5.0
    assert math.degrees(math.acos(float(np.clip(a @ axis, -1, 1)))) < 10.0
    assert np.linalg.norm(sim.ee_pos("world") - target) < 0.02


def test_arm_step_stops_short_of_the_counter_instead_of_leaning_on_it(pick_env):
    """A target 20 cm inside the counter below the object: the arm stops at about the
    safety gap above it; the world never has to block it and no link touches anything."""
    sim = pick_env.unwrapped.sim
    obj = sim.object_pos(0)
    target = np.array([obj[0], obj[1], obj[2] - 0.25])
    motion = ArmMotion()
    for _ in range(120):
        sim.step(motion.action(sim, target, skip={int(sim.idx.obj_geoms[0])}), None, None)
        assert sim.static_depth == 0.0
    assert sim.blocked_steps == 0
    gap = clearance_at(sim, whole_robot=False, margin=0.1)
    assert SAFE - 0.01 < gap < SAFE + 0.02


def test_distances_agree_with_the_worlds_depth_pass(pick_env):
    """Arm joints set by hand into the counter: `near_pairs` reports the overlap the world
    measures (its deepest pair), and a pose clear of everything reports no contact."""
    sim = pick_env.unwrapped.sim
    q = sim.arm_joint_pos()
    sim.set_arm_joint_pos(q + np.array([0.0, 0.6, 0.0, 0.4, 0.0, 0.3, 0.0]))  # arm down
    world = float(sim._static_depths().max()) if sim._static_depths().size else 0.0
    ours = max(-near_pairs(sim, 0.05).min_dist, 0.0)
    assert world > 0.005  # the hand-set pose is inside the counter
    assert ours == pytest.approx(world, abs=0.001)
    sim.set_arm_joint_pos(q)
    assert near_pairs(sim, 0.05).min_dist > 0.0
