"""RearrangeSim behaviour: resting physics, base collisions, suction, articulations, depth."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sim_helpers import episode_at, move_ee_to

from rearrange.sim.config import SimConfig
from rearrange.sim.episode_types import Episode
from rearrange.sim.placement import Footprints
from rearrange.sim.simulator import Simulator
from rearrange.sim.world import RearrangeSim


def _facing_west_wall() -> Episode:
    """Robot 2 m from the outer wall at x = 0, facing it, with a clear corridor to it."""
    from rearrange.sim.apartment import generate_layout

    for seed in range(20):
        fp = Footprints(generate_layout(seed, "train"))
        for y in np.arange(1.0, 4.5, 0.1):
            if not any(fp.collides(x, y, 0.45) for x in np.arange(0.5, 2.1, 0.05)):
                return Episode("wall", "nav", "train", seed, (2.0, float(y), math.pi))
    raise AssertionError("no clear corridor to the west wall")


def test_resting_objects_do_not_drift(sim):
    ep = episode_at(
        "counter_0",
        [
            ("cracker_box", "counter_0"),
            ("apple", "counter_0"),
            ("mug", "fridge_shelf_0"),
            ("tuna_fish_can", "drawer_0_inside"),
            ("bowl", "table_0"),
            ("orange", "sofa_0"),
            ("sugar_box", "shelf_0"),
            ("lemon", "coffee_table_0"),
        ],
    )
    sim.reset(ep)
    start = np.array([sim.object_pos(i) for i in range(sim.num_objects)])
    for _ in range(60):  # 60 policy steps = 2 s at 30 Hz
        sim.step(None, None, None)
    end = np.array([sim.object_pos(i) for i in range(sim.num_objects)])
    assert np.linalg.norm(end - start, axis=1).max() < 0.01


def test_driving_into_wall_stops_where_the_arm_meets_it(sim):
    sim.reset(_facing_west_wall())
    assert isinstance(sim, Simulator)
    assert sim.collision_count == 0
    reach = sim.rest_ee_pos_base[0]  # the resting gripper is ahead of the base disc
    for _ in range(90):  # 90 steps at 1 m/s = 3 m, more than the 2 m to the wall
        sim.step(None, None, np.array([1.0, 0.0]))
    x, _, yaw = sim.base_pose()
    assert reach - 0.02 < x < reach + 0.1 and sim.blocked_steps > 0
    assert sim.static_depth <= sim.config.block_depth
    assert abs(yaw) == pytest.approx(math.pi)
    assert sim.collision_count > 0
    assert sim.set_base_pose(0.1, sim.base_pose()[1], 0.0) is False  # inside the wall margin


def test_without_world_blocking_the_base_disc_alone_meets_the_wall():
    sim = RearrangeSim(SimConfig(world_blocks_robot=False))  # before issue 27
    sim.reset(_facing_west_wall())
    for _ in range(90):
        sim.step(None, None, np.array([1.0, 0.0]))
    x = sim.base_pose()[0]
    assert sim.config.robot_radius - 1e-9 <= x < 0.40  # the arm is 0.3 m into the wall
    assert sim.static_depth > 0.1
    sim.close()


def test_depth_reads_distance_to_wall():
    sim = RearrangeSim(SimConfig(head_tilt=0.0))
    sim.reset(_facing_west_wall())
    cam = sim.data.cam_xpos[sim.idx.head_camera]
    depth = sim.render_depth()
    assert depth.shape == (128, 128, 1) and depth.dtype == np.float32
    # The wall face is the plane x = 0 and the camera looks along -x: z-depth = camera x.
    assert depth[62:66, 62:66].mean() == pytest.approx(cam[0], abs=0.02)
    sim.close()


def test_suction_only_on_contact_then_lifts(sim):
    sim.reset(episode_at("counter_0", [("tuna_fish_can", "counter_0")]))
    obj = sim.object_pos(0)
    sim.step(np.zeros(7), 1.0, None)  # EE far away: grip does nothing
    assert sim.held_object() is None
    top = obj + np.array([0, 0, 0.017])
    assert move_ee_to(sim, top + [0, 0, 0.12]) < 0.02
    assert move_ee_to(sim, top + [0, 0, 0.02], tol=0.005) < 0.01
    sim.step(np.zeros(7), 1.0, None)
    assert sim.held_object() == 0
    move_ee_to(sim, top + [0, 0, 0.2], grip=1.0)
    assert sim.held_object() == 0 and not sim.grasp_violated()
    assert sim.object_pos(0)[2] > obj[2] + 0.12
    sim.step(np.zeros(7), -1.0, None)
    assert sim.held_object() is None
    for _ in range(20):
        sim.step(None, None, None)
    assert sim.object_pos(0)[2] < obj[2] + 0.01  # released: fell back onto the counter


def _grasp_handle(sim, name: str) -> None:
    handle = sim.handle_pos(name)
    base = sim.base_pose()
    toward_robot = np.array([base[0] - handle[0], base[1] - handle[1], 0.0])
    toward_robot /= np.linalg.norm(toward_robot)
    # Pre-grasp in front of the handle first so the gripper never hooks behind the bar.
    assert move_ee_to(sim, handle + 0.15 * toward_robot, steps=200) < 0.02
    assert move_ee_to(sim, handle + 0.04 * toward_robot, steps=100, tol=0.008) < 0.015
    sim.step(np.zeros(7), 1.0, None)
    assert sim.held_articulation() == name and sim.held_object() is None


@pytest.fixture
def free_sim():
    """The handle mechanics below with the world not blocking the robot: the tests' IK is
    position-only and tilts the wrist into the carcass and the drawer front, which the
    blocking world stops (reaching and working a handle there is the scripted skills'
    job, tests/skills/test_oracle_skills.py)."""
    s = RearrangeSim(SimConfig(world_blocks_robot=False))
    yield s
    s.close()


def test_pull_drawer_open_and_push_closed(free_sim):
    sim = free_sim
    sim.reset(episode_at("cabinet_0", [], dist=0.55))
    closed_handle = sim.handle_pos("drawer_0")
    _grasp_handle(sim, "drawer_0")
    for _ in range(30):  # back up 0.3 m holding the handle
        sim.step(np.zeros(7), 1.0, np.array([-0.3, 0.0]))
    opened = sim.articulation_pos("drawer_0")
    assert opened > 0.2
    moved = np.linalg.norm(sim.handle_pos("drawer_0")[:2] - closed_handle[:2])
    assert moved == pytest.approx(opened, abs=0.01)
    for _ in range(40):
        sim.step(np.zeros(7), 1.0, np.array([0.3, 0.0]))
    assert sim.articulation_pos("drawer_0") < 0.05
    assert sim.articulation_pos("drawer_1") == pytest.approx(0.0, abs=1e-3)


def test_pull_fridge_door_open_and_push_closed(free_sim):
    sim = free_sim
    sim.reset(episode_at("fridge_0", [], dist=0.6))
    _grasp_handle(sim, "fridge")
    for _ in range(25):
        sim.step(np.zeros(7), 1.0, np.array([-0.3, 0.0]))
    assert sim.articulation_pos("fridge") > 0.2
    for _ in range(40):
        sim.step(np.zeros(7), 1.0, np.array([0.3, 0.0]))
    assert sim.articulation_pos("fridge") < 0.1


def test_articulation_set_moves_handle_by_hand_computed_amount(sim):
    sim.reset(episode_at("fridge_0", []))
    fridge = sim.layout.furniture_named("fridge_0")
    closed = np.array(sim.handle_pos("fridge"))
    a = {x.name: x for x in sim.layout.articulations}
    assert np.allclose(closed, a["fridge"].handle_closed_pos, atol=1e-6)
    # Hinge: front face, +y edge of the piece (local frame), vertical axis.
    c, s = math.cos(fridge.front_yaw), math.sin(fridge.front_yaw)
    lx, ly = fridge.half_size[0] - 0.05, 0.4  # body front (door thickness 0.05)
    hinge = np.array([fridge.center[0] + c * lx - s * ly, fridge.center[1] + s * lx + c * ly])
    sim.set_articulation_pos("fridge", 1.2208)
    rel = closed[:2] - hinge
    ct, st = math.cos(1.2208), math.sin(1.2208)
    expect = hinge + np.array([ct * rel[0] - st * rel[1], st * rel[0] + ct * rel[1]])
    assert np.allclose(sim.handle_pos("fridge")[:2], expect, atol=1e-6)
    sim.set_articulation_pos("drawer_1", 0.45)
    d_closed = np.array(a["drawer_1"].handle_closed_pos)
    cab = sim.layout.furniture_named("cabinet_0")
    front = np.array([math.cos(cab.front_yaw), math.sin(cab.front_yaw), 0.0])
    assert np.allclose(sim.handle_pos("drawer_1"), d_closed + 0.45 * front, atol=1e-6)
    with pytest.raises(KeyError, match="no articulation"):
        sim.articulation_pos("oven")


def test_pulling_past_the_drawer_limit_violates_the_grasp(free_sim):
    sim = free_sim
    sim.reset(episode_at("cabinet_0", [], dist=0.55))
    _grasp_handle(sim, "drawer_0")
    violated = False
    for _ in range(60):  # 0.9 m back: the drawer stops at 0.5 m
        sim.step(np.zeros(7), 1.0, np.array([-0.5, 0.0]))
        violated |= sim.grasp_violated()
    assert violated and sim.held_articulation() is None


def test_same_seed_and_actions_give_identical_observations():
    ep = episode_at("counter_0", [("apple", "counter_0"), ("mug", "counter_0")])
    outs = []
    for _ in range(2):
        s = RearrangeSim()
        s.reset(ep)
        rng = np.random.default_rng(5)
        for _ in range(15):
            s.step(rng.uniform(-1, 1, 7), rng.uniform(-1, 1), rng.uniform(-1, 1, 2))
        outs.append((s.render_depth(), s.object_pos(0), s.ee_pos(), s.base_pose()))
        s.close()
    for a, b in zip(*outs):
        assert np.array_equal(a, b)


def test_ee_frames_jacobian_and_errors(sim):
    sim.reset(episode_at("counter_0", []))
    assert np.allclose(sim.ee_pos("base"), sim.rest_ee_pos_base)
    assert np.allclose(sim.to_base_frame(sim.ee_pos()), sim.ee_pos("base"))
    q = sim.arm_joint_pos()
    jac = sim.arm_jacobian()
    dq = np.array([0.01, -0.01, 0.0, 0.01, 0.0, 0.01, 0.0])
    p0 = sim.ee_pos()
    sim.set_arm_joint_pos(q + dq)
    assert np.allclose(sim.ee_pos() - p0, jac @ dq, atol=3e-4)
    with pytest.raises(ValueError, match="frame"):
        sim.ee_pos("camera")
    with pytest.raises(IndexError, match="out of range"):
        sim.object_pos(3)
