"""Base sliding (SimConfig.base_slide): along walls and round convex corners, never into
an obstacle; Footprints.nearest_point by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sim_layouts import table_room

from rearrange.sim.config import SimConfig
from rearrange.sim.episode_types import Episode
from rearrange.sim.placement import Footprints
from rearrange.sim.world import RearrangeSim

ROOM_W, ROOM_H = 6.0, 4.0
TABLE = (4.0, 2.0, 0.45, 0.6)  # centre x, y, half x, half y: corners at x 3.55/4.45, y 1.4/2.6
CORNER = np.array([TABLE[0] - TABLE[2], TABLE[1] - TABLE[3]])  # (3.55, 1.4)


def test_nearest_point_on_rotated_boxes_by_hand():
    fp = Footprints(boxes=np.array([[0.0, 0.0, 1.0, 0.5, math.pi / 2]]))  # world half 0.5 x 1
    assert fp.nearest_point(2.0, 3.0) == pytest.approx((0.5, 1.0))
    assert fp.nearest_point(-2.0, 0.3) == pytest.approx((-0.5, 0.3))
    assert fp.nearest_point(0.1, 0.2) == pytest.approx((0.1, 0.2))  # inside: itself
    assert Footprints(boxes=np.zeros((0, 5))).nearest_point(0.0, 0.0) == (math.inf, math.inf)


def _drive(slide: bool, steps: int = 20):
    """Touching the table's corner from below-left, heading 20 degrees right of straight at
    it (the move and both its axis parts go into the corner); drive forward. Poses of every
    step."""
    sim = RearrangeSim(SimConfig(base_slide=slide))
    layout = table_room(-9174, ROOM_W, ROOM_H, TABLE)
    sim.register_layout(layout)
    r = sim.config.robot_radius
    to_corner = math.radians(80.0)
    start = CORNER - (r + 0.001) * np.array([math.cos(to_corner), math.sin(to_corner)])
    sim.reset(Episode("slide", "nav", "train", layout.seed, (*start, to_corner - math.radians(20))))
    poses = [sim.base_pose()]
    try:
        for _ in range(steps):
            sim.step(None, None, np.array([1.0, 0.0]))
            poses.append(sim.base_pose())
    finally:
        sim.close()
    return np.array(poses), Footprints(layout), r


def test_base_slides_round_a_convex_corner_without_entering_it():
    poses, fp, r = _drive(slide=True)
    assert all(fp.distance(x, y) >= r - 1e-9 for x, y, _ in poses)
    # round the corner and along the table's near side (y = 1.4): 20 steps of <= 0.067 m
    assert poses[-1][0] > CORNER[0] + 0.3 and poses[-1][1] <= CORNER[1] - r + 1e-6
    # the old axis-only slide could not leave the corner: both axis parts go into it
    x_only = (poses[0][0] + 0.0667 * math.cos(poses[0][2]), poses[0][1])
    y_only = (poses[0][0], poses[0][1] + 0.0667 * math.sin(poses[0][2]))
    assert fp.distance(*x_only) < r and fp.distance(*y_only) < r


def test_without_slide_the_base_stops_at_the_corner():
    poses, _, _ = _drive(slide=False)
    assert np.allclose(poses[-1][:2], poses[0][:2])
