"""The obstacle range scan behind the "rays" sensor (nav's `state_rays` preset): ray vs 2-D
box geometry by hand, then the real sim in a hand-made room, where the robot, its arm and
free objects must not be seen and a legged table reads as its whole footprint."""

from __future__ import annotations

import math
import os

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sim_layouts import table_room  # noqa: E402

from rearrange.sim.episode_types import Episode, ObjectPlacement  # noqa: E402
from rearrange.sim.layout_types import Layout  # noqa: E402
from rearrange.sim.placement import Footprints  # noqa: E402
from rearrange.sim.world import RearrangeSim  # noqa: E402
from rearrange.tasks.sensors import (  # noqa: E402
    RAY_ANGLES,
    RAY_COUNT,
    RAY_MAX_RANGE,
    SkillTarget,
    build_observation,
)

# --------------------------------------------------------------- Footprints.ray_distances


def test_ray_hits_box_face_at_hand_computed_distance():
    fp = Footprints(boxes=np.array([[3.0, 0.0, 0.5, 1.0, 0.0]]))  # x 2.5..3.5, y -1..1
    angles = np.array([0.0, math.pi, math.pi / 2, math.atan2(0.9, 2.5), math.atan2(1.1, 2.5)])
    r = fp.ray_distances(0.0, 0.0, angles, 5.0)
    # ahead: the front face; behind / left: nothing; just inside / outside the corner at y=1
    assert r == pytest.approx([2.5, 5.0, 5.0, math.hypot(2.5, 0.9), 5.0])


def test_rotated_box_and_range_cap():
    # A 45-degree square of half side 0.5 centred 2 m ahead: its corner points at the origin.
    fp = Footprints(boxes=np.array([[2.0, 0.0, 0.5, 0.5, math.pi / 4]]))
    assert fp.ray_distances(0.0, 0.0, np.array([0.0]), 5.0)[0] == pytest.approx(
        2.0 - 0.5 * math.sqrt(2.0)
    )
    assert fp.ray_distances(0.0, 0.0, np.array([0.0]), 1.0)[0] == 1.0  # capped


def test_inside_a_box_reads_zero_and_no_boxes_read_max():
    fp = Footprints(boxes=np.array([[0.0, 0.0, 1.0, 1.0, 0.3]]))
    assert np.all(fp.ray_distances(0.2, 0.1, RAY_ANGLES, 4.0) == 0.0)
    empty = Footprints(boxes=np.zeros((0, 5)))
    assert np.all(empty.ray_distances(0.0, 0.0, RAY_ANGLES, 4.0) == 4.0)


def test_axis_parallel_rays_on_a_slab_boundary_are_finite():
    fp = Footprints(boxes=np.array([[3.0, 0.0, 0.5, 1.0, 0.0]]))
    r = fp.ray_distances(0.0, 1.0, np.array([0.0, math.pi / 2]), 5.0)  # along the y=1 face
    assert np.all(np.isfinite(r)) and r[0] == pytest.approx(2.5) and r[1] == 5.0


# ----------------------------------------------------------------- real sim, hand-made room

ROOM_W, ROOM_H = 6.0, 4.0
TABLE = (4.0, 2.0, 0.45, 0.6)  # centre x, y, half x, half y (a legged table, 0.75 m high)
ROBOT = (2.0, 2.0)


def _room() -> Layout:
    return table_room(-9173, ROOM_W, ROOM_H, TABLE)


@pytest.fixture(scope="module")
def room_sim():
    sim = RearrangeSim()
    layout = _room()
    sim.register_layout(layout)  # the sim loads layouts by seed
    # A free object on the floor right behind the robot, in the path of the backward ray.
    can = ObjectPlacement("tomato_soup_can", (ROBOT[0] - 0.8, ROBOT[1], 0.06), (1, 0, 0, 0), "")
    sim.reset(Episode("rays", "nav", "train", layout.seed, (*ROBOT, 0.0), [can]))
    yield sim
    sim.close()


def _ranges(sim) -> np.ndarray:
    obs = build_observation("nav", "state_rays", sim, SkillTarget(nav_goal=np.zeros(3)))
    assert obs["rays"].shape == (RAY_COUNT,) and obs["rays"].dtype == np.float32
    return obs["rays"].astype(np.float64) * RAY_MAX_RANGE


def _hand_ranges(x: float, y: float, yaw: float) -> dict[int, float]:
    """Ray index -> distance, computed by hand for the room (k * 90 degrees and 45)."""
    q = RAY_COUNT // 4
    ahead = TABLE[0] - TABLE[2] - x if abs(yaw) < 1e-9 else None
    out = {q: ROOM_H - y, 2 * q: x, 3 * q: y}  # left wall, back wall, right wall
    if ahead is not None:
        out[0] = ahead  # the table's front edge (its top; the legs are 0.9 m apart)
        out[q // 2] = (ROOM_H - y) * math.sqrt(2.0)  # 45 degrees: over the table to the wall
    return out


def test_rays_read_hand_computed_room_distances(room_sim):
    r = _ranges(room_sim)
    for k, d in _hand_ranges(*ROBOT, 0.0).items():
        assert r[k] == pytest.approx(d, abs=1e-6), k
    # 1.55 m to the table: the footprint, not the gap between its legs (seen at base height)
    assert r[0] == pytest.approx(1.55, abs=1e-6)


def test_rays_turn_with_the_robot(room_sim):
    assert room_sim.set_base_pose(ROBOT[0], ROBOT[1], math.pi / 2)
    try:
        r = _ranges(room_sim)
        q = RAY_COUNT // 4
        # Facing +y: ahead is the far wall, to the right the table, behind the near wall.
        assert r[0] == pytest.approx(ROOM_H - ROBOT[1])
        assert r[3 * q] == pytest.approx(TABLE[0] - TABLE[2] - ROBOT[0])
        assert r[2 * q] == pytest.approx(ROBOT[1])
    finally:
        assert room_sim.set_base_pose(ROBOT[0], ROBOT[1], 0.0)


def test_rays_ignore_the_robot_its_arm_and_free_objects(room_sim):
    before = _ranges(room_sim)
    # Nothing reads closer than the nearest obstacle: the base (radius 0.3 m) is not seen,
    # nor the can 0.8 m behind (the backward ray reaches the wall 2 m away).
    assert before.min() > 1.0
    assert before[RAY_COUNT // 2] == pytest.approx(ROBOT[0])
    room_sim.set_arm_joint_pos([1.5, 0.5, 0.0, 0.5, 0.0, 0.5, 0.0])  # arm swung out sideways
    try:
        assert np.array_equal(_ranges(room_sim), before)
    finally:
        room_sim.set_arm_joint_pos([-0.45, -1.08, 0.1, 0.935, -0.001, 1.573, 0.005])


def test_open_fridge_door_shortens_the_rays_toward_it():
    from rearrange.sim.apartment import generate_layout
    from rearrange.sim.snapshot import stand_in_front

    sim = RearrangeSim()
    try:
        start = stand_in_front(generate_layout(0, "train"), "fridge_0", 1.2)
        sim.reset(Episode("door", "nav", "train", 0, start))
        closed = sim.obstacle_ranges(RAY_ANGLES, RAY_MAX_RANGE)
        sim.set_articulation_pos("fridge", 1.5)
        opened = sim.obstacle_ranges(RAY_ANGLES, RAY_MAX_RANGE)
        assert np.all(opened <= closed + 1e-9) and (closed - opened).max() > 0.3
        sim.config.door_blocks_base = False  # the scan follows what blocks the base
        assert np.array_equal(sim.obstacle_ranges(RAY_ANGLES, RAY_MAX_RANGE), closed)
    finally:
        sim.close()
