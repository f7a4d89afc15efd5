"""Episode datasets: deterministic generation for the skill tasks and HAB scenarios, JSON I/O.

Every episode is generated from its own RNG stream `(seed, task, split, index)`, so
episode i never depends on how many episodes come before it. Scenes come from the split's
seed set (`SCENE_SEEDS`) through small pools: each block of `EPISODES_PER_BLOCK`
consecutive episodes draws from `SCENES_PER_BLOCK` scenes picked by `(seed, split, block)`
(the same for every task), so scenes are shared and their layout and NavMap (kept in an
LRU cache across calls) are built once. A draw that cannot be completed (no room on a
receptacle, no spawn point) is retried on another scene of the pool, then on any scene.

Conventions the tasks rely on (beyond `episode_types.py`):
- skill tasks have exactly one Target; pick's goal is a valid place pose on another
  receptacle (so pick and place episodes share a format); nav's `extras["nav_goal"]` is
  `[x, y, yaw]` in front of the target object's receptacle, facing it exactly, with the
  object within the arm's reach (a valid pick start without the yaw noise).
- pick, place, open/close: `robot_start` is a *close* spawn: the target (object, goal or
  handle at the episode's joint value) is within `reach_max` of the shoulder, heading
  facing it ± `yaw_noise` (Habitat 2.0's no-base-movement skills). `extras
  ["robot_start_far"]` = [x, y, yaw] is a *far* spawn for the "+ base movement" variants:
  within `spawn_max_dist` geodesic of the target, facing it ± `yaw_noise`.
- pick, place: `extras["arm_start"]` (7 arm joints) is where the previous skill left the
  arm (issue 10): exactly at rest or with the EE within the skills' 0.15 m rest tolerance
  (`_arm_start`); the sim starts the arm there.
- place: `extras["holding"]` is the held object's index; its ObjectPlacement is where it
  was picked from (the sim moves it into the gripper at reset). The start is drawn like
  the state a pick leaves (`_pick_end`): the arm as above and `extras["held_pose"]` (the object's
  pose in the gripper body frame, [x, y, z, qw, qx, qy, qz]: touching the suction cup or
  palm from some side, the object upright up to a tilt, any yaw). The spawn's clearance
  check uses that arm and held object; with no spawn within `reach_max`, it may stand
  back up to `place_far_reach` (the HAB executor's relaxed stand poses).
- open/close tasks: `extras["articulation"]` names the articulation; no targets.
- `articulations` lists every articulation of the layout explicitly.
- every robot pose (starts, far starts, nav goals) passes `RobotPlacement.pose_ok`
  (`rearrange.sim.placement`): the sim's base check, outside an open fridge door's swing,
  and the resting robot (arm measured from the MuJoCo model, plus a held object) touching
  no wall, furniture box, door, drawer or object.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rearrange.sim.episode_types import (
    HAB_SCENARIOS,
    SPLITS,
    Episode,
    ObjectPlacement,
    Target,
)
from rearrange.sim.layout_types import Layout, Receptacle
from rearrange.sim.navmap import NavMap
from rearrange.sim.objects import OBJECT_TYPES, ObjectType
from rearrange.sim.placement import Footprints, NoPlacement, PlacementConfig, RobotPlacement
from rearrange.skill_spec import ARTICULATED_SKILLS, SKILL_NAMES

TASKS = SKILL_NAMES + HAB_SCENARIOS
SCENE_SEEDS = {"train": 1000, "val": 100}  # scene seeds are range(SCENE_SEEDS[split])
EPISODES_PER_BLOCK = 10  # consecutive episodes sharing one scene pool
SCENES_PER_BLOCK = 4  # scenes in a block's pool
_POOL_SALT = 7919
SCHEMA = "rearrange.episodes"
SCHEMA_VERSION = 1
UPRIGHT = (1.0, 0.0, 0.0, 0.0)


class EpisodeError(ValueError):
    """A bad task/split name or an unreadable episode file (one-line message)."""


@dataclass(frozen=True)
class EpisodeGenConfig(PlacementConfig):
    """Episode generation: the robot placement rules (`PlacementConfig`) plus what goes
    into the scene and where the arm starts."""

    min_objects: int = 5
    max_objects: int = 10  # inclusive
    object_gap: float = 0.01  # free space between object footprints (m)
    fridge_pick_prob: float = 0.2  # pick episodes with the target on the open fridge shelf
    nav_min_dist: float = 2.0  # nav starts at least this far (geodesic) from the goal
    max_attempts: int = 30  # scenes tried per episode before giving up
    # Pick and place start with the arm where the previous skill left it (issue 10). A
    # learned pick stops as soon as its EE is within the 0.15 m rest tolerance (HAB:
    # 0.13-0.15 m from rest, ~0.12 m low, joints up to ~0.9 rad off rest) holding the
    # object wherever its suction touched it; a place ends the same way. Trained only from
    # the exact rest pose (and place from one grasp), the shipped place failed 17/40 of its
    # own val episodes started from such arms (1/40 from rest), the shipped pick 15/40
    # (3/40 from rest).
    start_rest_prob: float = 0.2  # share of starts with the arm exactly at rest
    arm_start_ee_tol: float = 0.15  # EE to rest (the pick task's ee_rest threshold)
    arm_start_low_prob: float = 0.6  # EE on the lower shell of that ball (`_ee_offset_target`)
    # uniform half-range per arm joint around rest (rad), EE kept within arm_start_ee_tol
    arm_start_spread: tuple[float, ...] = (0.8, 0.4, 0.8, 0.6, 1.0, 0.6, 1.0)
    grasp_top_prob: float = 0.5  # grasps through the suction cup's face (else any side)
    grasp_top_cone: float = math.radians(40)  # spread of those around the gripper axis
    grasp_max_tilt: float = math.radians(20)  # held object's tilt from upright
    grasp_gap: float = 0.005  # m between object and gripper (suction grasps within 0.02)


LayoutFn = Callable[[int, str], Layout]


class _Retry(NoPlacement):
    """This scene/draw cannot host the episode; try another."""


def check_task_split(task: str, split: str) -> None:
    if task not in TASKS:
        raise EpisodeError(f"unknown task {task!r}; use one of: {', '.join(TASKS)}")
    if split not in SPLITS:
        raise EpisodeError(f"unknown split {split!r}; use one of: {', '.join(SPLITS)}")


def _default_layout_fn(seed: int, split: str) -> Layout:
    from rearrange.sim.apartment import generate_layout

    return generate_layout(seed, split)


# ---------------------------------------------------------------------------------- scene


class _Scene(RobotPlacement):
    """One layout being filled with objects for one episode draw (robot poses: the base)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.taken: dict[str, list[tuple[float, float, float]]] = {}  # receptacle -> (x, y, r)

    # receptacles -------------------------------------------------------------------
    def receptacles(self, predicate: Callable[[Receptacle], bool]) -> list[Receptacle]:
        found = [r for r in self.layout.receptacles if predicate(r)]
        if not found:
            raise _Retry("no receptacle of the needed kind")
        return found

    def open_receptacles(self) -> list[Receptacle]:
        return self.receptacles(lambda r: r.container is None)

    def pick_receptacle(self, options: list[Receptacle], exclude: str | None = None) -> Receptacle:
        options = [r for r in options if r.name != exclude]
        if not options:
            raise _Retry("no other receptacle")
        return options[int(self.rng.integers(len(options)))]

    # poses on receptacles ------------------------------------------------------------
    def free_pose(
        self, obj: ObjectType, rec: Receptacle, tries: int = 40
    ) -> tuple[float, float, float]:
        """A random non-overlapping resting position for `obj` on `rec` (reserved)."""
        box, r = rec.surface, obj.footprint_radius
        hx, hy = box.half_size[0] - r, box.half_size[1] - r
        if hx < 0 or hy < 0:
            raise _Retry(f"{obj.name} does not fit on {rec.name}")
        c, s = math.cos(box.yaw), math.sin(box.yaw)
        taken = self.taken.setdefault(rec.name, [])
        for _ in range(tries):
            u, v = self.rng.uniform(-hx, hx), self.rng.uniform(-hy, hy)
            x, y = box.center[0] + c * u - s * v, box.center[1] + s * u + c * v
            if all(
                math.hypot(x - ox, y - oy) >= r + orad + self.cfg.object_gap
                for ox, oy, orad in taken
            ):
                taken.append((x, y, r))
                return self.rounded((x, y, rec.top_z + obj.half_height + 0.002))
        raise _Retry(f"no room left on {rec.name}")

    def add_object(self, obj: ObjectType, rec: Receptacle) -> int:
        pos = self.free_pose(obj, rec)
        self.objects.append(ObjectPlacement(obj.name, pos, UPRIGHT, rec.name))
        return len(self.objects) - 1

    def random_type(self, max_half_height: float | None = None) -> ObjectType:
        names = sorted(
            n
            for n, o in OBJECT_TYPES.items()
            if max_half_height is None or o.half_height <= max_half_height
        )
        return OBJECT_TYPES[names[int(self.rng.integers(len(names)))]]

    def add_clutter(self, total: int) -> None:
        """Fill up to `total` objects on open receptacles (skipping ones with no room)."""
        for _ in range(4 * total):
            if len(self.objects) >= total:
                return
            try:
                self.add_object(self.random_type(), self.pick_receptacle(self.open_receptacles()))
            except _Retry:
                continue
        if len(self.objects) < self.cfg.min_objects:
            raise _Retry("not enough room for the clutter")

    def num_objects(self) -> int:
        return int(self.rng.integers(self.cfg.min_objects, self.cfg.max_objects + 1))

    def target(self, obj_index: int, rec: Receptacle) -> Target:
        obj = OBJECT_TYPES[self.objects[obj_index].obj_type]
        return Target(obj_index, self.free_pose(obj, rec), rec.name)


# ---------------------------------------------------------------------------------- pick ends


class _Kinematics:
    """The bare MuJoCo Fetch (`clearance._rest_pose`) for arm forward kinematics: base at
    the origin facing +x, so world coordinates are base-frame coordinates."""

    def __init__(self) -> None:
        import mujoco

        from rearrange.sim import robot as R
        from rearrange.sim.config import SimConfig

        self.mj = mujoco
        cfg = SimConfig()
        spec = R.fetch_spec(cfg)
        # a mocap probe with every object shape, for exact gripper distances (grasps)
        probe = spec.worldbody.add_body(name="grasp_probe", mocap=True)
        shapes = {
            "box": mujoco.mjtGeom.mjGEOM_BOX,
            "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
            "sphere": mujoco.mjtGeom.mjGEOM_SPHERE,
        }
        for name, t in sorted(OBJECT_TYPES.items()):
            size = list(t.size) + [0.0] * (3 - len(t.size))
            g = probe.add_geom(name=f"probe_{name}", type=shapes[t.shape], size=size)
            g.contype, g.conaffinity = 0, 0
        self.model = m = spec.compile()
        self.data = mujoco.MjData(m)
        self.data.qpos[m.joint(R.PREFIX + "torso_lift_joint").qposadr[0]] = cfg.torso_lift
        self.probe_geom = {name: m.geom(f"probe_{name}").id for name in OBJECT_TYPES}
        self.gripper_geoms = [m.geom(n).id for n in R.GRIPPER_GEOMS]
        self.arm_adr = np.array([m.joint(n).qposadr[0] for n in R.ARM_JOINTS])
        self.arm_dof = np.array([m.joint(n).dofadr[0] for n in R.ARM_JOINTS])
        ranges = np.array([m.joint(n).range for n in R.ARM_JOINTS], dtype=np.float64)
        limited = np.array([m.jnt_limited[m.joint(n).id] for n in R.ARM_JOINTS], dtype=bool)
        ranges[~limited] = (-2 * math.pi, 2 * math.pi)
        self.arm_range = ranges
        self.rest = np.array(R.REST_ARM_QPOS, dtype=np.float64)
        self.gripper = m.body(R.GRIPPER_BODY).id
        self.ee_site = m.site(R.EE_SITE).id
        self.geoms = [
            g for g in range(m.ngeom) if m.geom_contype[g] != 0 or m.geom_conaffinity[g] != 0
        ]  # the robot's collision geoms (the probe's have neither bit)
        self.set_arm(self.rest)
        self.rest_ee = self.data.site_xpos[self.ee_site].copy()

    def set_arm(self, q) -> None:
        self.data.qpos[self.arm_adr] = q
        self.mj.mj_kinematics(self.model, self.data)

    def ee(self) -> np.ndarray:
        return self.data.site_xpos[self.ee_site].copy()

    def gripper_dist(self, obj: str, pos: np.ndarray, quat: np.ndarray) -> float:
        """Distance from the gripper's suction geoms (`grasp.SuctionGripper`) to an `obj`
        at pos / quat (base frame; negative: penetrating)."""
        self.data.mocap_pos[0] = pos
        self.data.mocap_quat[0] = quat
        self.mj.mj_kinematics(self.model, self.data)
        g2 = self.probe_geom[obj]
        return min(
            self.mj.mj_geomDistance(self.model, self.data, g, g2, 1.0, None)
            for g in self.gripper_geoms
        )

    def jacobian(self) -> np.ndarray:
        """d(EE)/d(arm joints), [3, 7], at the configuration set last."""
        self.mj.mj_comPos(self.model, self.data)
        jacp = np.zeros((3, self.model.nv))
        self.mj.mj_jacSite(self.model, self.data, jacp, None, self.ee_site)
        return jacp[:, self.arm_dof]

    def gripper_frame(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(position, rotation matrix, quaternion) of the gripper body."""
        d, b = self.data, self.gripper
        return d.xpos[b].copy(), d.xmat[b].reshape(3, 3).copy(), d.xquat[b].copy()

    def arm_discs(self, slice_len: float = 0.06, base_radius: float = 0.3) -> np.ndarray:
        """`clearance.arm_discs` for the arm as it is now (not at rest)."""
        m, d = self.model, self.data
        out = []
        for g in self.geoms:
            if m.geom_type[g] == self.mj.mjtGeom.mjGEOM_MESH:
                mid = m.geom_dataid[g]
                adr, n = m.mesh_vertadr[mid], m.mesh_vertnum[mid]
                local = m.mesh_vert[adr : adr + n].astype(np.float64)
            else:
                h = m.geom_size[g]
                local = np.array(
                    [
                        [a * h[0], b * h[1], c * h[2]]
                        for a in (-1, 1)
                        for b in (-1, 1)
                        for c in (-1, 1)
                    ]
                )
            out.append(local @ d.geom_xmat[g].reshape(3, 3).T + d.geom_xpos[g])
        verts = np.concatenate(out)
        verts = verts[np.hypot(verts[:, 0], verts[:, 1]) > base_radius]
        discs = []
        for x0 in np.arange(verts[:, 0].min(), verts[:, 0].max() + 1e-9, slice_len):
            sl = verts[(verts[:, 0] >= x0) & (verts[:, 0] < x0 + slice_len + 1e-9)]
            if len(sl) == 0:
                continue
            cx = 0.5 * (sl[:, 0].min() + sl[:, 0].max())
            cy = 0.5 * (sl[:, 1].min() + sl[:, 1].max())
            r = float(np.hypot(sl[:, 0] - cx, sl[:, 1] - cy).max())
            discs.append((cx, cy, r, sl[:, 2].min(), sl[:, 2].max()))
        return np.array(discs, dtype=np.float64)


_KINEMATICS: list[_Kinematics] = []


def _kinematics() -> _Kinematics:
    if not _KINEMATICS:
        _KINEMATICS.append(_Kinematics())
    return _KINEMATICS[0]


# Suction surfaces in the gripper body frame (x: out of the fingertips), as boxes
# (centre, half sizes) covering the MuJoCo Fetch's finger pads and gripper link: a pick
# grasps whatever touches them (`grasp.SuctionGripper`, threshold 0.02 m).
_GRIPPER_BOXES = (
    (np.array([0.0, 0.0, 0.0]), np.array([0.038, 0.015, 0.014])),
    (np.array([-0.094, 0.0, 0.002]), np.array([0.04, 0.062, 0.063])),
)


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )


def _quat_axis_angle(axis, angle: float) -> np.ndarray:
    axis = np.asarray(axis, dtype=np.float64)
    axis = axis / np.linalg.norm(axis)
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * axis])


def _quat_mat(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _support(obj: ObjectType, rot: np.ndarray, u: np.ndarray) -> float:
    """Support function of `obj` rotated by `rot` (centre at the origin) along unit `u`."""
    w = rot.T @ u
    if obj.shape == "box":
        return float(np.abs(w) @ np.asarray(obj.size))
    if obj.shape == "cylinder":
        r, h = obj.size
        return float(r * math.sqrt(max(0.0, 1.0 - w[2] ** 2)) + h * abs(w[2]))
    return float(obj.size[0])


def _ee_offset_target(rng: np.random.Generator, cfg: EpisodeGenConfig) -> np.ndarray:
    """Where the EE ends relative to rest: a learned pick lifts the object from below and
    stops on entering the rest tolerance (HAB: 0.13-0.15 m from rest, 0.04-0.15 m low,
    mostly ~0.12 m), so `arm_start_low_prob` of the draws lie on that lower shell; the
    rest fill the whole tolerance ball (a scripted pick's carry pose is 0.13 m high)."""
    tol = cfg.arm_start_ee_tol
    if rng.random() < cfg.arm_start_low_prob:
        z = rng.uniform(-1.0, -0.7)  # direction in the lower cap
        phi = rng.uniform(-math.pi, math.pi)
        s = math.sqrt(1.0 - z * z)
        return rng.uniform(0.88, 0.99) * tol * np.array([s * math.cos(phi), s * math.sin(phi), z])
    v = rng.normal(size=3)
    return tol * rng.random() ** (1 / 3) * v / np.linalg.norm(v)


def _sample_arm(rng: np.random.Generator, cfg: EpisodeGenConfig, kin: _Kinematics) -> np.ndarray:
    """Arm joints with the EE at a drawn offset from rest (`_ee_offset_target`, within
    `arm_start_ee_tol`), reached by damped least squares from a random perturbation of the
    rest joints (`arm_start_spread`), which keeps the joints as varied as a policy's."""
    spread = np.asarray(cfg.arm_start_spread, dtype=np.float64)
    lo, hi = kin.arm_range[:, 0], kin.arm_range[:, 1]
    for _ in range(20):
        goal = kin.rest_ee + _ee_offset_target(rng, cfg)
        q = np.clip(kin.rest + rng.uniform(-spread, spread), lo, hi)
        for _ in range(12):
            kin.set_arm(q)
            err = goal - kin.ee()
            if np.linalg.norm(err) < 0.005:
                break
            jac = kin.jacobian()
            q = np.clip(q + jac.T @ np.linalg.solve(jac @ jac.T + 1e-4 * np.eye(3), err), lo, hi)
        kin.set_arm(q)
        if np.linalg.norm(kin.ee() - kin.rest_ee) <= cfg.arm_start_ee_tol:
            return q
    return kin.rest.copy()


def _sample_grasp(
    rng: np.random.Generator, obj: ObjectType, cfg: EpisodeGenConfig, kin: _Kinematics
) -> np.ndarray:
    """The held object's pose in the gripper frame [x, y, z, qw, qx, qy, qz]: upright in
    the base frame up to a tilt, any yaw, `grasp_gap` from the gripper's suction geoms
    along a direction through the finger pads' face (a top grasp) or from any side.
    The arm is where `kin` was set last."""
    g_pos, g_rot, q_gripper = kin.gripper_frame()
    yaw = rng.uniform(-math.pi, math.pi)
    tilt_axis = rng.uniform(-math.pi, math.pi)
    tilt = rng.uniform(0.0, cfg.grasp_max_tilt)
    q_obj = _quat_mul(
        _quat_axis_angle((math.cos(tilt_axis), math.sin(tilt_axis), 0.0), tilt),
        _quat_axis_angle((0.0, 0.0, 1.0), yaw),
    )
    q_rel = _quat_mul(q_gripper * np.array([1.0, -1.0, -1.0, -1.0]), q_obj)
    q_rel /= np.linalg.norm(q_rel)
    rot = _quat_mat(q_rel)
    if rng.random() < cfg.grasp_top_prob:  # within a cone around the gripper axis (+x)
        cos_max = math.cos(cfg.grasp_top_cone)
    else:  # any side but from behind the gripper link
        cos_max = -0.2
    c = rng.uniform(cos_max, 1.0)
    phi = rng.uniform(-math.pi, math.pi)
    s = math.sqrt(max(0.0, 1.0 - c * c))
    u = np.array([c, s * math.cos(phi), s * math.sin(phi)])
    # slide the object in along u until it is `grasp_gap` from the suction geoms: start
    # beyond every suction box (clear of them), bisect the exact distance against 0
    q_base = _quat_mul(q_gripper, q_rel)

    def gap(t: float) -> float:
        return kin.gripper_dist(obj.name, g_pos + g_rot @ (u * t), q_base) - cfg.grasp_gap

    far = max(float(u @ centre + np.abs(u) @ half) for centre, half in _GRIPPER_BOXES)
    far += _support(obj, rot, u) + 2 * cfg.grasp_gap
    while gap(far) < 0:
        far += 0.02
    near = 0.0
    for _ in range(20):
        mid = 0.5 * (near + far)
        near, far = (near, mid) if gap(mid) >= 0 else (mid, far)
    return np.concatenate([u * far, q_rel])


def _arm_start(rng: np.random.Generator, cfg: EpisodeGenConfig) -> tuple[list[float], np.ndarray]:
    """Arm joints a previous skill may leave (exactly at rest with `start_rest_prob`, else
    `_sample_arm`), rounded as stored, and the arm's base-frame discs there."""
    kin = _kinematics()
    if rng.random() < cfg.start_rest_prob:
        q = kin.rest.copy()
    else:
        q = _sample_arm(rng, cfg, kin)
    q = np.round(q, cfg.decimals)
    kin.set_arm(q)
    discs = kin.arm_discs(base_radius=cfg.robot_radius)
    kin.set_arm(kin.rest)
    return [float(v) for v in q], discs


def _pick_end(rng: np.random.Generator, obj: ObjectType, cfg: EpisodeGenConfig) -> tuple:
    """A place start like a pick's end: (arm joints, held pose in the gripper frame, the
    arm's base-frame discs, the held object's base-frame disc), rounded as stored."""
    q, discs = _arm_start(rng, cfg)
    kin = _kinematics()
    kin.set_arm(q)
    pose = np.round(_sample_grasp(rng, obj, cfg, kin), cfg.decimals)
    kin.set_arm(q)
    g_pos, g_rot, _ = kin.gripper_frame()
    centre = g_pos + g_rot @ pose[:3]
    r = float(np.linalg.norm(obj.size))
    disc = (float(centre[0]), float(centre[1]), r, float(centre[2] - r), float(centre[2] + r))
    kin.set_arm(kin.rest)
    return q, [float(v) for v in pose], discs, disc


# ---------------------------------------------------------------------------------- tasks


def _is_drawer(r: Receptacle) -> bool:
    return r.container is not None and r.container.startswith("drawer")


def _is_fridge(r: Receptacle) -> bool:
    return r.container == "fridge"


def _build_pick(sc: _Scene, task: str) -> tuple:
    open_recs = sc.open_receptacles()
    in_fridge = task == "pick" and sc.rng.random() < sc.cfg.fridge_pick_prob
    if in_fridge:
        src = sc.pick_receptacle(sc.receptacles(_is_fridge))
        sc.open_articulations.add(src.container)
    else:
        src = sc.pick_receptacle(open_recs)
    idx = sc.add_object(sc.random_type(), src)
    sc.add_clutter(sc.num_objects())
    target = sc.target(idx, sc.pick_receptacle(open_recs, exclude=src.name))
    obj_xy = sc.objects[idx].pos[:2]
    extras: dict = {}
    if task in ("pick", "place"):
        if task == "place":
            sc.held = idx
            extras["holding"] = idx
            arm, held_pose, sc.arm_discs, sc.held_disc = _pick_end(
                sc.rng, OBJECT_TYPES[sc.objects[idx].obj_type], sc.cfg
            )
            extras["arm_start"], extras["held_pose"] = arm, held_pose
            where = target.goal_pos[:2]
            approach = sc.front_yaw(sc.layout.receptacle(target.goal_receptacle).furniture)
            start = sc.spawn_place(where, approach)
        else:  # the arm as the previous skill (a place, a nav) left it
            extras["arm_start"], sc.arm_discs = _arm_start(sc.rng, sc.cfg)
            where, approach = obj_xy, sc.front_yaw(src.furniture)
            start = sc.spawn_close(where, approach)
        extras["robot_start_far"] = list(sc.spawn_near(where, approach))
    else:  # nav: end where a pick of the target would start (facing it, within reach)
        goal = sc.spawn_close(obj_xy, sc.front_yaw(src.furniture), yaw_noise=0.0)
        start = sc.spawn_anywhere(away_from=goal[:2], min_dist=sc.cfg.nav_min_dist)
        extras["nav_goal"] = list(goal)
    return start, [target], extras


def _build_articulated(sc: _Scene, task: str) -> tuple:
    spec = ARTICULATED_SKILLS[task]
    prefix = spec.articulation
    arts = [a for a in sc.layout.articulations if a.name.startswith(prefix)]
    if not arts:
        raise _Retry(f"layout has no {prefix}")
    art = arts[int(sc.rng.integers(len(arts)))]
    if not spec.opens:  # a closing task starts open
        sc.open_articulations.add(art.name)
    sc.add_clutter(sc.num_objects())
    handle = sc.clearance().handle_pos(art.name)  # where it is at the episode's joint value
    approach = sc.front_yaw(art.furniture)
    start = sc.spawn_work(art, handle)
    far = sc.spawn_near(handle[:2], approach)
    return start, [], {"articulation": art.name, "robot_start_far": list(far)}


def _build_tidy_house(sc: _Scene, task: str) -> tuple:
    sc.add_clutter(max(5, sc.num_objects()))
    if len(sc.objects) < 5:
        raise _Retry("tidy_house needs 5 objects")
    order = sc.rng.permutation(len(sc.objects))[:5]
    targets = []
    for i in order:
        src = sc.objects[int(i)].receptacle
        targets.append(sc.target(int(i), sc.pick_receptacle(sc.open_receptacles(), exclude=src)))
    return sc.spawn_anywhere(), targets, {}


def _build_prepare_groceries(sc: _Scene, task: str) -> tuple:
    """Habitat 2.0: two objects from the fridge to the counter, one from the counter back."""
    fridge = sc.pick_receptacle(sc.receptacles(_is_fridge))
    counters = sc.receptacles(lambda r: r.container is None and r.name.startswith("counter"))
    sc.open_articulations.add(fridge.container)
    from_fridge = [sc.add_object(sc.random_type(), fridge) for _ in range(2)]
    counter = sc.pick_receptacle(counters)
    from_counter = sc.add_object(sc.random_type(), counter)
    sc.add_clutter(sc.num_objects())
    targets = [sc.target(i, sc.pick_receptacle(counters)) for i in from_fridge]
    targets.append(sc.target(from_counter, fridge))
    return sc.spawn_anywhere(), targets, {}


def _build_set_table(sc: _Scene, task: str) -> tuple:
    """Habitat 2.0: a bowl from a closed drawer, then fruit from the closed fridge, to the table."""
    drawer = sc.pick_receptacle(sc.receptacles(_is_drawer))
    fridge = sc.pick_receptacle(sc.receptacles(_is_fridge))
    tables = sc.receptacles(lambda r: r.container is None and r.name.startswith("table"))
    bowl = OBJECT_TYPES["bowl"]
    if bowl.footprint_radius > min(drawer.surface.half_size[:2]):
        bowl = sc.random_type(max_half_height=0.03)
    fruit = OBJECT_TYPES[str(sc.rng.choice(["apple", "orange", "lemon"]))]
    first = sc.add_object(bowl, drawer)
    second = sc.add_object(fruit, fridge)
    sc.add_clutter(sc.num_objects())
    table = sc.pick_receptacle(tables)
    return sc.spawn_anywhere(), [sc.target(first, table), sc.target(second, table)], {}


_BUILDERS = {
    "nav": _build_pick,
    "pick": _build_pick,
    "place": _build_pick,
    "open_fridge": _build_articulated,
    "close_fridge": _build_articulated,
    "open_cab": _build_articulated,
    "close_cab": _build_articulated,
    "tidy_house": _build_tidy_house,
    "prepare_groceries": _build_prepare_groceries,
    "set_table": _build_set_table,
}


# ---------------------------------------------------------------------------------- generation


_CACHE_SIZE = 64
_SCENES: OrderedDict[tuple, tuple[Layout, NavMap, Footprints]] = OrderedDict()


def scene_assets(
    scene_seed: int, split: str, layout_fn: LayoutFn, robot_radius: float
) -> tuple[Layout, NavMap, Footprints]:
    """(layout, NavMap, sim footprints) of a scene, from an LRU cache shared by all calls
    (the NavMap's distance fields are deterministic, so sharing never changes results)."""
    key = (layout_fn, int(scene_seed), split, float(robot_radius))
    if key in _SCENES:
        _SCENES.move_to_end(key)
        return _SCENES[key]
    layout = layout_fn(scene_seed, split)
    assets = (layout, NavMap(layout, robot_radius=robot_radius), Footprints(layout))
    _SCENES[key] = assets
    if len(_SCENES) > _CACHE_SIZE:
        _SCENES.popitem(last=False)
    return assets


def scene_pool(seed: int, split: str, index: int) -> list[int]:
    """Scene seeds the episode `index` draws from: its block's pool (task-independent)."""
    block = index // EPISODES_PER_BLOCK
    rng = np.random.default_rng([_POOL_SALT, seed, SPLITS.index(split), block])
    n = SCENE_SEEDS[split]
    return [int(v) for v in rng.choice(n, size=min(SCENES_PER_BLOCK, n), replace=False)]


def generate_episodes(
    task: str,
    split: str,
    n: int,
    seed: int,
    *,
    layout_fn: LayoutFn | None = None,
    config: EpisodeGenConfig | None = None,
) -> list[Episode]:
    """`n` episodes of `task` on `split` scenes, identical for identical arguments.

    `layout_fn(scene_seed, split)` defaults to `apartment.generate_layout` (tests pass
    hand-made layouts).
    """
    check_task_split(task, split)
    if n < 0:
        raise EpisodeError(f"number of episodes must be >= 0, got {n}")
    cfg = config or EpisodeGenConfig()
    fn = layout_fn or _default_layout_fn
    return [_generate_one(task, split, seed, i, fn, cfg) for i in range(n)]


def _generate_one(
    task: str, split: str, seed: int, index: int, layout_fn: LayoutFn, cfg
) -> Episode:
    rng = np.random.default_rng([seed, TASKS.index(task), SPLITS.index(split), index])
    pool = scene_pool(seed, split, index)
    last = ""
    for attempt in range(cfg.max_attempts):
        if attempt < 2 * len(pool):  # the block's pool first, then any scene of the split
            scene_seed = pool[int(rng.integers(len(pool)))]
        else:
            scene_seed = int(rng.integers(SCENE_SEEDS[split]))
        layout, navmap, footprints = scene_assets(scene_seed, split, layout_fn, cfg.robot_radius)
        sc = _Scene(layout, navmap, rng, cfg, footprints)
        try:
            start, targets, extras = _BUILDERS[task](sc, task)
        except NoPlacement as err:
            last = str(err)
            continue
        return Episode(
            episode_id=f"{task}-{split}-{index:04d}",
            task=task,
            split=split,
            scene_seed=scene_seed,
            robot_start=start,
            objects=sc.objects,
            targets=targets,
            articulations=sc.articulation_values(),
            extras=extras,
        )
    raise EpisodeError(
        f"could not generate {task} episode {index} of split {split} in {cfg.max_attempts} scenes "
        f"(last problem: {last}); check the layouts have the receptacles this task needs"
    )


# ---------------------------------------------------------------------------------- JSON I/O


def save_episodes(path: str | Path, episodes: list[Episode]) -> None:
    """Write episodes as JSON (gzip-compressed when the name ends in .gz)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "schema": SCHEMA,
        "version": SCHEMA_VERSION,
        "episodes": [dataclasses.asdict(ep) for ep in episodes],
    }
    text = json.dumps(doc, separators=(",", ":"))
    tmp = path.with_name(path.name + ".tmp")
    if path.name.endswith(".gz"):
        with gzip.open(tmp, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)  # atomic: a reader never sees half a file


def load_episodes(path: str | Path) -> list[Episode]:
    """Read a file written by `save_episodes`; EpisodeError names the file and the fix."""
    path = Path(path)
    regen = "regenerate it with `python -m rearrange.sim.generate TASK --split SPLIT --out PATH`"
    if not path.is_file():
        raise EpisodeError(f"episode file {path} not found; {regen}")
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as f:
                doc = json.load(f)
        else:
            doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise EpisodeError(
            f"episode file {path} is corrupt ({type(err).__name__}); {regen}"
        ) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise EpisodeError(
            f"{path} is not a rearrange episode file (no schema {SCHEMA!r}); {regen}"
        )
    if doc.get("version") != SCHEMA_VERSION:
        raise EpisodeError(
            f"{path} has episode schema version {doc.get('version')!r}, expected {SCHEMA_VERSION}; {regen}"
        )
    try:
        return [episode_from_dict(d) for d in doc["episodes"]]
    except (KeyError, TypeError, ValueError, IndexError) as err:
        raise EpisodeError(f"{path} has a malformed episode ({err}); {regen}") from None


def _floats(values, n: int, what: str) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if len(out) != n:
        raise ValueError(f"{what} needs {n} numbers, got {len(out)}")
    return out


def episode_from_dict(d: dict) -> Episode:
    """Inverse of `dataclasses.asdict` for an Episode, with type checks."""
    if d["task"] not in TASKS or d["split"] not in SPLITS:
        raise ValueError(f"unknown task/split {d['task']!r}/{d['split']!r}")
    objects = [
        ObjectPlacement(
            obj_type=str(o["obj_type"]),
            pos=_floats(o["pos"], 3, "pos"),
            quat=_floats(o["quat"], 4, "quat"),
            receptacle=str(o["receptacle"]),
        )
        for o in d["objects"]
    ]
    for o in objects:
        if o.obj_type not in OBJECT_TYPES:
            raise ValueError(f"unknown object type {o.obj_type!r}")
    targets = [
        Target(
            obj_index=int(t["obj_index"]),
            goal_pos=_floats(t["goal_pos"], 3, "goal_pos"),
            goal_receptacle=str(t["goal_receptacle"]),
        )
        for t in d["targets"]
    ]
    if any(not 0 <= t.obj_index < len(objects) for t in targets):
        raise ValueError("target obj_index out of range")
    return Episode(
        episode_id=str(d["episode_id"]),
        task=d["task"],
        split=d["split"],
        scene_seed=int(d["scene_seed"]),
        robot_start=_floats(d["robot_start"], 3, "robot_start"),
        objects=objects,
        targets=targets,
        articulations={str(k): float(v) for k, v in dict(d["articulations"]).items()},
        extras=dict(d["extras"]),
    )
