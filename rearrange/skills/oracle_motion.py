"""Collision-aware motion for the scripted skills in a world that blocks the robot.

Since issue 27 walls, fixed furniture, doors and drawers block the robot (a step that would
put a link deeper than 1 cm into them is cut short, `SimConfig.world_blocks_robot`), and a
contact costs force: 1e4 N/m x the summed depth of every contact point, of which more than
5000 N accumulated over an episode ends it (`tasks.force_limit`). A contact held at the
block depth reads 100-350 N per step, so a scripted skill that leans on geometry for 15-50
steps fails. The scripts therefore keep the robot *clear*, not merely unblocked.

Three pieces, all reading the sim's MuJoCo model and data (privileged, as the oracles are)
and acting only through the policy's actions:

- `Proximity` (`near_pairs`): the robot's links (and a held object) within a margin of the
  static geometry, each with its distance, closest point and separating direction, from
  MuJoCo's own convex distance (`mj_geomDistance`, the same meshes and boxes the world's
  blocking pass collides). A box broadphase keeps it at ~0.1 ms per query.
- `ArmMotion.action`: one step of a small quadratic programme over the 7 joint deltas:
  track an EE position (and, optionally, point the gripper's approach axis along a given
  direction, using the gripper body's rotational Jacobian), or a joint-space goal, with
  the per-step joint bound and the joint limits as hard constraints, and one velocity-damper
  constraint per near pair, d + n.J dq >= d - gain (d - safe): no link may approach static
  geometry closer than `safe` (Faverjon & Tournassoud's damper, the standard reactive
  collision constraint). Solved exactly as least distance programming by NNLS (Lawson &
  Hanson), so a step either respects every constraint or is relaxed in a known order
  (never approach, then stand still). Why a QP and not DLS plus a repulsive term: a
  repulsion only bends the path where the pull is weaker, and a stalled arm at 1 cm already
  costs 100+ N per step; hard constraints let it slide along a surface at a set gap.
- `clearance_at`: the same distance query at a hypothetical robot pose (base and arm) in a
  private MjData, so base commands can be checked before they are sent (the arm reaches
  0.7 m beyond the 0.3 m base disc the world's 2-D base check covers; `oracle_nav`).

Planning (the fridge pick's reach, `oracle_manip.OraclePick._plan_reach`), in a private
MjData, nothing sent to the sim: `ik_kinematic` (damped least squares on the EE position
and gripper axis, joint limits, drawn toward its seed: cheap, many seeds, the clear
solutions kept), `ik_solve` (the QP above run with larger steps: it slides along walls
where the obstacle-blind solutions all pass through one), `segment_clear` /
`path_clearance` (distance checks PLAN_RES apart along joint-space segments) and
`plan_joint_path` (the straight segment, else RRT-Connect and shortcutting). Why: the QP is
a local method; from a posture bent the wrong way, or round a wall's edge, it stalls.

Helpers for the skills' phase machines: `box_axis` (the least turning that brings the
gripper axis into a range of headings and pitches), `Settle` (a phase ends when its target
is reached or no longer approached), `grasp_ready` (the suction would take the intended
body, not a neighbour), `toward_ball` (returning arms only need to end near rest).

Why orientation matters (docs in the skills): position-only IK left the gripper pitched
down, so reaching a drawer handle 14 cm below the cabinet top drove the wrist (15 cm behind
the fingertips along the gripper axis) into the top edge. Pointing the approach axis along
the handle normal keeps the wrist in front of the handle, level with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np
from scipy.optimize import nnls

from rearrange.sim import robot as R
from rearrange.sim.furniture_geoms import STATIC_BIT

# Links moved by the arm joints (the base, torso and head move only with the base).
ARM_BODIES = tuple(
    R.PREFIX + n
    for n in (
        "shoulder_pan_link",
        "shoulder_lift_link",
        "upperarm_roll_link",
        "elbow_flex_link",
        "forearm_roll_link",
        "wrist_flex_link",
        "wrist_roll_link",
        "gripper_link",
        "r_gripper_finger_link",
        "l_gripper_finger_link",
    )
)
# Links above the base that move with it only: they can meet what overhangs the base's
# footprint (an open drawer and its handle, which the 2-D base check lets the base under).
BODY_BODIES = tuple(
    R.PREFIX + n for n in ("torso_lift_link", "torso_fixed_link", "head_pan_link", "head_tilt_link")
)
SAFE = 0.025
"""m: the gap every arm link keeps to static geometry (the world blocks at 1 cm inside and
every contact point costs force; 2.5 cm leaves room for the linearisation error of a step)."""
CREEP_SAFE = 0.012
"""m: the gap kept in slow final approaches (<= 6 mm a step), where the linearisation
error is a millimetre: a fridge's side wall held an elbow 2.5 cm off and the gripper
2 mm beyond the suction's reach of the object."""
INFLUENCE = 0.09
"""m: pairs closer than this enter the step's constraints."""
DAMPER_GAIN = 0.4
"""Fraction of the gap above `safe` one step may close."""
PART_FOLLOW = {"hinge": 1.0, "slide": 0.6}
"""How much of the hold point's motion the held part is assumed to follow in one step (its
constraints): a drawer lags the weld (friction) and was pushed into the fingers at 1."""
JOINT_MARGIN = 0.02  # rad kept from each joint limit
OBJECT_SAFE = 0.012
"""m: the gap kept to loose objects (the robot shoves them; the one being picked is
skipped by the caller while it descends onto it)."""
FINGERTIP = 0.0185  # m the fingertips reach ahead of the EE site along the gripper axis


def gripper_axis(sim, data=None) -> np.ndarray:
    """World direction of the gripper's approach axis (wrist -> fingertips): the gripper
    body's x axis."""
    d = sim.data if data is None else data
    return d.xmat[sim.idx.gripper_body].reshape(3, 3)[:, 0].copy()


def yaw_pitch(axis: np.ndarray) -> tuple[float, float]:
    """(yaw, pitch down) of a direction, rad."""
    a = np.asarray(axis, dtype=np.float64)
    return math.atan2(a[1], a[0]), math.atan2(-a[2], math.hypot(a[0], a[1]))


def from_yaw_pitch(yaw: float, pitch: float) -> np.ndarray:
    """Unit direction with heading `yaw` pitched down by `pitch` (rad)."""
    c = math.cos(pitch)
    return np.array([c * math.cos(yaw), c * math.sin(yaw), -math.sin(pitch)])


def box_axis(current: np.ndarray, yaw: float, yaw_tol: float, pitch: tuple[float, float]):
    """The direction nearest `current` (in heading and pitch) whose heading is within
    `yaw_tol` of `yaw` and whose downward pitch lies in `pitch`: the axis to ask for when
    any of them will do (turning the gripper is slow: each joint moves <= 0.72 deg per
    step, so the skills ask only for as much turning as their clearance needs)."""
    cy, cp = yaw_pitch(current)
    dy = math.remainder(cy - yaw, 2 * math.pi)
    y = yaw + float(np.clip(dy, -yaw_tol, yaw_tol))
    return from_yaw_pitch(y, float(np.clip(cp, *pitch)))


REST_BALL = 0.10
"""m: the skills' postconditions ask for the EE within 0.15 m of its resting point
(`termination.ee_at_rest`); returning arms aim at the nearest point this close to it."""


def toward_ball(ee, centre, radius: float = REST_BALL) -> np.ndarray:
    """The point of the ball (`centre`, `radius`) nearest to `ee`: where an arm that only
    has to end near `centre` heads (shorter than the centre itself, often much: the last
    reconfiguration onto the exact resting pose took up to 60 steps round an open door)."""
    ee, centre = np.asarray(ee, dtype=np.float64), np.asarray(centre, dtype=np.float64)
    off = ee - centre
    dist = float(np.linalg.norm(off))
    return ee.copy() if dist <= radius else centre + off * (radius / dist)


class Settle:
    """Whether an arm phase has got where it can: the EE within `tol` of its target and
    the gripper axis within `axis_tol` of its own, or no longer closing on either (a
    target or axis the arm cannot reach is left after `patience` steps of no progress,
    not after a phase timeout)."""

    def __init__(self, tol: float, axis_tol: float, patience: int = 8) -> None:
        self.tol, self.axis_tol, self.patience = tol, axis_tol, patience
        self.trail: list[tuple[float, float]] = []

    def reset(self) -> None:
        self.trail = []

    def __call__(self, sim, target, axis=None) -> bool:
        err = float(np.linalg.norm(sim.ee_pos("world") - np.asarray(target)))
        ang = 0.0
        if axis is not None:
            ang = math.acos(float(np.clip(gripper_axis(sim) @ np.asarray(axis), -1.0, 1.0)))
        self.trail = (self.trail + [(err, ang)])[-self.patience :]
        if err < self.tol and ang < self.axis_tol:
            return True
        if len(self.trail) < self.patience:
            return False
        e0, a0 = self.trail[0]
        stuck = e0 - err < 0.005 and a0 - ang < math.radians(1.0)
        return stuck and err < 3 * self.tol


def grasp_ready(sim, target_geom: int, reach: float | None = None) -> bool:
    """Whether a grip command now would grasp `target_geom` (an object or a handle): it
    is within the suction's reach of the gripper and nothing else graspable is nearer
    (the suction takes the nearest body in reach: a neighbour on the counter was picked
    instead of the target)."""
    m, d, idx = sim.model, sim.data, sim.idx
    reach = float(sim.config.grasp_threshold) if reach is None else reach
    limit = reach + 0.01
    bodies = [int(g) for g in idx.obj_geoms] + [int(g) for g in idx.art_handle_geom.values()]
    ee = d.site_xpos[idx.ee_site]
    best, best_geom = limit, None
    for g in bodies:
        if (
            g == int(sim.idx.obj_geoms[sim.held_object()])
            if sim.held_object() is not None
            else False
        ):
            continue
        if np.linalg.norm(d.geom_xpos[g] - ee) > 0.4:
            continue
        dist = min(
            mujoco.mj_geomDistance(m, d, int(gg), g, limit, None) for gg in idx.gripper_geoms
        )
        if dist < best:
            best, best_geom = dist, g
    return best_geom == int(target_geom) and best <= reach


# --------------------------------------------------------------------------- geometry
class _SceneGeoms:
    """Geom ids of one compiled model: the static set (walls, furniture, doors, drawers:
    what the world's blocking pass counts), the arm geoms and every robot collision geom."""

    def __init__(self, sim) -> None:
        m, idx = sim.model, sim.idx
        self.model = m
        static = np.flatnonzero(m.geom_contype & STATIC_BIT)
        self.static = static[~idx.robot_geoms[static]]
        self.static_size = m.geom_size[self.static].copy()  # all boxes (furniture_parts)
        self.is_box = m.geom_type[self.static] == mujoco.mjtGeom.mjGEOM_BOX
        arm_bodies = {m.body(n).id for n in ARM_BODIES}
        robot = np.asarray(idx.robot_collision_geoms, dtype=int)
        self.arm = robot[np.isin(m.geom_bodyid[robot], list(arm_bodies))]
        body = {m.body(n).id for n in BODY_BODIES}
        self.body = robot[np.isin(m.geom_bodyid[robot], list(body))]
        self.robot = robot
        self.art_of = {}  # static geom -> articulation name
        for name, geoms in idx.art_geoms.items():
            for g in np.asarray(geoms).ravel():
                self.art_of[int(g)] = name
        self.scratch = mujoco.MjData(m)
        self.plan = mujoco.MjData(m)  # the planner's (`ik_solve`), apart from clearance_at's


_GEOMS: dict[int, _SceneGeoms] = {}


def scene_geoms(sim) -> _SceneGeoms:
    key = id(sim.model)
    hit = _GEOMS.get(key)
    if hit is None or hit.model is not sim.model:
        if len(_GEOMS) > 8:
            _GEOMS.clear()
        hit = _GEOMS[key] = _SceneGeoms(sim)
    return hit


def grip_geoms(sim, art: str) -> list[int]:
    """The geoms of `art` a grasp holds (handle bar and posts), which the world lets the
    gripper into while it holds them."""
    geoms = getattr(sim.idx, "art_grip_geoms", None)
    if geoms is None:  # a world without the split: the handle
        return [int(sim.idx.art_handle_geom[art])]
    return [int(g) for g in np.asarray(geoms[art]).ravel()]


@dataclass
class Proximity:
    """Near (robot geom, static geom) pairs: distance (negative inside), the closest point
    on the robot geom, the unit direction that increases the distance, the static geom."""

    robot: np.ndarray  # [K] robot geom ids (-1: the held object)
    other: np.ndarray  # [K] static geom ids
    dist: np.ndarray  # [K]
    point: np.ndarray  # [K, 3]
    normal: np.ndarray  # [K, 3]

    @property
    def min_dist(self) -> float:
        return float(self.dist.min()) if self.dist.size else math.inf


def _box_gap(centres: np.ndarray, radii: np.ndarray, d, static, size) -> np.ndarray:
    """[R, S] lower bounds of the distance between spheres (centres, radii) and the static
    boxes (bounding-sphere vs oriented box)."""
    pos = d.geom_xpos[static]  # [S, 3]
    mat = d.geom_xmat[static].reshape(-1, 3, 3)  # [S, 3, 3]
    rel = centres[:, None, :] - pos[None, :, :]  # [R, S, 3]
    local = np.einsum("rsi,sij->rsj", rel, mat)  # box frame
    out = np.maximum(np.abs(local) - size[None], 0.0)
    return np.linalg.norm(out, axis=2) - radii[:, None]


def near_pairs(
    sim,
    margin: float = INFLUENCE,
    data=None,
    geoms: np.ndarray | None = None,
    held_object: bool = True,
    skip: set[int] | None = None,
    objects: bool = False,
) -> Proximity:
    """Robot-vs-static pairs closer than `margin` (m) at `data` (default the sim's):
    `geoms` (default the arm's), plus the held object when `held_object`. The geoms in
    `skip` are not obstacles, nor the handle bar and posts the gripper holds (as in the
    world's blocking pass; the rest of the held door or drawer is). With `objects` the
    loose objects (not the held one) are obstacles too: the robot shoves them, and their
    contact forces count toward the force limit."""
    sg = scene_geoms(sim)
    m = sim.model
    d = sim.data if data is None else data
    geoms = sg.arm if geoms is None else np.asarray(geoms, dtype=int)
    robot = list(geoms)
    held = sim.held_object()
    if held is not None and held_object:
        robot.append(int(sim.idx.obj_geoms[held]))
    robot = np.asarray(robot, dtype=int)
    banned = set(skip or ())
    held_art = sim.held_articulation()
    if held_art is not None:
        banned |= set(grip_geoms(sim, held_art))
    static = sg.static
    keep = ~np.isin(static, list(banned)) if banned else np.ones(len(static), dtype=bool)
    static_kept = static[keep]
    centres, radii = d.geom_xpos[robot], m.geom_rbound[robot]
    gap = _box_gap(centres, radii, d, static_kept, sg.static_size[keep])
    ri, si = np.nonzero(gap < margin)
    pairs = [(int(robot[a]), int(static_kept[b]), a) for a, b in zip(ri, si)]
    if objects:
        objs = [int(g) for g in sim.idx.obj_geoms if int(g) not in banned]
        if held is not None:
            objs = [g for g in objs if g != int(sim.idx.obj_geoms[held])]
        if objs:
            objs = np.asarray(objs, dtype=int)
            sep = np.linalg.norm(centres[:, None, :] - d.geom_xpos[objs][None], axis=2)
            sep -= radii[:, None] + m.geom_rbound[objs][None, :]
            ri, oi = np.nonzero(sep < margin)
            pairs += [(int(robot[a]), int(objs[b]), a) for a, b in zip(ri, oi)]
    out_r, out_o, out_d, out_p, out_n = [], [], [], [], []
    fromto = np.zeros(6)
    for g1, g2, a in pairs:
        dist = mujoco.mj_geomDistance(m, d, g1, g2, margin, fromto)
        if dist >= margin:
            continue
        p_robot, p_other = fromto[:3].copy(), fromto[3:].copy()
        vec = p_robot - p_other if dist >= 0 else p_other - p_robot
        norm = float(np.linalg.norm(vec))
        if norm < 1e-9:  # touching: fall back to the centres
            vec = d.geom_xpos[g1] - d.geom_xpos[g2]
            norm = float(np.linalg.norm(vec)) or 1.0
        out_r.append(-1 if held is not None and held_object and a == len(robot) - 1 else g1)
        out_o.append(g2)
        out_d.append(dist)
        out_p.append(p_robot)
        out_n.append(vec / norm)
    return Proximity(
        np.asarray(out_r, dtype=int),
        np.asarray(out_o, dtype=int),
        np.asarray(out_d, dtype=np.float64),
        np.asarray(out_p, dtype=np.float64).reshape(-1, 3),
        np.asarray(out_n, dtype=np.float64).reshape(-1, 3),
    )


# --------------------------------------------------------------------------- scratch poses
def clearance_at(
    sim,
    base=None,
    arm=None,
    margin: float = INFLUENCE,
    whole_robot: bool = True,
    skip: set[int] | None = None,
    objects: bool = False,
    geoms: np.ndarray | None = None,
) -> float:
    """Smallest robot-vs-static distance (capped at `margin`) with the base at `base`
    (x, y, yaw) and the arm at `arm` (default: where they are), computed in a private
    MjData: the sim is not touched. A held object moves rigidly with the gripper. With
    `objects` the loose objects count too. `geoms`: the robot geoms to measure (default:
    all of them, or the arm's when not `whole_robot`)."""
    sg = scene_geoms(sim)
    m, live, d = sim.model, sim.data, sg.scratch
    d.qpos[:] = live.qpos
    if base is not None:
        d.qpos[sim.idx.base_qpos] = base
    if arm is not None:
        d.qpos[sim.idx.arm_qpos] = arm
    held = sim.held_object()
    if held is not None:  # the object's free joint follows the gripper (weld)
        gb = sim.idx.gripper_body
        rel_p, rel_q = _relative_pose(live, gb, int(sim.idx.obj_bodies[held]))
    mujoco.mj_kinematics(m, d)
    if held is not None:
        _place_held(sim, d, held, gb, rel_p, rel_q)
    if geoms is None:
        geoms = sg.robot if whole_robot else sg.arm
    prox = near_pairs(sim, margin, d, geoms, held_object=True, skip=skip, objects=objects)
    return min(prox.min_dist, margin)


def _relative_pose(d, body_a: int, body_b: int) -> tuple[np.ndarray, np.ndarray]:
    ra = d.xmat[body_a].reshape(3, 3)
    rel_p = ra.T @ (d.xpos[body_b] - d.xpos[body_a])
    qa_inv = np.zeros(4)
    mujoco.mju_negQuat(qa_inv, d.xquat[body_a])
    rel_q = np.zeros(4)
    mujoco.mju_mulQuat(rel_q, qa_inv, d.xquat[body_b])
    return rel_p, rel_q


def _place_held(sim, d, held: int, gb: int, rel_p, rel_q) -> None:
    """Move the held object's geom in `d` to where the weld keeps it relative to the
    gripper (its free joint is not driven by kinematics)."""
    g = int(sim.idx.obj_geoms[held])
    ra = d.xmat[gb].reshape(3, 3)
    body_pos = d.xpos[gb] + ra @ rel_p
    body_quat = np.zeros(4)
    mujoco.mju_mulQuat(body_quat, d.xquat[gb], rel_q)
    body_mat = np.zeros(9)
    mujoco.mju_quat2Mat(body_mat, body_quat)
    body_mat = body_mat.reshape(3, 3)
    m = sim.model
    geom_mat = np.zeros(9)
    mujoco.mju_quat2Mat(geom_mat, m.geom_quat[g])
    d.geom_xpos[g] = body_pos + body_mat @ m.geom_pos[g]
    d.geom_xmat[g] = (body_mat @ geom_mat.reshape(3, 3)).ravel()


# --------------------------------------------------------------------------- the QP
def solve_ls_constrained(a: np.ndarray, b: np.ndarray, g: np.ndarray, h: np.ndarray):
    """argmin ||a x - b|| subject to g x <= h (a: full column rank), or None when the
    constraints are infeasible. Least distance programming through NNLS (Lawson & Hanson,
    "Solving Least Squares Problems", ch. 23): with a = QR and z = R x - Q'b the problem
    is min ||z|| s.t. (g R^-1) z <= h - g R^-1 Q'b."""
    q, r = np.linalg.qr(a)
    c = q.T @ b
    n = r.shape[1]
    if g.shape[0] == 0:
        return np.linalg.solve(r, c)
    r_inv = np.linalg.inv(r)
    gz = g @ r_inv
    hz = h - gz @ c
    # min ||z|| s.t. (-gz) z >= -hz: NNLS on E = [(-gz)'; (-hz)'], f = e_{n+1}
    e = np.vstack([-gz.T, -hz[None, :]])
    f = np.zeros(n + 1)
    f[-1] = 1.0
    u, _ = nnls(e, f, maxiter=50 * e.shape[1])
    res = e @ u - f
    if abs(res[-1]) < 1e-10:
        return None
    z = -res[:n] / res[n]
    return r_inv @ (z + c)


@dataclass
class MotionConfig:
    safe: float = SAFE
    influence: float = INFLUENCE
    gain: float = DAMPER_GAIN
    max_lin: float = 0.03
    """m: EE position error asked per step (farther targets are approached at this speed
    direction, the joint bound then caps the step)."""
    max_rot: float = 0.08
    """rad: gripper-axis error asked per step."""
    axis_weight: float = 0.25
    """m per rad: weight of the axis task against the position task."""
    damping: float = 0.03
    posture: float = 0.004
    """Weight of the pull toward the preferred joints (redundancy resolution)."""
    joint_weights: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0, 1.5, 2.0, 1.5)
    """Damping per joint: a stiffer wrist makes the shoulder and elbow do the reaching."""


class ArmMotion:
    """One collision-constrained joint step per call (see the module doc)."""

    def __init__(self, config: MotionConfig | None = None) -> None:
        self.cfg = config or MotionConfig()
        self.last_min_dist = math.inf
        self.last_relaxed = 0

    # ------------------------------------------------------------------ tasks
    def action(
        self,
        sim,
        pos=None,
        axis=None,
        *,
        q_goal=None,
        max_lin: float | None = None,
        q_pref=None,
        safe_for: dict[int, float] | None = None,
        avoid_held: bool = True,
        skip: set[int] | None = None,
        held_safe: float = 0.015,
        axis_weight: float | None = None,
        avoid_objects: bool = True,
        data=None,
        safe: float | None = None,
        joint_step: float | None = None,
    ) -> np.ndarray:
        """Arm action ([7] in [-1, 1]) for one step toward EE position `pos` (world) with
        the gripper axis along `axis` (unit, world; None: free), or toward joints `q_goal`
        when no `pos`. `safe_for` gives single static geoms their own gap (a handle the
        gripper must come within 2 cm of); `skip` ignores geoms; the held object keeps
        `held_safe` (not at all when `avoid_held` is False: a place lowering onto its
        receptacle). Loose objects keep OBJECT_SAFE unless not `avoid_objects`. A held
        door or drawer stays an obstacle (but its handle): it moves
        with the hold point, along its joint, which its constraints account for.
        `axis_weight` overrides the axis task's weight (m per rad). `data`: plan in this
        MjData instead of the sim's (a private copy; kinematics and com positions current,
        nothing held). `safe` overrides the gap kept to static geometry (a slow final
        approach may come closer). `joint_step` replaces the per-step joint bound (rad) the
        action is scaled by (the planner's larger scratch steps)."""
        cfg, m, idx = self.cfg, sim.model, sim.idx
        d = sim.data if data is None else data
        step = float(sim.config.arm_delta_scale) if joint_step is None else joint_step
        dof = idx.arm_dof
        q = d.qpos[idx.arm_qpos].copy()
        rows_a, rows_b = [], []
        if pos is not None:
            jacp = np.zeros((3, m.nv))
            mujoco.mj_jacSite(m, d, jacp, None, idx.ee_site)
            err = np.asarray(pos, dtype=np.float64) - d.site_xpos[idx.ee_site]
            lim = cfg.max_lin if max_lin is None else max_lin
            norm = float(np.linalg.norm(err))
            if norm > lim:
                err *= lim / norm
            rows_a.append(jacp[:, dof])
            rows_b.append(err)
        if axis is not None:
            jacr = np.zeros((3, m.nv))
            mujoco.mj_jacBody(m, d, None, jacr, idx.gripper_body)
            a = gripper_axis(sim, d)
            u = np.asarray(axis, dtype=np.float64)
            u = u / np.linalg.norm(u)
            turn = np.cross(a, u)  # rotation vector turning a toward u
            s = float(np.linalg.norm(turn))
            ang = math.atan2(s, float(a @ u))
            if s > 1e-9:
                turn *= min(ang, cfg.max_rot) / s
            elif ang > 1.0:  # opposite: any perpendicular turn
                perp = np.cross(a, [0.0, 0.0, 1.0])
                perp = perp if np.linalg.norm(perp) > 1e-6 else np.cross(a, [1.0, 0.0, 0.0])
                turn = perp / np.linalg.norm(perp) * cfg.max_rot
            proj = np.eye(3) - np.outer(a, a)  # turning about the axis itself is free
            wa = cfg.axis_weight if axis_weight is None else axis_weight
            rows_a.append(wa * proj @ jacr[:, dof])
            rows_b.append(wa * turn)
        if pos is None and q_goal is not None:
            dq_goal = np.clip(np.asarray(q_goal, dtype=np.float64) - q, -step, step)
            rows_a.append(np.eye(7))
            rows_b.append(dq_goal)
        w = np.asarray(cfg.joint_weights)
        rows_a.append(cfg.damping * np.diag(w))
        rows_b.append(np.zeros(7))
        if q_pref is not None and cfg.posture > 0:
            pull = np.clip(np.asarray(q_pref, dtype=np.float64) - q, -step, step)
            rows_a.append(cfg.posture * np.eye(7))
            rows_b.append(cfg.posture * pull)
        a_mat, b_vec = np.vstack(rows_a), np.concatenate(rows_b)
        dq = self._solve(
            sim, q, a_mat, b_vec, step, safe_for, avoid_held, skip, held_safe, avoid_objects, d,
            cfg.safe if safe is None else safe,
        )  # fmt: skip
        return np.clip(dq / step, -1.0, 1.0).astype(np.float32)

    # ------------------------------------------------------------------ constraints
    def _solve(
        self, sim, q, a_mat, b_vec, step, safe_for, avoid_held, skip, held_safe, avoid_objects, d,
        static_safe,
    ):  # fmt: skip
        cfg, m, idx = self.cfg, sim.model, sim.idx
        rng = idx.arm_range
        lo = np.maximum(-step, np.minimum(rng[:, 0] + JOINT_MARGIN - q, 0.0))
        hi = np.minimum(step, np.maximum(rng[:, 1] - JOINT_MARGIN - q, 0.0))
        g_rows = [np.eye(7), -np.eye(7)]
        h_rows = [hi, -lo]
        prox = near_pairs(
            sim, cfg.influence, d, held_object=avoid_held, skip=skip, objects=avoid_objects
        )
        objs = set(int(g) for g in idx.obj_geoms)
        self.last_min_dist = prox.min_dist
        n_col = 0
        if prox.dist.size:
            jacp = np.zeros((3, m.nv))
            part = self._part_motion(sim) if d is sim.data else None
            rows, rhs = [], []
            for k in range(prox.dist.size):
                g, other = int(prox.robot[k]), int(prox.other[k])
                body = idx.gripper_body if g < 0 else int(m.geom_bodyid[g])
                safe = held_safe if g < 0 else static_safe
                if other in objs:
                    safe = OBJECT_SAFE
                if safe_for is not None and other in safe_for:
                    safe = safe_for[other]
                mujoco.mj_jac(m, d, jacp, None, prox.point[k], body)
                rel = jacp[:, idx.arm_dof].copy()
                if part is not None and other in part[0]:
                    rel -= self._obstacle_motion(
                        sim, part, prox.point[k] - prox.dist[k] * prox.normal[k]
                    )
                rows.append(-(prox.normal[k] @ rel))
                rhs.append(cfg.gain * (prox.dist[k] - safe))
            g_rows.append(np.asarray(rows))
            h_rows.append(np.asarray(rhs))
            n_col = len(rows)
        g_mat, h_vec = np.vstack(g_rows), np.concatenate(h_rows)
        self.last_relaxed = 0
        dq = solve_ls_constrained(a_mat, b_vec, g_mat, h_vec)
        if dq is None and n_col:  # too close on conflicting sides: never approach
            self.last_relaxed = 1
            h_vec[-n_col:] = np.maximum(h_vec[-n_col:], 0.0)
            dq = solve_ls_constrained(a_mat, b_vec, g_mat, h_vec)
        if dq is None:
            self.last_relaxed = 2
            return np.zeros(7)
        return dq

    @staticmethod
    def _part_motion(sim):
        """(geoms, body, dof, d handle / d joint, d joint / d arm) of the held door or
        drawer: its joint follows the hold point's motion along the handle's path."""
        name = sim.held_articulation()
        target = sim.hold_point()
        if name is None or target is None:
            return None
        m, d, idx = sim.model, sim.data, sim.idx
        body, dof = int(idx.art_body[name]), int(idx.art_dof[name])
        jac = np.zeros((3, m.nv))
        handle = d.site_xpos[idx.art_handle_site[name]]
        mujoco.mj_jac(m, d, jac, None, handle, body)
        dh = jac[:, dof].copy()  # handle velocity per unit joint
        mujoco.mj_jac(m, d, jac, None, target, idx.gripper_body)
        dq_joint = dh @ jac[:, idx.arm_dof] / max(float(dh @ dh), 1e-9)  # [7]
        geoms = {int(g) for g in np.asarray(idx.art_geoms[name]).ravel()}
        hinge = m.jnt_type[m.dof_jntid[dof]] == mujoco.mjtJoint.mjJNT_HINGE
        return geoms, body, dof, dq_joint, PART_FOLLOW["hinge" if hinge else "slide"]

    @staticmethod
    def _obstacle_motion(sim, part, point) -> np.ndarray:
        """[3, 7]: how `point` on the held part moves per arm joint step."""
        _, body, dof, dq_joint, follow = part
        jac = np.zeros((3, sim.model.nv))
        mujoco.mj_jac(sim.model, sim.data, jac, None, point, body)
        return follow * np.outer(jac[:, dof], dq_joint)


# --------------------------------------------------------------------------- planning
PLAN_CLEAR = 0.018
"""m: the gap a planned joint path keeps to static geometry and loose objects (followed with
CREEP_SAFE as the step's constraint: the margin absorbs the tracking error)."""
PLAN_RES = 0.02
"""rad: the largest joint change between two poses checked along a planned segment (a link
1 m from its joint moves 2 cm)."""


def ik_solve(
    sim,
    pos,
    axis,
    q0,
    *,
    skip: set[int] | None = None,
    safe: float = CREEP_SAFE,
    iters: int = 150,
    step: float = 0.03,
    q_pref=None,
) -> tuple[np.ndarray, float, float]:
    """Joints that put the EE at `pos` with the gripper axis along `axis`, found by running
    `ArmMotion`'s collision-constrained step in a private MjData from `q0` (larger steps,
    nothing sent to the sim; nothing may be held). Returns (joints, EE error m, axis error
    rad). A local solver: callers try several seeds."""
    sg = scene_geoms(sim)
    m, d, idx = sim.model, sg.plan, sim.idx
    d.qpos[:] = sim.data.qpos
    q = np.asarray(q0, dtype=np.float64).copy()
    motion = ArmMotion()
    for _ in range(iters):
        d.qpos[idx.arm_qpos] = q
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        act = motion.action(
            sim, pos, axis, data=d, safe=safe, skip=skip, max_lin=0.05, q_pref=q_pref,
            joint_step=step,
        )  # fmt: skip
        dq = act.astype(np.float64) * step
        if float(np.abs(dq).max()) < 1e-4:
            break
        q = q + dq
    d.qpos[idx.arm_qpos] = q
    mujoco.mj_kinematics(m, d)
    err = float(np.linalg.norm(d.site_xpos[idx.ee_site] - np.asarray(pos)))
    ang = 0.0
    if axis is not None:
        ang = math.acos(float(np.clip(gripper_axis(sim, d) @ np.asarray(axis), -1.0, 1.0)))
    return q, err, ang


IK_WEIGHTS_INV = 1.0 / np.array([1.0, 1.0, 2.0, 1.0, 2.0, 1.0, 1.0])
"""Inverse joint weights of `ik_kinematic`'s steps: the upper-arm and forearm rolls turn
reluctantly (a minimum-norm step swung the forearm roll 2.5 rad, 200 policy steps)."""


def ik_kinematic(
    sim, pos, axis, q0, *, iters: int = 80, step: float = 0.2, tol: float = 1e-3, pull: float = 0.3
) -> tuple[np.ndarray, float, float]:
    """Joints that put the EE at `pos` with the gripper axis along `axis`, ignoring
    obstacles: damped least squares on the position and axis Jacobians in a private MjData
    from `q0`, inside the joint limits, drawn toward `q0` in the task's null space (`pull`
    of the way per iteration). Returns (joints, EE error m, axis error rad).
    Cheap (no distance queries): callers sample seeds and keep the clear solutions."""
    sg = scene_geoms(sim)
    m, d, idx = sim.model, sg.plan, sim.idx
    d.qpos[:] = sim.data.qpos
    rng_box = idx.arm_range
    lo, hi = rng_box[:, 0] + JOINT_MARGIN, rng_box[:, 1] - JOINT_MARGIN
    q = np.clip(np.asarray(q0, dtype=np.float64), lo, hi)
    seed = q.copy()
    u = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    target = np.asarray(pos, dtype=np.float64)
    jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    err = ang = math.inf
    for _ in range(iters + 1):
        d.qpos[idx.arm_qpos] = q
        mujoco.mj_kinematics(m, d)
        e_pos = target - d.site_xpos[idx.ee_site]
        a = d.xmat[idx.gripper_body].reshape(3, 3)[:, 0]
        turn = np.cross(a, u)
        err = float(np.linalg.norm(e_pos))
        ang = math.atan2(float(np.linalg.norm(turn)), float(a @ u))
        if err < tol and ang < tol or _ == iters:
            break
        mujoco.mj_comPos(m, d)
        mujoco.mj_jacSite(m, d, jacp, None, idx.ee_site)
        mujoco.mj_jacBody(m, d, None, jacr, idx.gripper_body)
        s = float(np.linalg.norm(turn))
        rot = turn * (ang / s) if s > 1e-9 else np.cross(a, [0.0, 0.0, 1.0])
        proj = np.eye(3) - np.outer(a, a)
        jac = np.vstack([jacp[:, idx.arm_dof], 0.3 * proj @ jacr[:, idx.arm_dof]])
        e = np.concatenate([e_pos, 0.3 * rot])
        free = np.ones(len(q), dtype=bool)
        for _k in range(3):  # joints held at a limit they push against leave the solve
            jf = jac * free
            jw = jf * IK_WEIGHTS_INV
            dq = jw.T @ np.linalg.solve(jw @ jf.T + 1e-4 * np.eye(6), e)
            # secondary task: stay near the seed (solutions near different seeds differ)
            dq = dq + pull * (np.eye(len(q)) - np.linalg.pinv(jf) @ jf) @ (seed - q) * free
            stuck = ((q <= lo + 1e-6) & (dq < 0)) | ((q >= hi - 1e-6) & (dq > 0))
            if not stuck.any():
                break
            free &= ~stuck
        big = float(np.abs(dq).max())
        if big > step:
            dq *= step / big
        q = np.clip(q + dq, lo, hi)
    return q, err, ang


def arm_clearance(sim, q, skip: set[int] | None = None, margin: float = INFLUENCE) -> float:
    """The arm's (and a held object's) smallest distance to static geometry and loose
    objects with the arm at `q` (the base where it is), capped at `margin`."""
    return clearance_at(sim, arm=q, margin=margin, whole_robot=False, skip=skip, objects=True)


def segment_clear(sim, qa, qb, need: float, skip: set[int] | None = None) -> bool:
    """Whether every pose on the joint-space segment qa -> qb (checked PLAN_RES apart)
    keeps `need` from static geometry and loose objects."""
    poses = _segment_poses(qa, qb)[1:]  # qa itself is the caller's, already checked
    return all(arm_clearance(sim, q, skip, need + 1e-3) >= need for q in poses)


def path_clearance(sim, path, skip: set[int] | None = None) -> float:
    """The smallest `arm_clearance` along a joint path (poses PLAN_RES apart)."""
    best = INFLUENCE
    for qa, qb in zip(path[:-1], path[1:]):
        for q in _segment_poses(qa, qb):
            best = min(best, arm_clearance(sim, q, skip))
    return best


def _segment_poses(qa, qb) -> list[np.ndarray]:
    """Poses along the joint-space segment qa -> qb, both ends included, at most PLAN_RES
    apart in every joint."""
    qa, qb = np.asarray(qa, dtype=np.float64), np.asarray(qb, dtype=np.float64)
    n = int(math.ceil(float(np.abs(qb - qa).max()) / PLAN_RES))
    return [qa + t * (qb - qa) for t in np.linspace(0.0, 1.0, n + 1)]


def path_length(path) -> float:
    """Policy steps' worth of joint motion along a path: the sum of its segments' largest
    joint changes (each joint moves at most one bound per step)."""
    return float(sum(np.abs(b - a).max() for a, b in zip(path[:-1], path[1:])))


def plan_joint_path(
    sim,
    q_start,
    q_goal,
    need: float = PLAN_CLEAR,
    skip: set[int] | None = None,
    rng: np.random.Generator | None = None,
    iters: int = 300,
    extend: float = 0.3,
) -> list[np.ndarray] | None:
    """A collision-free joint path q_start -> q_goal (list of waypoints), or None: the
    straight segment when it is clear, else RRT-Connect (Kuffner & LaValle 2000) in the
    arm's joint box, then shortcut. Poses keep `need` (less where the start or goal
    itself is closer: it may leave or reach them)."""
    qs, qg = np.asarray(q_start, dtype=np.float64), np.asarray(q_goal, dtype=np.float64)
    need = min(need, arm_clearance(sim, qs, skip) - 2e-3, arm_clearance(sim, qg, skip) - 2e-3)
    need = max(need, 0.004)
    if segment_clear(sim, qs, qg, need, skip):
        return [qs, qg]
    rng = rng or np.random.default_rng(0)
    rng_box = sim.idx.arm_range
    lo = np.maximum(rng_box[:, 0] + JOINT_MARGIN, np.minimum(qs, qg) - math.pi)
    hi = np.minimum(rng_box[:, 1] - JOINT_MARGIN, np.maximum(qs, qg) + math.pi)
    trees = [([qs], [-1]), ([qg], [-1])]

    def step_toward(tree, q_to):
        nodes, parents = tree
        k = int(np.argmin([np.abs(n - q_to).max() for n in nodes]))
        delta = q_to - nodes[k]
        dist = float(np.abs(delta).max())
        q_new = q_to if dist <= extend else nodes[k] + delta * (extend / dist)
        if not segment_clear(sim, nodes[k], q_new, need, skip):
            return None
        nodes.append(q_new)
        parents.append(k)
        return len(nodes) - 1

    def branch(tree, i):
        nodes, parents = tree
        out = []
        while i >= 0:
            out.append(nodes[i])
            i = parents[i]
        return out

    for it in range(iters):
        a, b = trees[it % 2], trees[(it + 1) % 2]
        q_rand = rng.uniform(lo, hi)
        i_new = step_toward(a, q_rand)
        if i_new is None:
            continue
        target = a[0][i_new]
        while True:  # connect: extend the other tree toward the new node until stuck
            j = step_toward(b, target)
            if j is None:
                break
            if float(np.abs(b[0][j] - target).max()) < 1e-9:
                pa, pb = branch(a, i_new), branch(b, j)
                path = pa[::-1] + pb[1:]
                if it % 2 == 1:
                    path = path[::-1]
                return _shortcut(sim, path, need, skip, rng)
    return None


def _shortcut(sim, path, need, skip, rng, tries: int = 30) -> list[np.ndarray]:
    path = list(path)
    for _ in range(tries):
        if len(path) <= 2:
            break
        i, j = sorted(rng.choice(len(path), size=2, replace=False))
        if j - i > 1 and segment_clear(sim, path[i], path[j], need, skip):
            path = path[: i + 1] + path[j:]
    return path
