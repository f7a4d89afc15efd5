"""Build (and cache) the MuJoCo model of one apartment + objects + Fetch with MjSpec."""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

import mujoco
import numpy as np

from rearrange.sim import robot as R
from rearrange.sim.config import SimConfig
from rearrange.sim.furniture_geoms import (
    FLOOR_CONAFFINITY,
    FLOOR_CONTYPE,
    MOVABLE_CONAFFINITY,
    MOVABLE_CONTYPE,
    STATIC_BIT,
    add_furniture,
    box,
)
from rearrange.sim.layout_types import Layout
from rearrange.sim.objects import object_type

_CACHE: OrderedDict[tuple, tuple[mujoco.MjModel, SceneIndex]] = OrderedDict()
_CACHE_SIZE = 8
FLOOR_GRID = 2.0
"""Render grid spacing of the floor plane (m). MuJoCo draws a plane as one quad per grid cell;
at 0.1 m a 14 x 8 m floor was ~11k quads, a third of the head camera's render time. The floor
is evenly lit (directional light), so coarse cells look the same."""
WELD_TIMECONST_STEPS = 2.0
"""Suction/handle weld time constant in physics steps: 2 is the stiffest MuJoCo allows
(it clamps smaller ones), critically damped; MuJoCo's default (0.02 s = 2.4 steps at
120 Hz) with its softer impedance let a held body lag the moving gripper by centimetres."""
WELD_SOLIMP = (0.99, 0.999, 0.001, 0.5, 2.0)
"""Weld impedance near 1: the constraint takes (almost) all of the correcting force."""


@dataclass
class SceneIndex:
    """Ids and addresses of everything the simulator touches by index."""

    arm_qpos: np.ndarray  # [7] qpos addresses of the arm joints
    arm_dof: np.ndarray  # [7] dof addresses
    arm_range: np.ndarray  # [7, 2] joint limits (unlimited joints: +-2pi)
    base_qpos: np.ndarray  # [3] x, y, yaw
    base_dof: np.ndarray  # [3]
    fixed_qpos: dict[str, int]  # joint name -> qpos address (torso, head, fingers)
    robot_dof: np.ndarray  # all robot dof addresses (zeroed after each substep)
    robot_geoms: np.ndarray  # bool mask over geoms
    gripper_geoms: np.ndarray  # geom ids of the gripper (suction surface)
    gripper_body: int
    ee_site: int
    base_body: int
    head_camera: int
    obj_bodies: np.ndarray  # [n] body ids
    obj_geoms: np.ndarray  # [n] geom ids
    obj_qpos: np.ndarray  # [n] qpos address of each free joint
    obj_dof: np.ndarray  # [n] dof address of each free joint
    obj_eq: np.ndarray  # [n] weld equality ids
    art_qpos: dict[str, int]  # articulation -> qpos address
    art_dof: dict[str, int]
    art_body: dict[str, int]  # moving body (door / drawer)
    art_handle_geom: dict[str, int]
    art_handle_site: dict[str, int]
    art_eq: dict[str, int]  # weld gripper -> door/drawer, for handle grasps
    art_geoms: dict[str, np.ndarray]  # collision geoms of each door/drawer body
    art_grip_geoms: dict[str, np.ndarray]  # its handle bar and posts: what a grasp holds
    robot_collision_geoms: np.ndarray  # robot geoms that collide (not render proxies)
    default_conaffinity: np.ndarray  # every geom's compiled conaffinity (grasps edit it)


def _yaw_quat(yaw: float) -> list[float]:
    return [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]


def _add_world(spec: mujoco.MjSpec, layout: Layout) -> None:
    wb = spec.worldbody
    x0, y0, x1, y1 = layout.bounds
    floor = wb.add_geom(
        name="floor",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        pos=[(x0 + x1) / 2, (y0 + y1) / 2, 0],
        size=[(x1 - x0) / 2 + 1, (y1 - y0) / 2 + 1, FLOOR_GRID],
    )
    floor.rgba = [0.62, 0.58, 0.52, 1]
    floor.contype, floor.conaffinity = FLOOR_CONTYPE, FLOOR_CONAFFINITY
    for k, w in enumerate(layout.walls):
        g = box(wb, w.center, w.half_size, (0.85, 0.85, 0.8, 1), f"wall_{k}")
        g.quat = _yaw_quat(w.yaw)
    for f in layout.furniture:
        body = wb.add_body(
            name=f.name, pos=[f.center[0], f.center[1], 0], quat=_yaw_quat(f.front_yaw)
        )
        add_furniture(body, f)
    _exclude_part_carcass(spec, layout)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    light = wb.add_light(name="sun", pos=[cx, cy, 6.0], dir=[0.2, 0.1, -1.0])
    light.type = mujoco.mjtLightType.mjLIGHT_DIRECTIONAL
    light.castshadow = False
    light.diffuse = [0.7, 0.7, 0.7]
    light.ambient = [0.3, 0.3, 0.3]


def _part_body(art_name: str) -> str:
    return "fridge_door" if art_name == "fridge" else f"{art_name}_body"


def _exclude_part_carcass(spec: mujoco.MjSpec, layout: Layout) -> None:
    """No contacts between a door/drawer and its own furniture (the joint range is the
    stop). MuJoCo's parent filter does not apply: the carcass is welded to the world."""
    for a in layout.articulations:
        spec.add_exclude(bodyname1=a.furniture, bodyname2=_part_body(a.name))


def _weld_solref(config: SimConfig) -> list[float]:
    return [WELD_TIMECONST_STEPS * config.physics_dt, 1.0]


def _add_objects(spec: mujoco.MjSpec, obj_types: tuple[str, ...], config: SimConfig) -> None:
    for i, name in enumerate(obj_types):
        t = object_type(name)
        body = spec.worldbody.add_body(name=f"obj_{i}", pos=[0, 0, -1 - i])
        body.add_freejoint(name=f"obj_{i}_joint")
        shape = {
            "box": mujoco.mjtGeom.mjGEOM_BOX,
            "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
            "sphere": mujoco.mjtGeom.mjGEOM_SPHERE,
        }[t.shape]
        size = list(t.size) + [0.0] * (3 - len(t.size))
        g = body.add_geom(name=f"obj_{i}_geom", type=shape, size=size, mass=t.mass)
        g.rgba = list(t.rgba)
        g.contype, g.conaffinity = MOVABLE_CONTYPE, MOVABLE_CONAFFINITY
        g.friction = [1.0, 0.01, 0.001]
        if t.shape != "box":
            g.condim = 6  # rolling friction keeps round things from creeping
        spec.joint(f"obj_{i}_joint").damping = [config.object_damping, 0.0, 0.0]
        spec.add_equality(
            name=f"grasp_obj_{i}",
            type=mujoco.mjtEq.mjEQ_WELD,
            objtype=mujoco.mjtObj.mjOBJ_BODY,
            name1=R.GRIPPER_BODY,
            name2=f"obj_{i}",
            active=False,
            solref=_weld_solref(config),
            solimp=list(WELD_SOLIMP),
        )


def _add_handle_welds(spec: mujoco.MjSpec, layout: Layout, config: SimConfig) -> None:
    for a in layout.articulations:
        body = _part_body(a.name)
        spec.add_equality(
            name=f"grasp_{a.name}",
            type=mujoco.mjtEq.mjEQ_WELD,
            objtype=mujoco.mjtObj.mjOBJ_BODY,
            name1=R.GRIPPER_BODY,
            name2=body,
            active=False,
            solref=_weld_solref(config),
            solimp=list(WELD_SOLIMP),
        )


def _configure(spec: mujoco.MjSpec, config: SimConfig) -> None:
    spec.option.timestep = config.physics_dt
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.stat.extent = 1.0  # so vis.map.znear/zfar are in metres
    spec.visual.map.znear = config.camera_near
    spec.visual.map.zfar = max(50.0, config.camera_far)  # depth is clipped to camera_far
    spec.visual.quality.shadowsize = 0
    spec.visual.quality.offsamples = 0  # no MSAA: 128x128 depth on llvmpipe is fill-bound
    spec.visual.global_.offwidth = max(config.third_person_width, 1280)
    spec.visual.global_.offheight = max(config.third_person_height, 960)


def _index(m: mujoco.MjModel, layout: Layout, n_obj: int) -> SceneIndex:
    jid = lambda n: m.joint(n).id  # noqa: E731
    arm = [jid(n) for n in R.ARM_JOINTS]
    rng = m.jnt_range[arm].copy()
    unlimited = ~m.jnt_limited[arm].astype(bool)
    rng[unlimited] = (-2 * math.pi, 2 * math.pi)
    base_body = m.body(R.BASE_BODY).id
    robot_bodies = [b for b in range(m.nbody) if _is_descendant(m, b, base_body)]
    robot_geoms = np.isin(m.geom_bodyid, robot_bodies)
    robot_dof = np.flatnonzero(np.isin(m.dof_bodyid, robot_bodies))
    arts = [a.name for a in layout.articulations]
    art_body = {a: m.body("fridge_door" if a == "fridge" else f"{a}_body").id for a in arts}
    return SceneIndex(
        arm_qpos=m.jnt_qposadr[arm].copy(),
        arm_dof=m.jnt_dofadr[arm].copy(),
        arm_range=rng,
        base_qpos=np.array([m.jnt_qposadr[jid(n)] for n in R.BASE_JOINTS]),
        base_dof=np.array([m.jnt_dofadr[jid(n)] for n in R.BASE_JOINTS]),
        fixed_qpos={n: int(m.jnt_qposadr[jid(n)]) for n in R.FIXED_JOINTS},
        robot_dof=robot_dof,
        robot_geoms=robot_geoms,
        gripper_geoms=np.array([m.geom(n).id for n in R.GRIPPER_GEOMS]),
        gripper_body=m.body(R.GRIPPER_BODY).id,
        ee_site=m.site(R.EE_SITE).id,
        base_body=base_body,
        head_camera=m.camera(R.HEAD_CAMERA).id,
        obj_bodies=np.array([m.body(f"obj_{i}").id for i in range(n_obj)], dtype=int),
        obj_geoms=np.array([m.geom(f"obj_{i}_geom").id for i in range(n_obj)], dtype=int),
        obj_qpos=np.array([m.jnt_qposadr[jid(f"obj_{i}_joint")] for i in range(n_obj)], dtype=int),
        obj_dof=np.array([m.jnt_dofadr[jid(f"obj_{i}_joint")] for i in range(n_obj)], dtype=int),
        obj_eq=np.array([m.equality(f"grasp_obj_{i}").id for i in range(n_obj)], dtype=int),
        art_qpos={a: int(m.jnt_qposadr[jid(a)]) for a in arts},
        art_dof={a: int(m.jnt_dofadr[jid(a)]) for a in arts},
        art_body=art_body,
        art_handle_geom={a: m.geom(f"handle_{a}").id for a in arts},
        art_handle_site={a: m.site(f"handle_site_{a}").id for a in arts},
        art_eq={a: m.equality(f"grasp_{a}").id for a in arts},
        art_geoms={a: np.flatnonzero(m.geom_bodyid == b) for a, b in art_body.items()},
        art_grip_geoms={
            a: np.array([g for g in range(m.ngeom) if m.geom(g).name.startswith(f"handle_{a}")])
            for a in arts
        },
        robot_collision_geoms=np.flatnonzero(robot_geoms & (m.geom_contype != 0)),
        default_conaffinity=m.geom_conaffinity.copy(),
    )


def _is_descendant(m: mujoco.MjModel, body: int, root: int) -> bool:
    while body > 0:
        if body == root:
            return True
        body = int(m.body_parentid[body])
    return False


def build_model(
    layout: Layout, obj_types: tuple[str, ...], config: SimConfig
) -> tuple[mujoco.MjModel, SceneIndex]:
    """Compile the scene; cached per (layout seed, split, object types, config)."""
    key = (layout.seed, layout.split, tuple(obj_types), repr(config))
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    spec = R.fetch_spec(config)
    _configure(spec, config)
    _add_world(spec, layout)
    _add_objects(spec, tuple(obj_types), config)
    _add_handle_welds(spec, layout, config)
    model = spec.compile()
    index = _index(model, layout, len(obj_types))
    # MuJoCo prunes body pairs by the OR of their geoms' bits (compiled once): let robot
    # bodies pass against static ones so the sim's penetration pass (which switches the
    # robot geoms' static bit on) sees them; geom bits still keep them out of the physics.
    robot_bodies = np.unique(model.geom_bodyid[index.robot_collision_geoms])
    model.body_conaffinity[robot_bodies] |= STATIC_BIT
    out = (model, index)
    _CACHE[key] = out
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return out
