"""How a place leg finds its object held: distance from the end effector and tilt, checked
against hand-computed rotations."""

import math

import numpy as np
import pytest

from rearrange.eval.held_pose import held_pose, up_axis_tilt_deg


@pytest.mark.parametrize(
    "quat,tilt",
    [
        ((1.0, 0.0, 0.0, 0.0), 0.0),  # upright
        ((math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4)), 0.0),  # a yaw keeps it upright
        ((math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0), 90.0),  # 90° about x
        ((math.cos(math.pi / 6), 0.0, math.sin(math.pi / 6), 0.0), 60.0),  # 60° about y
        ((0.0, 0.0, 1.0, 0.0), 180.0),  # upside down
        ((2.0, 0.0, 0.0, 0.0), 0.0),  # not normalised: still upright
    ],
)
def test_tilt_is_the_angle_between_the_bodys_up_axis_and_the_worlds(quat, tilt):
    assert up_axis_tilt_deg(np.array(quat)) == pytest.approx(tilt, abs=1e-6)


class _Sim:
    def __init__(self, held):
        self.held = held

    def held_object(self):
        return self.held

    def object_pos(self, i):
        assert i == 2
        return np.array([1.3, 0.4, 0.8])

    def object_quat(self, i):
        return np.array([math.cos(math.pi / 12), math.sin(math.pi / 12), 0.0, 0.0])  # 30° about x

    def ee_pos(self):
        return np.array([1.0, 0.0, 0.8])


def test_held_pose_measures_the_held_object_and_nothing_when_empty_handed():
    assert held_pose(_Sim(2)) == {"held_dist_m": 0.5, "held_tilt_deg": 30.0}
    assert held_pose(_Sim(None)) == {}
