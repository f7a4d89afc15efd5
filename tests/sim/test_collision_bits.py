"""Collision bits, the world blocking the arm, the penetration-based contact force and the
release grace period."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest
from sim_helpers import episode_at, move_ee_to

from rearrange.sim.blocked_step import PENETRATION_STIFFNESS
from rearrange.sim.config import SimConfig
from rearrange.sim.furniture_geoms import ROBOT_BIT
from rearrange.sim.world import RearrangeSim


def _collide(m, g1: int, g2: int) -> bool:
    """MuJoCo's geom filter: ct1 & ca2 or ct2 & ca1."""
    ct, ca = m.geom_contype, m.geom_conaffinity
    return bool((ct[g1] & ca[g2]) or (ct[g2] & ca[g1]))


def test_robot_collides_with_objects_but_not_fixed_furniture_doors_or_drawers(sim):
    sim.reset(episode_at("counter_0", [("cracker_box", "counter_0")]))
    m, idx = sim.model, sim.idx
    robot = int(idx.robot_collision_geoms[0])
    counter = m.geom_bodyid == m.body("counter_0").id
    static = int(np.flatnonzero(counter)[0])
    obj = int(idx.obj_geoms[0])
    assert _collide(m, robot, obj)
    assert not _collide(m, robot, static)
    for part in ("fridge", "drawer_0"):  # moved only through their handles
        assert not any(_collide(m, robot, int(g)) for g in idx.art_geoms[part])
        assert any(_collide(m, obj, int(g)) for g in idx.art_geoms[part])  # objects: solid


def test_doors_and_drawers_do_not_touch_their_own_carcass(sim):
    sim.reset(episode_at("counter_0", []))
    m = sim.model
    pairs = {
        frozenset((m.body(int(s >> 16)).name, m.body(int(s & 0xFFFF)).name))
        for s in m.exclude_signature
    }
    assert frozenset(("fridge_0", "fridge_door")) in pairs
    assert frozenset(("cabinet_0", "drawer_0_body")) in pairs
    assert frozenset(("cabinet_0", "drawer_1_body")) in pairs


def _counter_point(sim, depth: float) -> np.ndarray:
    """A point 0.15 m inside the counter's front edge, `depth` m below its top."""
    f = sim.layout.furniture_named("counter_0")
    front = np.array([math.cos(f.front_yaw), math.sin(f.front_yaw)])
    xy = np.asarray(f.center[:2]) + front * (f.half_size[0] - 0.15)
    return np.array([xy[0], xy[1], 2 * f.half_size[2] - depth])


def test_without_blocking_contact_force_grows_with_penetration_of_fixed_furniture():
    sim = RearrangeSim(SimConfig(world_blocks_robot=False))  # the world before issue 27
    sim.reset(episode_at("counter_0", [], dist=0.45))
    sim.step(np.zeros(7), None, None)
    assert sim.contact_force() == 0.0  # resting arm in free space
    forces = []
    for depth in (0.02, 0.08):
        assert move_ee_to(sim, _counter_point(sim, depth), steps=200) < 0.02
        sim.step(np.zeros(7), None, None)
        forces.append(sim.contact_force())
    assert 0.0 < forces[0] < forces[1]
    assert forces[1] == pytest.approx(PENETRATION_STIFFNESS * sim._start_depth[1])
    assert sim.static_depth > 0.05 and sim.blocked_steps == 0
    assert sim.articulation_pos("drawer_0") == pytest.approx(0.0, abs=1e-3)  # nothing moved
    sim.close()


def test_counter_blocks_the_arm_and_lets_it_back_out(sim):
    sim.reset(episode_at("counter_0", [], dist=0.45))
    top = _counter_point(sim, 0.0)[2]
    target = _counter_point(sim, 0.08)
    move_ee_to(sim, target, steps=200)
    assert sim.blocked_steps > 0
    assert sim.static_depth <= sim.config.block_depth + 1e-9
    assert sim.ee_pos()[2] > target[2] + 0.04  # stopped near the top, not 8 cm inside
    assert 0.0 < sim.contact_force() <= PENETRATION_STIFFNESS * 0.05  # contact, bounded
    base = sim.base_pose()
    blocked = sim.blocked_steps
    # Straight up is free: no step of it is cut short.
    assert move_ee_to(sim, sim.ee_pos() + np.array([0.0, 0.0, 0.15]), steps=60) < 0.02
    assert sim.blocked_steps == blocked and sim.ee_pos()[2] > top + 0.1
    np.testing.assert_allclose(sim.base_pose(), base)  # the base never moved


def test_a_pose_already_inside_may_move_out_but_not_deeper(sim):
    sim.reset(episode_at("counter_0", [], dist=0.45))
    off = RearrangeSim(SimConfig(world_blocks_robot=False))
    off.reset(sim.episode)
    move_ee_to(off, _counter_point(off, 0.06), steps=200)
    sim.set_arm_joint_pos(off.arm_joint_pos())  # put there by hand (a previous skill)
    off.close()
    sim.step(np.zeros(7), None, None)
    deep = sim.static_depth
    assert deep > 0.03
    jac = sim.arm_jacobian()
    down = jac.T @ np.linalg.solve(jac @ jac.T + 1e-3 * np.eye(3), np.array([0, 0, -0.01]))
    push = np.clip(down / sim.config.arm_delta_scale, -1, 1)
    for _ in range(10):
        sim.step(push, None, None)
        assert sim.static_depth <= deep + sim.config.block_depth + 1e-9  # no ratchet in
    assert sim.blocked_steps > 0
    move_ee_to(sim, sim.ee_pos() + np.array([0.0, 0.0, 0.15]), steps=60)
    assert sim.static_depth == 0.0  # up and out is allowed


def test_released_object_collides_with_the_robot_again_only_once_clear(sim):
    sim.reset(episode_at("counter_0", [("cracker_box", "counter_0")], dist=0.45))
    m, d, idx, grip = sim.model, sim.data, sim.idx, sim.gripper
    geom, adr = int(idx.obj_geoms[0]), int(idx.obj_qpos[0])
    default = int(idx.default_conaffinity[geom])
    assert default & ROBOT_BIT
    d.qpos[adr : adr + 3] = sim.ee_pos()  # the object inside the gripper
    mujoco.mj_forward(m, d)
    grip.grasp_object_now(0)
    assert not m.geom_conaffinity[geom] & ROBOT_BIT  # held: no robot contact
    grip.release()
    grip.update_release()
    assert not m.geom_conaffinity[geom] & ROBOT_BIT  # still overlapping: grace kept
    d.qpos[adr : adr + 3] = sim.ee_pos() + np.array([0.0, 0.0, 0.6])
    mujoco.mj_forward(m, d)
    grip.update_release()
    assert m.geom_conaffinity[geom] == default
