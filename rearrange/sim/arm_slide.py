"""The arm slides along what blocks it (`SimConfig.arm_slide`, docs/DESIGN.md §3).

A kinematic arm whose step is wholly blocked stays where it is; a deterministic policy then
sees the same observation, asks for the same move, and stays there for the rest of its
episode (the shipped open_fridge: 13 of its 22 failed val episodes of seed 1 pressed the
wrist against the opened door's edge from step ~140 to 300; close_fridge --base-movement:
every failure held its gripper against the open door from step ~20). A dynamic arm under
position control, as in Habitat, slides along a surface it is pushed against. Here the
blocked joint move loses the part of it that drives a robot point into what it touches:
for each robot-vs-static contact of the start pose, the row n·J_arm (the contact normal's
component of that point's displacement per arm joint displacement) bounds the move: the
point may go in no further than the room the cap leaves it, less `BACK_OFF` (a contact at
the cap backs out a little, so the slide's second-order curve does not take it over the
cap), and the move is projected onto the bounds it breaks (least squares, a few passes, as
the bounds a projection frees can bind again). What is left is checked like any move.
"""

from __future__ import annotations

import mujoco
import numpy as np

PASSES = 4  # projection passes (contacts a pass freed may bind again)
BACK_OFF = 5e-4  # m a contact at the cap is moved back out per slid step


def contact_rows(
    model,
    data,
    robot_geoms: np.ndarray,
    static_geoms: np.ndarray,
    arm_dof: np.ndarray,
    skip_geoms: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """([k, 7] rows, [k] depths): for each robot-vs-static contact in `data.contact` (a
    collision pass of the pose now; `skip_geoms`, e.g. the held handle, left out), the
    displacement of the robot point into the other geom along the contact normal per arm
    joint displacement, and the contact's depth (m). MuJoCo's normal (frame[0:3]) points
    from geom1 to geom2."""
    rows, depths = [], []
    jacp = np.zeros((3, model.nv))
    for i in range(data.ncon):
        c = data.contact[i]
        g1, g2 = int(c.geom1), int(c.geom2)
        if robot_geoms[g1] and static_geoms[g2] and g2 not in skip_geoms:
            robot_geom, sign = g1, 1.0  # the robot moving along +n goes into geom2
        elif robot_geoms[g2] and static_geoms[g1] and g1 not in skip_geoms:
            robot_geom, sign = g2, -1.0
        else:
            continue
        mujoco.mj_jac(model, data, jacp, None, c.pos, model.geom_bodyid[robot_geom])
        rows.append(sign * (c.frame[:3] @ jacp[:, arm_dof]))
        depths.append(max(-float(c.dist), 0.0))
    n = len(arm_dof)
    return np.asarray(rows, dtype=np.float64).reshape(-1, n), np.asarray(depths)


def project_move(
    rows: np.ndarray, depths: np.ndarray, move: np.ndarray, cap: float, tol: float = 1e-9
) -> np.ndarray:
    """`move` less what drives the contacts of `rows` deeper than `cap` (each may go in
    `cap - depth - BACK_OFF`, to first order): repeated least-squares projection of `move`
    onto the bounds it breaks, met with equality."""
    move = np.asarray(move, dtype=np.float64)
    out = move.copy()
    if rows.size == 0:
        return out
    room = cap - np.asarray(depths, dtype=np.float64) - BACK_OFF
    active = np.zeros(len(rows), dtype=bool)
    for _ in range(PASSES):
        active |= rows @ out > room + tol
        if not active.any():
            break
        a = rows[active]
        lam = np.linalg.lstsq(a @ a.T, a @ move - room[active], rcond=None)[0]
        out = move - a.T @ lam
        if not (rows @ out > room + tol).any():
            break
    return out


__all__ = ["contact_rows", "project_move"]
