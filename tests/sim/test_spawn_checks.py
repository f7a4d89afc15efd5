"""Spawns and nav goals the MuJoCo sim accepts: base check, resting-arm contacts, reach."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sim_layouts import small_apartment, two_rooms

from rearrange.sim.episodes import (
    EPISODES_PER_BLOCK,
    SCENES_PER_BLOCK,
    TASKS,
    EpisodeGenConfig,
    generate_episodes,
    scene_pool,
)
from rearrange.sim.layout_types import Furniture
from rearrange.sim.navmap import NavMap
from rearrange.sim.placement import Footprints

R = 0.3
CLOSE_TASKS = ("pick", "place", "open_fridge", "close_fridge", "open_cab", "close_cab")


def _dense_check(layout, n: int = 20000, seed: int = 0) -> int:
    """Asserts NavMap.is_navigable ⇒ not Footprints.collides on random points."""
    nm, fp = NavMap(layout, robot_radius=R), Footprints(layout)
    rng = np.random.default_rng(seed)
    x0, y0, x1, y1 = layout.bounds
    pts = rng.uniform((x0, y0), (x1, y1), size=(n, 2))
    navigable = 0
    for x, y in pts:
        if nm.is_navigable(x, y):
            navigable += 1
            assert not fp.collides(x, y, R), (x, y)
    return navigable


def test_navigable_points_pass_the_sim_footprint_check():
    rotated = two_rooms()
    rotated.furniture = [
        Furniture("table_0", "table", "living", (6.0, 3.0), (0.4, 0.6, 0.4), 0.7),
        Furniture("counter_0", "counter", "kitchen", (2.0, 3.0), (0.3, 1.0, 0.45), math.pi / 2),
    ]
    for layout in (small_apartment(), rotated):
        assert _dense_check(layout) > 5000  # most of the floor stays navigable


def test_navigable_points_pass_on_a_generated_apartment():
    apartment = pytest.importorskip("rearrange.sim.apartment")
    assert _dense_check(apartment.generate_layout(3, "val"), n=10000) > 1000


def test_scene_pools_are_shared_and_deterministic():
    pool = scene_pool(0, "val", 0)
    assert len(set(pool)) == SCENES_PER_BLOCK and pool == scene_pool(0, "val", 9)
    assert scene_pool(0, "val", EPISODES_PER_BLOCK) != pool
    episodes = generate_episodes("pick", "val", EPISODES_PER_BLOCK, 0)
    assert {e.scene_seed for e in episodes} <= set(pool)


def _shoulder_dist_and_bearing(start, target_xy, cfg: EpisodeGenConfig):
    x, y, yaw = start
    sx, sy = x + cfg.shoulder_x * math.cos(yaw), y + cfg.shoulder_x * math.sin(yaw)
    bearing = math.atan2(target_xy[1] - y, target_xy[0] - x) - yaw
    return math.hypot(target_xy[0] - sx, target_xy[1] - sy), abs(
        (bearing + math.pi) % (2 * math.pi) - math.pi
    )


@pytest.fixture(scope="module")
def sim():
    from rearrange.sim.config import SimConfig
    from rearrange.sim.world import RearrangeSim

    s = RearrangeSim(SimConfig(depth_width=16, depth_height=16, rgb_width=16, rgb_height=16))
    yield s
    s.close()


def _target_xy(sim, ep) -> tuple[float, float]:
    if ep.task == "pick":
        return tuple(ep.objects[ep.targets[0].obj_index].pos[:2])
    if ep.task == "place":
        return tuple(ep.targets[0].goal_pos[:2])
    return tuple(sim.handle_pos(ep.extras["articulation"])[:2])


def _assert_no_contact(sim, ep, what: str) -> None:
    sim.step(None, None, None)
    assert sim.contact_force() == pytest.approx(0.0, abs=1e-6), (ep.episode_id, what)


@pytest.mark.parametrize("task", TASKS)
def test_starts_and_goals_are_accepted_and_contact_free_in_the_sim(sim, task):
    cfg = EpisodeGenConfig()
    for ep in generate_episodes(task, "val", 3, 0):
        sim.reset(ep)
        assert sim.set_base_pose(*ep.robot_start), ep.episode_id
        _assert_no_contact(sim, ep, "start")
        assert sim.collision_count == 0, ep.episode_id
        if task in CLOSE_TASKS:
            dist, bearing = _shoulder_dist_and_bearing(ep.robot_start, _target_xy(sim, ep), cfg)
            # place may stand back (a low-held object must clear the receptacle's edge)
            hi = cfg.place_far_reach if task == "place" else cfg.reach_max
            assert cfg.reach_min - 1e-6 <= dist <= hi + 1e-6, ep.episode_id
            assert bearing <= cfg.yaw_noise + 1e-3, ep.episode_id
        for key in ("nav_goal", "robot_start_far"):
            if key in ep.extras:
                sim.reset(ep)
                assert sim.set_base_pose(*ep.extras[key]), (ep.episode_id, key)
                _assert_no_contact(sim, ep, key)


def test_far_starts_are_within_2m_geodesic_facing_the_target(sim):
    cfg = EpisodeGenConfig()
    for task in CLOSE_TASKS:
        for ep in generate_episodes(task, "val", 2, 1):
            sim.reset(ep)
            far = ep.extras["robot_start_far"]
            target = _target_xy(sim, ep)
            assert sim.navmap.is_navigable(far[0], far[1])
            assert sim.navmap.geodesic_distance(far[:2], target) <= cfg.spawn_max_dist + 1e-6
            _, bearing = _shoulder_dist_and_bearing(far, target, cfg)
            assert bearing <= cfg.yaw_noise + 1e-3


def test_clearance_handles_match_the_sim_and_arm_discs_cover_the_arm(sim):
    from rearrange.sim.placement import RobotClearance, arm_discs

    for task in ("close_fridge", "close_cab", "open_cab"):
        (ep,) = generate_episodes(task, "val", 1, 0)
        sim.reset(ep)
        rc = RobotClearance(sim.layout, ep.articulations)
        for art in sim.layout.articulations:
            assert np.allclose(rc.handle_pos(art.name), sim.handle_pos(art.name), atol=1e-6)
    # every arm point the sim reports (geom centres beyond the base circle) lies in a disc
    discs = arm_discs()
    ee = sim.rest_ee_pos_base
    d = np.hypot(discs[:, 0] - ee[0], discs[:, 1] - ee[1])
    assert np.any((d <= discs[:, 2]) & (discs[:, 3] <= ee[2]) & (ee[2] <= discs[:, 4]))
