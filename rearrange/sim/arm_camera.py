"""Extra cameras for evaluation videos: a side view of the gripper and its target while an arm
skill runs (the follow view looks over the robot's head, whose head and torso hide the
gripper during most picks and places), and the head depth camera at a low resolution for
a picture-in-picture inset."""

from __future__ import annotations

import math

import numpy as np

from rearrange.sim.render import CameraView

ARM_VIEW_DISTANCE = 1.7
"""m from the camera to its look-at point: the arm, the gripper and the target all fit."""
ARM_VIEW_ELEVATION = -30.0
"""degrees: looks down onto counter and shelf tops from beside the robot."""
ARM_VIEW_AZIMUTH = 75.0
"""degrees between the robot's heading and the camera's line of sight: the camera stands
beside the robot, 15° behind its shoulder line, so neither the head nor the torso lies
between it and the gripper."""
LOOKAT_TOWARD_BASE = 0.35
"""m the look-at point moves from the target toward the base (keeps the gripper in view)."""
LOOKAT_RAISE = 0.15
"""m the look-at point is raised above the target."""


def arm_view_side(sim, target) -> int:
    """+1 for a camera on the robot's left, -1 on its right: the side with more free floor
    (the base's range scan, `obstacle_ranges`) toward where the camera would stand, so the
    furniture beside the robot blocks the view less; the left on a tie."""
    angle = math.radians(180.0 - ARM_VIEW_AZIMUTH)
    left, right = sim.obstacle_ranges(np.array([angle, -angle]), ARM_VIEW_DISTANCE)
    return 1 if left >= right else -1


def arm_view(sim, target, side: int = 1) -> CameraView:
    """A free camera beside the robot (`side` as in `arm_view_side`) looking at `target` (a
    world point: the object to pick, the place goal, the handle to pull), pulled toward the
    base so the gripper stays in view; it moves only when the base moves."""
    x, y, yaw = (float(v) for v in sim.base_pose())
    t = np.asarray(target, np.float64)
    to_base = np.array([x - t[0], y - t[1]])
    dist = float(np.hypot(*to_base))
    shift = to_base / dist * min(LOOKAT_TOWARD_BASE, dist) if dist > 1e-6 else np.zeros(2)
    lookat = (t[0] + shift[0], t[1] + shift[1], t[2] + LOOKAT_RAISE)
    azimuth = math.degrees(yaw) - side * ARM_VIEW_AZIMUTH
    return CameraView(lookat, ARM_VIEW_DISTANCE, azimuth, ARM_VIEW_ELEVATION)


def render_head_depth(sim, size: int = 64) -> np.ndarray:
    """[size, size] float32 depth (m, clipped to the far plane) from the head camera the
    depth sensor uses (`render_depth`), with the same visibility options, at `size` pixels:
    the policy's view for a video inset, about 4x cheaper than the 128x128 sensor."""
    r = sim.renderer(size, size, head=True)
    r.enable_depth_rendering()
    try:
        r.update_scene(sim.data, camera=sim.idx.head_camera, scene_option=sim.head_vopt)
        depth = r.render().copy()
    finally:
        r.disable_depth_rendering()
    return np.clip(depth, 0.0, sim.config.camera_far)
