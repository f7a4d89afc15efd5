"""Open/close task spawns: the handle's whole travel is in reach from the close start."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rearrange.sim.apartment import generate_layout
from rearrange.sim.episodes import generate_episodes
from rearrange.sim.placement import (
    WORK_REACH,
    Footprints,
    articulation_work_pose,
    fridge_hinge,
    handle_travel_ends,
)

SHOULDER_X = 0.033


def _reach(pose, point) -> float:
    x, y, yaw = pose
    shoulder = np.array([x + SHOULDER_X * math.cos(yaw), y + SHOULDER_X * math.sin(yaw)])
    return float(np.linalg.norm(point - shoulder))


def test_fridge_hinge_is_a_door_width_from_the_closed_handle():
    layout = generate_layout(0, "val")
    art = next(a for a in layout.articulations if a.name == "fridge")
    yaw = layout.furniture_named(art.furniture).front_yaw
    hinge = fridge_hinge(art.handle_closed_pos, yaw)[:2]
    # handle 0.08 m in from the free edge of a 0.8 m door, 0.09 m in front of its hinge line
    dist = np.linalg.norm(np.asarray(art.handle_closed_pos[:2]) - hinge)
    assert dist == pytest.approx(math.hypot(0.72, 0.09), abs=1e-6)


@pytest.mark.parametrize("task", ["open_fridge", "close_fridge", "open_cab", "close_cab"])
def test_close_start_keeps_the_whole_handle_travel_in_reach(task):
    eps = generate_episodes(task, "val", 6, 0)
    ok = 0
    for ep in eps:
        layout = generate_layout(ep.scene_seed, ep.split)
        art = next(a for a in layout.articulations if a.name == ep.extras["articulation"])
        reach = [_reach(ep.robot_start, e) for e in handle_travel_ends(layout, art)]
        ok += WORK_REACH[0] - 0.05 <= min(reach) and max(reach) <= WORK_REACH[1] + 0.05
    assert ok >= 5  # a piece boxed in by walls may fall back to any close spawn


def test_work_pose_dodges_furniture_and_keeps_reach():
    for seed in range(4):
        layout = generate_layout(seed, "val")
        fp = Footprints(layout)
        for art in layout.articulations:
            pose = articulation_work_pose(layout, art, footprints=fp)
            if fp.collides(pose[0], pose[1], 0.32):
                continue  # boxed in: the nominal pose is returned
            reach = [_reach(pose, e) for e in handle_travel_ends(layout, art)]
            assert WORK_REACH[0] - 1e-6 <= min(reach) and max(reach) <= WORK_REACH[1] + 1e-6
