"""Open fridge door vs the base check, objects riding in an open drawer, sim.navmap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sim_helpers import episode_at

from rearrange.sim.apartment import (
    FRIDGE_DOOR_THICKNESS,
    FRIDGE_HALF,
    FRIDGE_HANDLE_OUT,
    generate_layout,
)
from rearrange.sim.config import SimConfig
from rearrange.sim.episode_types import ObjectPlacement
from rearrange.sim.snapshot import place_on
from rearrange.sim.world import RearrangeSim

OPEN = 1.2208


def _door_box(sim):
    doors = sim.swinging.footprints(sim.data)
    assert doors is not None and len(doors.center) == 1  # drawers are above the base
    return doors.center[0], doors.half[0], math.atan2(doors.sin[0], doors.cos[0])


def test_open_door_footprint_matches_hand_computed_panel(sim):
    sim.reset(episode_at("fridge_0", [], articulations={"fridge": OPEN}))
    fridge = sim.layout.furniture_named("fridge_0")
    c, s = math.cos(fridge.front_yaw), math.sin(fridge.front_yaw)
    lx, ly = fridge.half_size[0] - FRIDGE_DOOR_THICKNESS, FRIDGE_HALF[1]  # hinge, local frame
    hinge = np.array([fridge.center[0] + c * lx - s * ly, fridge.center[1] + s * lx + c * ly])
    # Door body frame: panel + handle span x in [0, t + handle_out + 0.012], y in [-0.8, 0].
    depth = FRIDGE_DOOR_THICKNESS + FRIDGE_HANDLE_OUT + 0.012
    yaw = fridge.front_yaw + OPEN
    local = np.array([depth / 2, -FRIDGE_HALF[1]])
    expect = hinge + [
        math.cos(yaw) * local[0] - math.sin(yaw) * local[1],
        math.sin(yaw) * local[0] + math.cos(yaw) * local[1],
    ]
    center, half, box_yaw = _door_box(sim)
    assert np.allclose(center, expect, atol=1e-6)
    assert np.allclose(half, [depth / 2, FRIDGE_HALF[1]], atol=1e-6)
    assert math.cos(box_yaw - yaw) == pytest.approx(1.0)
    sim.set_articulation_pos("fridge", 0.0)
    assert sim.swinging.footprints(sim.data) is None  # closed: inside the fridge footprint


def _in_front_of_fridge(sim, out: float, lateral: float) -> tuple[float, float, float]:
    """Base pose `out` m in front of the fridge footprint, `lateral` m toward the hinge side,
    facing the fridge: driving forward runs into the open door's free edge."""
    f = sim.layout.furniture_named("fridge_0")
    c, s = math.cos(f.front_yaw), math.sin(f.front_yaw)
    lx, ly = f.half_size[0] + out, lateral
    x, y = f.center[0] + c * lx - s * ly, f.center[1] + s * lx + c * ly
    return x, y, f.front_yaw + math.pi


def _door_depth(sim) -> float:
    """How far the base circle reaches into the open door's footprint (m, <= 0 if clear)."""
    return sim.config.robot_radius - sim.swinging.footprints(sim.data).distance(
        *sim.base_pose()[:2]
    )


@pytest.mark.parametrize("blocks,world", [(True, True), (False, True), (False, False)])
def test_open_door_stops_the_base(blocks, world):
    sim = RearrangeSim(SimConfig(door_blocks_base=blocks, world_blocks_robot=world))
    sim.reset(episode_at("fridge_0", [], articulations={"fridge": OPEN}))
    start = _in_front_of_fridge(sim, 1.35, 0.2)
    assert sim.set_base_pose(*start) and _door_depth(sim) < 0
    # 0.4 m forward at full speed: to 0.95 m out; the door tip is ~0.75 m out
    n = round(0.4 / (sim.config.base_max_linear * sim.config.policy_dt))
    for _ in range(n):
        sim.step(None, None, np.array([1.0, 0.0]))
    travel = np.linalg.norm(sim.base_pose()[:2] - start[:2])
    if blocks:
        assert _door_depth(sim) <= 1e-9 and sim.collision_count > 0 and travel < 0.35
        assert sim.articulation_pos("fridge") == pytest.approx(OPEN, abs=0.01)
    elif world:  # the robot's own body (3-D) meets the panel: stopped in contact
        assert travel < 0.4 - 1e-3 and sim.blocked_steps > 0
        assert sim.static_depth <= sim.config.block_depth + 1e-9
    else:  # neither: the kinematic base drives on into the door (before issue 27)
        assert travel == pytest.approx(0.4, abs=1e-6) and _door_depth(sim) > 0.05
    sim.close()


def test_door_swung_into_the_robot_does_not_trap_it(sim):
    sim.reset(episode_at("fridge_0", [], articulations={"fridge": OPEN}))
    pose = _in_front_of_fridge(sim, 0.9, 0.2)
    assert not sim.set_base_pose(*pose)  # teleporting into an open door is refused
    sim.set_articulation_pos("fridge", 0.0)
    assert sim.set_base_pose(*pose)
    sim.set_articulation_pos("fridge", OPEN)  # the door swings into the robot
    depth = _door_depth(sim)
    assert depth > 0.05
    sim.step(None, None, np.array([1.0, 0.0]))  # deeper: refused (sliding may keep depth)
    assert _door_depth(sim) <= depth + 1e-9
    start = sim.base_pose()
    for _ in range(6):  # backing out is allowed
        sim.step(None, None, np.array([-1.0, 0.0]))
    back = 6 * sim.config.base_max_linear * sim.config.policy_dt
    assert np.linalg.norm(sim.base_pose()[:2] - start[:2]) == pytest.approx(back, abs=1e-6)
    assert _door_depth(sim) < depth


def test_set_base_pose_ignores_closed_door(sim):
    sim.reset(episode_at("fridge_0", []))
    assert sim.swinging.footprints(sim.data) is None
    x, y, yaw = sim.episode.robot_start
    assert sim.set_base_pose(x, y, yaw)


def test_object_in_open_drawer_rests_and_rides_with_it(sim):
    ep = episode_at("cabinet_0", [], dist=1.0)
    layout = generate_layout(ep.scene_seed, ep.split)
    cab = layout.furniture_named("cabinet_0")
    front = np.array([math.cos(cab.front_yaw), math.sin(cab.front_yaw), 0.0])
    rec = layout.receptacle("drawer_0_inside")  # the closed drawer's floor
    pos, quat = place_on(rec, "tuna_fish_can")
    pos = np.array(pos) + 0.45 * front  # the open drawer's floor is 0.45 m further out
    ep.objects.append(ObjectPlacement("tuna_fish_can", tuple(pos), quat, rec.name))
    ep.articulations["drawer_0"] = 0.45
    sim.reset(ep)
    for _ in range(60):  # 2 s at rest
        sim.step(None, None, None)
    assert np.linalg.norm(sim.object_pos(0) - pos) < 0.01
    dof = sim.idx.art_dof["drawer_0"]
    for _ in range(60):  # push the drawer shut at ~0.3 m/s; the can rides along
        sim.data.qvel[dof] = -0.3
        sim.step(None, None, None)
    closed_by = 0.45 - sim.articulation_pos("drawer_0")
    assert closed_by > 0.35
    moved = sim.object_pos(0) - pos
    assert moved @ front == pytest.approx(-closed_by, abs=0.02)
    assert abs(moved[2]) < 0.01  # still on the drawer floor


@pytest.mark.parametrize("task,split,seed", [("pick", "train", 0), ("nav", "val", 1)])
def test_navmap_geodesics_from_generated_starts_are_finite(sim, task, split, seed):
    from rearrange.sim.episodes import generate_episodes
    from rearrange.sim.navmap import NavMap

    for ep in generate_episodes(task, split, 2, seed):
        sim.reset(ep)
        nav = sim.navmap
        assert isinstance(nav, NavMap) and nav.layout is sim.layout
        assert nav.robot_radius == sim.config.robot_radius
        assert nav is sim.navmap  # built once per layout
        x, y, _ = ep.robot_start
        assert nav.is_navigable(x, y)
        goals = [
            nav.snap(*sim.layout.furniture_named(r.furniture).center)
            for r in sim.layout.receptacles
        ]
        if "nav_goal" in ep.extras:
            goals.append(tuple(ep.extras["nav_goal"][:2]))
        for g in goals:
            d = nav.geodesic_distance((x, y), g)
            assert math.isfinite(d) and d >= math.hypot(g[0] - x, g[1] - y) - 1e-6
        path = nav.shortest_path((x, y), goals[-1])
        assert all(nav.is_navigable(px, py) for px, py in path[1:-1])
