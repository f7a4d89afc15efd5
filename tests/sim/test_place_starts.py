"""Pick and place start like the previous skill's end (docs/DESIGN.md §8.2): arm near
rest, the object held as a pick leaves it, spawns like the HAB executor's stand poses; the
sim reproduces them."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sim_layouts import small_apartment

from rearrange.sim import robot as R
from rearrange.sim.episodes import EpisodeGenConfig, generate_episodes
from rearrange.sim.episodes.arm_starts import arm_kinematics, pick_end, sample_arm
from rearrange.sim.objects import OBJECT_TYPES

_LAYOUTS: dict = {}


def fixture_layout(seed: int, split: str):
    if (seed, split) not in _LAYOUTS:
        _LAYOUTS[(seed, split)] = small_apartment(seed, split)
    return _LAYOUTS[(seed, split)]


def gen(task: str, n: int, seed: int = 0):
    return generate_episodes(task, "val", n, seed, layout_fn=fixture_layout)


def test_place_episodes_carry_a_pick_end_and_stay_deterministic():
    first = gen("place", 6)
    again = gen("place", 6)
    assert [e.extras for e in first] == [e.extras for e in again]
    assert [e.robot_start for e in first] == [e.robot_start for e in again]
    for ep in first:
        assert len(ep.extras["arm_start"]) == 7 and len(ep.extras["held_pose"]) == 7
        assert ep.extras["holding"] == ep.targets[0].obj_index
    # pick starts with the arm as a place left it; nav (same builder) as before
    for ep in gen("pick", 3):
        assert len(ep.extras["arm_start"]) == 7 and "held_pose" not in ep.extras
    for ep in gen("nav", 2):
        assert "arm_start" not in ep.extras and "held_pose" not in ep.extras


def test_arm_starts_cover_the_rest_tolerance_and_its_lower_shell():
    cfg = EpisodeGenConfig()
    kin = arm_kinematics()
    rng = np.random.default_rng(0)
    offsets = []
    for _ in range(60):
        q = sample_arm(rng, cfg, kin)
        assert np.all(q >= kin.arm_range[:, 0] - 1e-9) and np.all(q <= kin.arm_range[:, 1] + 1e-9)
        kin.set_arm(q)
        offsets.append(kin.ee() - kin.rest_ee)
    kin.set_arm(kin.rest)
    offsets = np.array(offsets)
    dist = np.linalg.norm(offsets, axis=1)
    assert dist.max() <= cfg.arm_start_ee_tol + 1e-9
    # where a learned pick stops: ~0.1-0.15 m below rest, at the tolerance's edge
    assert np.mean(offsets[:, 2] < -0.09) > 0.3
    assert np.mean(offsets[:, 2] > 0.0) > 0.1  # and above it (a scripted carry pose)


def test_grasps_touch_the_gripper_from_several_sides():
    cfg = EpisodeGenConfig()
    rng = np.random.default_rng(1)
    dirs = []
    for name in ("sugar_box", "bowl", "apple", "mug"):
        for _ in range(15):
            q, pose, discs, disc = pick_end(rng, OBJECT_TYPES[name], cfg)
            p = np.asarray(pose[:3])
            assert np.linalg.norm(pose[3:]) == pytest.approx(1.0, abs=1e-4)
            assert 0.02 < np.linalg.norm(p) < 0.3
            dirs.append(p / np.linalg.norm(p))
            assert discs.shape[1] == 5 and disc[2] > 0
    dirs = np.array(dirs)
    assert np.mean(dirs[:, 0] > 0.75) > 0.3  # through the suction cup's face
    assert np.mean(np.abs(dirs[:, 0]) < 0.5) > 0.1  # against the side of the gripper


@pytest.fixture(scope="module")
def sim():
    from rearrange.sim.config import SimConfig
    from rearrange.sim.world import RearrangeSim

    s = RearrangeSim(SimConfig(depth_width=16, depth_height=16, rgb_width=16, rgb_height=16))
    yield s
    s.close()


def test_sim_starts_the_arm_and_the_grasp_as_the_episode_says(sim):
    cfg = EpisodeGenConfig()
    for ep in generate_episodes("place", "val", 4, 0):
        sim.reset(ep)
        i = ep.extras["holding"]
        assert sim.held_object() == i
        assert np.allclose(sim.arm_joint_pos(), ep.extras["arm_start"], atol=1e-6)
        ee = sim.ee_pos("base")
        assert np.linalg.norm(ee - sim.rest_ee_pos_base) <= cfg.arm_start_ee_tol + 1e-3
        d, idx = sim.data, sim.idx
        g_pos = d.xpos[idx.gripper_body]
        g_rot = d.xmat[idx.gripper_body].reshape(3, 3)
        off = g_rot.T @ (sim.object_pos(i) - g_pos)
        assert np.allclose(off, ep.extras["held_pose"][:3], atol=1e-4)
        # the object touches the suction surfaces (within the grasp threshold)
        assert sim.gripper.surface_dist(int(idx.obj_geoms[i]), 0.1) < sim.config.grasp_threshold
        for _ in range(5):  # held still, nothing in contact
            sim.step(None, None, None)
        assert sim.held_object() == i and not sim.grasp_violated()
        assert sim.contact_force() == pytest.approx(0.0, abs=1e-6), ep.episode_id


def test_rest_position_is_the_rest_pose_whatever_the_arm_start(sim):
    rests = []
    for ep in generate_episodes("place", "val", 2, 0) + generate_episodes("pick", "val", 2, 0):
        sim.reset(ep)
        assert np.allclose(sim.arm_joint_pos(), ep.extras["arm_start"], atol=1e-6)
        rests.append(sim.rest_ee_pos_base.copy())
    (nav,) = generate_episodes("nav", "val", 1, 0)
    sim.reset(nav)
    assert np.allclose(sim.arm_joint_pos(), R.REST_ARM_QPOS)
    for rest in rests:
        assert np.allclose(rest, sim.rest_ee_pos_base, atol=1e-9)


def test_pick_starts_are_contact_free_with_the_arm_off_rest(sim):
    for ep in generate_episodes("pick", "val", 4, 0):
        sim.reset(ep)
        sim.step(None, None, None)
        assert sim.contact_force() == pytest.approx(0.0, abs=1e-6), ep.episode_id
        assert sim.collision_count == 0


def test_place_spawns_include_executor_like_stand_poses():
    cfg = EpisodeGenConfig()
    reach, bearing = [], []
    for ep in generate_episodes("place", "val", 16, 0):
        x, y, yaw = ep.robot_start
        gx, gy = ep.targets[0].goal_pos[:2]
        sx, sy = x + cfg.shoulder_x * math.cos(yaw), y + cfg.shoulder_x * math.sin(yaw)
        reach.append(math.hypot(gx - sx, gy - sy))
        err = math.atan2(gy - y, gx - x) - yaw
        bearing.append(abs((err + math.pi) % (2 * math.pi) - math.pi))
    reach, bearing = np.array(reach), np.array(bearing)
    ready = (np.abs(reach - cfg.comfort_reach) <= cfg.comfort_spread + 1e-6) & (
        bearing <= cfg.ready_yaw_noise + 1e-3
    )
    assert ready.sum() >= 3
    assert reach.max() <= cfg.place_far_reach + 1e-6
