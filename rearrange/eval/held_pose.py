"""How the robot holds its object: what a place leg starts from.

The place skills learned on the grasps their task samples (`sim/episodes/arm_starts.pick_end`:
the object touching the cup or palm from some side, upright up to a tilt, any yaw); in a HAB
chain the place starts from whatever grasp the pick before it made. Two numbers compare the
two without a frame convention: the held object's centre's distance from the end effector and
its tilt (the angle between its own up axis and the world's).
"""

from __future__ import annotations

import math

import numpy as np


def up_axis_tilt_deg(quat_wxyz: np.ndarray) -> float:
    """Angle (degrees) between a body's z axis, for its world orientation `quat_wxyz`, and
    the world's z axis: 0 upright, 90 on its side, 180 upside down."""
    w, x, y, z = (
        float(v) for v in np.asarray(quat_wxyz, dtype=np.float64) / np.linalg.norm(quat_wxyz)
    )
    cos_tilt = 1.0 - 2.0 * (x * x + y * y)  # the z component of the rotated z axis
    return math.degrees(math.acos(max(-1.0, min(1.0, cos_tilt))))


def held_pose(sim) -> dict:
    """{"held_dist_m", "held_tilt_deg"} of the object the gripper holds; {} when it holds none."""
    obj = sim.held_object()
    if obj is None:
        return {}
    dist = float(np.linalg.norm(sim.object_pos(obj) - sim.ee_pos()))
    return {
        "held_dist_m": round(dist, 3),
        "held_tilt_deg": round(up_axis_tilt_deg(sim.object_quat(obj)), 1),
    }
