"""Robot sliding (SimConfig.robot_slide): a base move that the arm against a wall stops
before it starts moves its free part instead (the turn, the translation, an axis part),
never deeper than block_depth; without it the robot repeats the blocked step frozen."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sim_layouts import table_room

from rearrange.sim.config import SimConfig
from rearrange.sim.episode_types import Episode
from rearrange.sim.world import RearrangeSim

ROOM_W, ROOM_H = 6.0, 4.0  # the east wall's inner face is x = 6.0


def _against_east_wall(slide: bool, seed: int, **config) -> RearrangeSim:
    """Facing the east wall (yaw 0), driven forward until the resting arm, which reaches
    ~0.67 m ahead of the base centre, stops the base well clear of the wall's disc contact."""
    sim = RearrangeSim(SimConfig(robot_slide=slide, **config))
    layout = table_room(seed, ROOM_W, ROOM_H, table=(1.0, 1.0, 0.3, 0.3))
    sim.register_layout(layout)
    sim.reset(Episode("slide", "nav", "train", layout.seed, (4.8, 2.0, 0.0)))
    for _ in range(30):
        sim.step(None, None, np.array([1.0, 0.0]))
    return sim


@pytest.mark.parametrize("slide", [True, False])
def test_arm_against_a_wall_stops_the_base_short_of_its_disc_contact(slide):
    sim = _against_east_wall(slide, seed=-9301 - int(slide))
    try:
        x, _, yaw = sim.base_pose()
        r = sim.config.robot_radius
        assert x < ROOM_W - r - 0.2  # the base disc is far from the wall: the arm stopped it
        assert yaw == pytest.approx(0.0, abs=1e-9)  # a straight push has no free part
        assert sim.blocked_steps > 0 and sim.static_depth <= sim.config.block_depth + 1e-6
    finally:
        sim.close()


def test_drive_and_turn_into_the_wall_slides_a_free_part_and_freezes_without():
    """Forward and left into the wall: the gripper sits right of the base's axis, so the
    left turn swings it in and the whole move is blocked from its start. With the slide a
    part of it goes through each step (here the move's small y part, along the wall), the
    turn or the translation alone, never both; without it the robot is frozen."""
    ends = {}
    for slide, seed in ((True, -9303), (False, -9304)):
        sim = _against_east_wall(slide, seed)
        try:
            before = np.array(sim.base_pose())
            assert sim.ee_pos()[1] < before[1] - 0.1  # the gripper is right of the axis
            prev = before
            for _ in range(10):
                sim.step(None, None, np.array([1.0, 1.0]))
                now = np.array(sim.base_pose())
                turned = abs(now[2] - prev[2]) > 1e-12
                moved = np.hypot(*(now[:2] - prev[:2])) > 1e-12
                assert not (turned and moved)  # one part, never the blocked whole
                assert sim.static_depth <= sim.config.block_depth + 1e-6
                prev = now
            ends[slide] = now - before
        finally:
            sim.close()
    assert np.abs(ends[False]).max() < 1e-9
    # the move's y part: 6.67 cm a step at a midpoint heading of 2.5 / 30 / 2 rad
    step_y = 2.0 / 30 * math.sin(2.5 / 30 / 2)
    assert ends[True][1] == pytest.approx(10 * step_y, rel=1e-6)
    assert ends[True][0] == pytest.approx(0.0, abs=1e-9) and ends[True][2] == 0.0


@pytest.mark.parametrize("with_base", [True, False])
def test_the_arm_slides_in_the_same_step_as_the_base_part(with_base):
    """Drive and turn into the wall while bending the elbow: the whole step is blocked, the
    base takes a free part of its move, and (arm_slide_with_base) the arm slides from the
    pose that part ends in, in the same step; without it the base part took the step and the
    arm stayed put, so a policy asking for both froze."""
    sim = _against_east_wall(True, -9305 - int(with_base), arm_slide_with_base=with_base)
    try:
        q0 = sim.arm_joint_pos().copy()
        both = 0
        for _ in range(5):
            b, q = np.array(sim.base_pose()), sim.arm_joint_pos().copy()
            sim.step(np.array([0, 0, 0, 1.0, 0, 0, 0]), None, np.array([1.0, 1.0]))
            base_moved = np.abs(np.array(sim.base_pose()) - b).max() > 1e-9
            arm_moved = np.abs(sim.arm_joint_pos() - q).max() > 1e-9
            both += base_moved and arm_moved
            assert sim.static_depth <= sim.config.block_depth + 1e-6
        dq = sim.arm_joint_pos() - q0
        assert sim.blocked_steps > 0
        if with_base:
            assert both >= 1 and sim.arm_slid_steps >= 1
            # only the elbow was asked to move (0.0125 rad a step at most)
            assert 0.0125 < dq[3] <= 5 * 0.0125 + 1e-9
            assert np.abs(np.delete(dq, 3)).max() < 1e-9
        else:
            assert both == 0 and np.abs(dq).max() < 1e-12
    finally:
        sim.close()
