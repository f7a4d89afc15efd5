"""A held object swept into furniture while turning (`arm_sweep.box_hits`)."""

import math

import numpy as np

from rearrange.skills.arm_sweep import _yaws, box_hits

# base-frame disc of a held object: 0.8 m ahead, radius 0.05, 1.00-1.10 m high
DISC = np.array([[0.8, 0.0, 0.05, 1.0, 1.1]])
# a 0.2 x 0.2 m box centred at world (0, 0.8), 0.9-1.2 m high (a fridge shelf, say)
SHELF = np.array([[0.0, 0.8, 0.1, 0.1, 0.0, 0.9, 1.2]])


def test_turning_left_sweeps_the_held_object_into_the_box():
    # at yaw +90 deg the disc centre is at (0, 0.8): inside the box
    assert box_hits(DISC, SHELF, 0.0, 0.0, _yaws(0.0, math.pi / 2)).tolist() == [True]
    # turning right the disc ends at (0, -0.8), 1.6 m from the box
    assert box_hits(DISC, SHELF, 0.0, 0.0, _yaws(0.0, -math.pi / 2)).tolist() == [False]


def test_a_box_below_or_above_the_held_object_is_not_hit():
    low = SHELF.copy()
    low[0, 5:7] = (0.0, 0.9)  # top 0.9 m: 0.1 m under the disc, more than the 3 cm margin
    assert box_hits(DISC, low, 0.0, 0.0, _yaws(0.0, math.pi / 2)).tolist() == [False]


def test_near_miss_uses_radius_plus_margin():
    # yaw 0: disc at (0.8, 0); a box whose near face is at x = 0.8 + 0.05 + 0.02 (inside
    # radius + 3 cm margin) is hit, at 0.8 + 0.05 + 0.04 it is not
    for gap, hit in ((0.02, True), (0.04, False)):
        box = np.array([[0.85 + gap + 0.1, 0.0, 0.1, 0.1, 0.0, 0.9, 1.2]])
        assert box_hits(DISC, box, 0.0, 0.0, np.array([0.0])).tolist() == [hit]
