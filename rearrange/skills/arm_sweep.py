"""Does turning the base in place sweep the arm (or the held object) into a loose object?

The robot collides with free objects (a kinematic robot shoves them). At a pick-ready pose
the resting arm and a held object stick out ~0.35-0.8 m ahead of the base at counter height
(0.76-1.4 m), i.e. over the counter; turning there to drive away swept the objects next to
the target off the counter (HAB issue 5: picks failed on objects lying on the floor, placed
objects moved). `PathFollower` asks `turn_clear` before a large turn and turns the other
way round or backs away from the furniture first when both directions sweep something.

Geometry (base frame discs x, y, radius, z_lo, z_hi, as `clearance.RobotClearance`):
the resting arm's discs (`clearance.arm_discs`), lowered by the rest tolerance (skills end
with the EE within 0.15 m of rest, not exactly there), plus discs around the actual
gripper and the actual held object.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rearrange.sim import objects
from rearrange.sim.placement import arm_discs

REST_SLACK = 0.15  # m: the arm may end a skill this far (EE) from rest, mostly lower
GRIPPER_RADIUS = 0.09  # m: disc covering gripper and fingers around the EE point
MARGIN = 0.03  # m: extra clearance to objects
YAW_STEP = 0.08  # rad: turn sampling


def robot_discs(sim: Any) -> np.ndarray:
    """[K, 5] base-frame discs covering the arm, the gripper and a held object now."""
    rest = arm_discs().copy()
    rest[:, 3] -= REST_SLACK
    ee = np.asarray(sim.ee_pos("base"), dtype=np.float64)
    rows = [rest, [[ee[0], ee[1], GRIPPER_RADIUS, ee[2] - 0.1, ee[2] + 0.1]]]
    held = sim.held_object()
    if held is not None:
        size = objects.object_type(sim.episode.objects[held].obj_type).size
        r = float(np.linalg.norm(size))
        p = np.asarray(sim.to_base_frame(sim.object_pos(held)), dtype=np.float64)
        rows.append([[p[0], p[1], r, p[2] - r, p[2] + r]])
    return np.vstack([np.asarray(r, dtype=np.float64).reshape(-1, 5) for r in rows])


def loose_objects(sim: Any) -> np.ndarray:
    """[N, 5] (x, y, footprint radius, z_lo, z_hi) of the free objects not held."""
    held = sim.held_object()
    out = []
    for i, o in enumerate(sim.episode.objects):
        if i == held:
            continue
        t = objects.object_type(o.obj_type)
        p = sim.object_pos(i)
        out.append((p[0], p[1], t.footprint_radius, p[2] - t.half_height, p[2] + t.half_height))
    return np.asarray(out, dtype=np.float64).reshape(-1, 5)


def sweep_hits(discs: np.ndarray, objs: np.ndarray, x: float, y: float, yaws: np.ndarray) -> bool:
    """Whether any disc at base pose (x, y, yaw) for any of `yaws` touches an object."""
    if not len(objs) or not len(yaws):
        return False
    c, s = np.cos(yaws)[:, None], np.sin(yaws)[:, None]  # [Y, 1]
    px = x + c * discs[None, :, 0] - s * discs[None, :, 1]  # [Y, K]
    py = y + s * discs[None, :, 0] + c * discs[None, :, 1]
    dist = np.hypot(px[..., None] - objs[:, 0], py[..., None] - objs[:, 1])  # [Y, K, N]
    near = dist < discs[None, :, 2, None] + objs[:, 2] + MARGIN
    z_hit = (objs[:, 3] < discs[:, 4, None] + MARGIN) & (objs[:, 4] > discs[:, 3, None] - MARGIN)
    return bool(np.any(near & z_hit[None]))


def _yaws(yaw: float, delta: float) -> np.ndarray:
    n = max(1, math.ceil(abs(delta) / YAW_STEP))
    return yaw + delta * np.arange(1, n + 1) / n


def turn_clear(sim: Any, delta: float, x: float | None = None, y: float | None = None) -> bool:
    """Whether turning by `delta` rad in place (at x, y: default the base) hits nothing.

    Objects the robot already touches at its current heading are ignored: they cannot be
    avoided by choosing the turn, and would otherwise block every turn."""
    bx, by, yaw = (float(v) for v in sim.base_pose())
    x, y = (bx if x is None else x), (by if y is None else y)
    discs, objs = robot_discs(sim), loose_objects(sim)
    if len(objs):
        touching = [
            sweep_hits(discs, objs[i : i + 1], x, y, np.array([yaw])) for i in range(len(objs))
        ]
        objs = objs[~np.asarray(touching, dtype=bool)]
    return not sweep_hits(discs, objs, x, y, _yaws(yaw, delta))
