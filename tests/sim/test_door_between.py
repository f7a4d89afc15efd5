"""Stand poses behind or beside an open door, from which the arm cannot reach inside."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sim_helpers import episode_at

from rearrange.sim.geometry import segments_cross
from rearrange.sim.placement import stand_poses

OPEN = 1.2208  # the fridge's open angle (rad)


def test_segments_cross_by_hand():
    a, b = np.array([0.0, -1.0]), np.array([0.0, 1.0])  # the y axis from -1 to 1
    points = np.array([[-1.0, 0.0], [-1.0, 2.0], [0.5, 0.0], [-1.0, 1.0]])
    # to (1, 0): crosses; from (-1, 2): meets x = 0 at y = 1 (the end: not a proper cross);
    # from (0.5, 0): same side; from (-1, 1): at y = 0.5, crosses
    assert segments_cross(points, np.array([1.0, 0.0]), a, b).tolist() == [
        True, False, False, True,
    ]  # fmt: skip


def test_fridge_panel_where_the_sim_has_it(sim):
    sim.reset(episode_at("fridge_0", [], articulations={"fridge": OPEN}))
    sc = stand_poses.placement_now(sim)
    ((furniture, hinge, edge),) = sc.open_doors()
    assert furniture.name == "fridge_0"
    assert math.dist(hinge, edge) == pytest.approx(0.8, abs=1e-6)  # the door is as wide
    doors = sim.door_footprints()  # the physics world's panel footprint
    for t in np.linspace(0.0, 1.0, 5):
        x, y = hinge + t * (edge - hinge)
        assert doors.distance(x, y) < 0.06  # every point of our panel is on the sim's
    sim.set_articulation_pos("fridge", 0.0)
    assert stand_poses.placement_now(sim).open_doors() == []  # closed: no panel


def test_stands_behind_or_beside_the_open_door_are_rejected(sim):
    sim.reset(episode_at("fridge_0", [], articulations={"fridge": OPEN}))
    sc = stand_poses.placement_now(sim)
    ((_, hinge, edge),) = sc.open_doors()
    fridge = sim.layout.furniture_named("fridge_0")
    front = np.array([math.cos(fridge.front_yaw), math.sin(fridge.front_yaw)])
    target = np.array(fridge.center[:2]) + 0.1 * front  # on a shelf, inside the fridge
    middle = 0.5 * (hinge + edge)
    behind = middle + (middle - target)  # the line to the target runs through the panel
    side = np.array([-front[1], front[0]])
    in_front = np.array(fridge.center[:2]) + (fridge.half_size[0] + 0.6) * front
    beside = np.array(fridge.center[:2]) + (fridge.half_size[1] + 0.5) * side  # level with it
    cells = np.array([behind, in_front, beside, -beside + 2 * np.array(fridge.center[:2])])
    assert sc.reach_blocked(cells, target).tolist() == [True, False, True, True]
    # a target outside the fridge (in front of it) is blocked by the panel only
    outside = np.array(fridge.center[:2]) + (fridge.half_size[0] + 0.3) * front
    assert sc.reach_blocked(cells[1:3], outside).tolist() == [False, False]
    sim.set_articulation_pos("fridge", 0.0)
    closed = stand_poses.placement_now(sim)
    assert not closed.reach_blocked(cells, target).any()
