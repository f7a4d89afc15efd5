"""NavMap: occupancy, geodesic distances (hand-computed), paths, sampling, snapping."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sim_layouts import UP, two_rooms

from rearrange.sim.layout_types import Furniture
from rearrange.sim.navmap import NavMap

R = 0.3  # robot radius


@pytest.fixture(scope="module")
def door_map() -> NavMap:
    return NavMap(two_rooms(door=(4.0, 5.2)), robot_radius=R)


def _around_corner(a, corner, r) -> float:
    """Length from point a, tangent to the circle (corner, r), along the arc to its top."""
    d = math.dist(a, corner)
    tangent = math.sqrt(d * d - r * r)
    to_a = math.atan2(a[1] - corner[1], a[0] - corner[0])
    touch = to_a - math.acos(r / d)  # tangent point on the side facing the doorway
    arc = (touch - math.pi / 2) % (2 * math.pi)  # from the tangent point over to the top
    return tangent + r * arc


def test_geodesic_through_the_doorway_matches_hand_computed(door_map):
    # Wall x in [3.95, 4.05], doorway y in [4.0, 5.2]. A cell is navigable when its whole
    # square is >= R from the wall, so for cell centres the lower door post is the wall end
    # grown by half a cell (h = 0.025): x in [3.925, 4.075], y <= 4.025, inflated by R, a
    # stadium whose top corners are circles of radius R around (3.925, 4.025), (4.075, 4.025).
    a, b = (2.0, 0.8), (6.0, 0.8)
    h = 0.025
    half = _around_corner(a, (3.95 - h, 4.0 + h), R)
    expected = 2 * half + 0.1 + 2 * h  # two symmetric halves + the flat top of the wall end
    assert expected == pytest.approx(8.305, abs=1e-3)  # the hand computation itself
    got = door_map.geodesic_distance(a, b)
    assert got == pytest.approx(expected, rel=0.015)  # 32-direction grid: ≤ 1.3 % + a cell
    assert got > math.dist(a, b) + 4.0  # far longer than the straight line through the wall


def test_geodesic_in_open_space_is_euclidean(door_map):
    assert door_map.geodesic_distance((1.0, 1.0), (3.0, 1.0)) == pytest.approx(2.0, abs=1e-6)
    # a 1:3 slope is one of the 32 grid directions: exact up to the cell-centre offset
    assert door_map.geodesic_distance((1.025, 1.025), (1.625, 2.825)) == pytest.approx(
        math.hypot(0.6, 1.8), abs=1e-4
    )


def test_geodesic_never_below_euclidean_and_symmetric(door_map):
    rng = np.random.default_rng(0)
    pts = [door_map.sample_navigable(rng) for _ in range(30)]
    for p, q in zip(pts[::2], pts[1::2]):
        d = door_map.geodesic_distance(p, q)
        assert d >= math.dist(p, q) - 1e-9
        assert d == pytest.approx(door_map.geodesic_distance(q, p), rel=1e-4)


def test_unreachable_room_is_inf():
    closed = NavMap(two_rooms(door=None), robot_radius=R)
    assert closed.geodesic_distance((2.0, 3.0), (6.0, 3.0)) == math.inf
    assert closed.shortest_path((2.0, 3.0), (6.0, 3.0)) == []
    # a doorway narrower than the robot is closed too
    narrow = NavMap(two_rooms(door=(3.0, 3.5)), robot_radius=R)
    assert narrow.geodesic_distance((2.0, 3.0), (6.0, 3.0)) == math.inf


def test_occupancy_inflation_and_bounds(door_map):
    assert door_map.is_navigable(2.0, 3.0)
    assert not door_map.is_navigable(4.0, 2.0)  # inside the wall
    assert not door_map.is_navigable(3.7, 2.0)  # 0.25 m from the wall face < radius
    assert door_map.is_navigable(3.59, 2.0)  # its cell [3.55, 3.6] is >= 0.35 m from the face
    assert not door_map.is_navigable(3.61, 2.0)  # cell [3.6, 3.65]: 0.3 m, no safety margin
    assert not door_map.is_navigable(0.2, 3.0)  # too close to the outer wall
    assert not door_map.is_navigable(-1.0, 3.0)  # outside the bounds
    assert door_map.is_navigable(4.0, 4.6)  # in the doorway


def test_rotated_furniture_footprint():
    layout = two_rooms()
    # front along +y: local x (depth 0.3) is world y, local y (width 1.0) is world x
    layout.furniture = [
        Furniture("counter_0", "counter", "kitchen", (2.0, 3.0), (0.3, 1.0, 0.45), UP)
    ]
    nm = NavMap(layout, robot_radius=R)
    assert not nm.is_navigable(2.0 + 1.25, 3.0)  # within width + radius
    assert nm.is_navigable(2.0 + 1.35, 3.0)
    assert not nm.is_navigable(2.0, 3.0 + 0.55)  # within depth + radius
    assert nm.is_navigable(2.0, 3.0 + 0.65)


def test_shortest_path_goes_through_the_door_and_is_clear(door_map):
    a, b = (2.0, 0.8), (6.0, 0.8)
    path = door_map.shortest_path(a, b)
    assert path[0] == a and path[-1] == b
    crossing = [p for p, q in zip(path, path[1:]) if (p[0] - 4.0) * (q[0] - 4.0) <= 0]
    assert crossing and all(4.0 <= p[1] <= 5.2 for p in crossing)
    for p, q in zip(path, path[1:]):
        assert door_map.line_of_sight(p, q)
    length = sum(math.dist(p, q) for p, q in zip(path, path[1:]))
    assert length == pytest.approx(door_map.geodesic_distance(a, b), rel=0.02)


def test_snap_and_snapped_geodesic(door_map):
    assert door_map.snap(2.0, 3.0) == (2.0, 3.0)
    x, y = door_map.snap(3.9, 2.0)  # too close to the wall: pushed out to the cell [3.55, 3.6]
    assert door_map.is_navigable(x, y)
    assert x == pytest.approx(3.575, abs=1e-9) and y == pytest.approx(2.0, abs=0.03)
    # distance to an off-map point adds the snap distance
    d = door_map.geodesic_distance((2.0, 2.0), (3.9, 2.0))
    assert d == pytest.approx(1.9, abs=0.05)


def test_sample_navigable_near_respects_max_dist(door_map):
    rng = np.random.default_rng(1)
    for _ in range(20):
        p = door_map.sample_navigable(rng, near=(2.0, 1.0), max_dist=1.5)
        assert door_map.is_navigable(*p)
        assert door_map.geodesic_distance(p, (2.0, 1.0)) <= 1.5 + 0.05
    with pytest.raises(ValueError, match="no navigable cell"):
        NavMap(two_rooms(door=None), robot_radius=5.0).sample_navigable(rng)


def test_distance_field_is_cached_per_goal_cell(door_map):
    first = door_map.distance_field(6.0, 0.8)
    assert door_map.distance_field(6.01, 0.81) is first  # same cell: no recomputation
    assert door_map.distance_field(2.0, 0.8) is not first


def test_generated_apartment_is_connected():
    apartment = pytest.importorskip("rearrange.sim.apartment")
    for seed, split in [(0, "train"), (7, "val")]:
        layout = apartment.generate_layout(seed, split)
        nm = NavMap(layout, robot_radius=R)
        stands = []
        for rec in layout.receptacles:
            f = layout.furniture_named(rec.furniture)
            stand = nm.approach_point(rec.surface.center[0], rec.surface.center[1], f.front_yaw)
            assert stand is not None, rec.name
            stands.append(stand)
        for s in stands[1:]:
            d = nm.geodesic_distance(stands[0], s)
            assert math.dist(stands[0], s) <= d < math.inf
