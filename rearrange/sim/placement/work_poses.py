"""Where the robot stands to open or close a door or drawer: a base pose from which the
handle's whole travel (closed to open) stays within the arm's reach.

The open/close skill episodes start around these poses (`RobotPlacement.spawn_work`), the
base-moving oracles drive to them, and the HAB executor's nav to the fridge ends there.
"""

from __future__ import annotations

import math

import numpy as np

from rearrange.sim import apartment as A
from rearrange.sim.geometry import rot_z, wrap_angle
from rearrange.sim.layout_types import Articulation, Layout
from rearrange.sim.placement.footprints import Footprints

# Fridge work pose in the door's hinge frame (x out of the fridge, y along the closed door
# from the hinge toward the handle is -y): from here the handle's whole arc (closed to
# open, 0.72 m radius) lies 0.5-0.83 m from the shoulder, and the swinging door stays
# > 0.4 m from the base centre. The robot faces the middle of the arc.
FRIDGE_WORK_XY = (0.92, -0.87)
FRIDGE_WORK_NOISE = 0.05  # m, uniform per axis, for close spawns
FRIDGE_WORK_YAW_NOISE = math.radians(8)
# Drawer work pose: in front of the mid-travel handle, facing the cabinet, shifted so the
# handle line passes the robot's right side at the resting EE's lateral offset (-0.24 m in
# the base frame) less a margin for the ±30° facing rule: the closed handle (0.83 m away)
# and the open one (0.38 m) both stay in reach, and the arm ends either task near rest.
DRAWER_WORK_OUT = 0.6  # m in front of the mid-travel handle
DRAWER_WORK_SIDE = -0.15  # m, the handle's offset to the robot's left (negative: right)
DRAWER_WORK_NOISE = 0.04  # m, uniform per axis, for close spawns

WORK_SHIFT_MAX = 0.3  # m the work pose may move off its nominal spot when that is blocked
WORK_REACH = (0.35, 0.9)  # m, shoulder to both ends of the handle travel (horizontal)


def fridge_hinge(handle_closed, front_yaw: float) -> np.ndarray:
    """World position of the fridge door's hinge axis (at handle height) from the closed
    handle position; in the door frame the handle sits at (door thickness + handle offset,
    −(door width − inset)) from the hinge (`rearrange.sim.apartment` dimensions)."""
    local = np.array(
        [
            A.FRIDGE_DOOR_THICKNESS + A.FRIDGE_HANDLE_OUT,
            -2 * A.FRIDGE_HALF[1] + A.FRIDGE_HANDLE_INSET,
            0,
        ]
    )
    hinge = np.asarray(handle_closed, dtype=np.float64) - rot_z(local, front_yaw)
    hinge[2] = handle_closed[2]
    return hinge


def handle_travel_ends(layout: Layout, art: Articulation) -> list[np.ndarray]:
    """The handle's (x, y) at both ends of its travel: closed, then open."""
    yaw = layout.furniture_named(art.furniture).front_yaw
    closed = np.asarray(art.handle_closed_pos[:2], dtype=np.float64)
    if art.kind == "hinge":
        hinge = fridge_hinge(art.handle_closed_pos, yaw)[:2]
        return [closed, hinge + rot_z(closed - hinge, art.open - art.closed)]
    front = np.array([math.cos(yaw), math.sin(yaw)])
    return [closed, closed + front * (art.open - art.closed)]


def _nominal_work_pose(layout: Layout, art: Articulation) -> tuple[np.ndarray, float, list]:
    """(stand xy, heading, handle xy at both ends of the travel) before any shift."""
    yaw = layout.furniture_named(art.furniture).front_yaw
    front = np.array([math.cos(yaw), math.sin(yaw)])
    ends = handle_travel_ends(layout, art)
    if art.kind == "hinge":
        hinge = fridge_hinge(art.handle_closed_pos, yaw)[:2]
        stand = hinge + rot_z(FRIDGE_WORK_XY, yaw)
        mid = hinge + rot_z(ends[0] - hinge, 0.5 * (art.open - art.closed))
        return stand, math.atan2(mid[1] - stand[1], mid[0] - stand[0]), ends
    left = np.array([front[1], -front[0]])  # the robot's left while it faces the cabinet
    stand = 0.5 * (ends[0] + ends[1]) + DRAWER_WORK_OUT * front - DRAWER_WORK_SIDE * left
    return stand, wrap_angle(yaw + math.pi), ends


def articulation_work_pose(
    layout: Layout,
    art: Articulation,
    footprints: Footprints | None = None,
    robot_radius: float = 0.3,
    shoulder_x: float = 0.033,
) -> tuple[float, float, float]:
    """Base pose (x, y, yaw) for working `art`'s handle over its whole travel (fridge: see
    FRIDGE_WORK_XY, facing the middle of the arc; drawer: DRAWER_WORK_OUT in front of the
    mid-travel handle, which lies DRAWER_WORK_SIDE to the robot's left, facing the
    cabinet). Where walls or furniture (`footprints`, default the layout's) block that
    spot, the nearest free one within WORK_SHIFT_MAX that keeps both ends of the travel
    within WORK_REACH of the shoulder (a cabinet beside the fridge blocked it)."""
    stand, yaw, ends = _nominal_work_pose(layout, art)
    fp = footprints if footprints is not None else Footprints(layout)
    head = np.array([math.cos(yaw), math.sin(yaw)])
    for r in np.arange(0.0, WORK_SHIFT_MAX + 1e-9, 0.05):
        for a in np.linspace(0.0, 2 * math.pi, 1 if r == 0 else 16, endpoint=False):
            xy = stand + r * np.array([math.cos(a), math.sin(a)])
            if fp.collides(float(xy[0]), float(xy[1]), robot_radius + 0.02):
                continue
            shoulder = xy + shoulder_x * head
            reach = [float(np.linalg.norm(e - shoulder)) for e in ends]
            if WORK_REACH[0] <= min(reach) and max(reach) <= WORK_REACH[1]:
                return float(xy[0]), float(xy[1]), float(yaw)
    return float(stand[0]), float(stand[1]), float(yaw)  # boxed in: the nominal pose
