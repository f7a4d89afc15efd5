"""Does turning the base in place sweep the arm (or the held object) into a loose object?

The robot collides with free objects (a kinematic robot shoves them). At a pick-ready pose
the resting arm and a held object stick out ~0.35-0.8 m ahead of the base at counter height
(0.76-1.4 m), i.e. over the counter; turning there to drive away sweeps the objects next to
the target off the counter (a later pick finds its object on the floor, a placed object
leaves its goal). `PathFollower` asks `turn_clear` before a large turn and turns the other
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
from rearrange.sim.placement import arm_discs, held_disc_now
from rearrange.sim.placement.clearance import points_box_dist, world_boxes

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
        rows.append([held_disc_now(sim, held)])
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


_BOXES: dict = {}


def scene_boxes(sim: Any) -> np.ndarray:
    """[B, 7] rows (cx, cy, hx, hy, yaw, z_lo, z_hi): walls and furniture boxes with the
    doors and drawers as they are now (cached per layout and rounded joint values)."""
    arts = {a.name: round(float(sim.articulation_pos(a.name)), 2) for a in sim.layout.articulations}
    key = (id(sim.layout), tuple(sorted(arts.items())))
    hit = _BOXES.get(key)
    if hit is None:
        b = world_boxes(sim.layout, arts)
        hit = np.column_stack([b.center, b.half, b.yaw, b.z])
        if len(_BOXES) > 16:
            _BOXES.clear()
        _BOXES[key] = hit
    return hit


def box_hits(
    disc: np.ndarray, boxes: np.ndarray, x: float, y: float, yaws: np.ndarray
) -> np.ndarray:
    """[B] whether the disc at base pose (x, y, yaw) for any of `yaws` touches each box."""
    if not len(boxes) or not len(yaws):
        return np.zeros(len(boxes), dtype=bool)
    d = disc[0]
    c, s = np.cos(yaws), np.sin(yaws)
    px, py = x + c * d[0] - s * d[1], y + s * d[0] + c * d[1]
    dist = points_box_dist(px, py, boxes[:, :2], boxes[:, 2:4], boxes[:, 4])  # [Y, B]
    z_hit = (boxes[:, 5] < d[4] + MARGIN) & (boxes[:, 6] > d[3] - MARGIN)
    return np.any(dist < d[2] + MARGIN, axis=0) & z_hit


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
    if sweep_hits(discs, objs, x, y, _yaws(yaw, delta)):
        return False
    if sim.held_object() is None:
        return True
    held = np.array([held_disc_now(sim, sim.held_object())])
    # a held object swung into a counter edge, a fridge shelf or the door is torn off
    # the suction cup (next to the fridge, on prepare_groceries nav legs); boxes it
    # already touches are ignored as for objects
    boxes = scene_boxes(sim)
    boxes = boxes[~box_hits(held, boxes, x, y, np.array([yaw]))]
    return not np.any(box_hits(held, boxes, x, y, _yaws(yaw, delta)))
