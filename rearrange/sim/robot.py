"""The Fetch robot, loaded from the installed gymnasium-robotics assets and adapted.

Changes to the gym model (why):
- the mocap body and its weld are removed: we drive the arm by joint targets, not mocap;
- a yaw hinge is added to the base so the base is driven kinematically as (x, y, yaw);
- gravity is compensated and damping removed: every robot joint is set kinematically each
  physics substep, so the robot's own dynamics must not fight the targets;
- robot geoms collide only with movable things (free objects, doors, drawers), not with
  themselves, the floor or fixed furniture (see the collision bits in `furniture_geoms`;
  their penetration of fixed furniture is measured geometrically by the sim);
- the head camera sees low-poly copies of the arm meshes (`add_head_proxies`): the full
  meshes (8k triangles) were 60% of a 128x128 depth render on CPU.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

import mujoco
import numpy as np

from rearrange.sim.config import SimConfig

PREFIX = "robot0:"
ARM_JOINTS = tuple(
    PREFIX + n
    for n in (
        "shoulder_pan_joint",
        "shoulder_lift_joint",
        "upperarm_roll_joint",
        "elbow_flex_joint",
        "forearm_roll_joint",
        "wrist_flex_joint",
        "wrist_roll_joint",
    )
)
BASE_JOINTS = (PREFIX + "slide0", PREFIX + "slide1", PREFIX + "base_yaw")
FIXED_JOINTS = (
    PREFIX + "slide2",
    PREFIX + "torso_lift_joint",
    PREFIX + "head_pan_joint",
    PREFIX + "head_tilt_joint",
    PREFIX + "r_gripper_finger_joint",
    PREFIX + "l_gripper_finger_joint",
)
GRIPPER_BODY = PREFIX + "gripper_link"
GRIPPER_GEOMS = (
    PREFIX + "gripper_link",
    PREFIX + "r_gripper_finger_link",
    PREFIX + "l_gripper_finger_link",
)
EE_SITE = PREFIX + "grip"
HEAD_CAMERA = "head_camera_rgb"
BASE_BODY = PREFIX + "base_link"

# Arm resting pose: gripper in front of the chest, above counter height, out of the
# head camera's centre (close to Habitat's Fetch start pose).
REST_ARM_QPOS = (-0.45, -1.08, 0.1, 0.935, -0.001, 1.573, 0.005)
# Carry pose: the EE at rest + this (m, base frame), where the HAB executor's arm reset
# (skills/reset_arm.py) holds an object between a pick and the place (rest raised 0.13 m,
# still inside the skills' 0.15 m rest tolerance); nav episodes that start holding
# (EpisodeGenConfig.nav_hold_prob) start there too.
CARRY_EE_OFFSET = (-0.04, 0.0, 0.13)
# rad: the HAB arm reset (skills/reset_arm.py) ends once every joint is this close to its
# canonical value (the rest joints, or `episodes.arm_starts.carry_joints` while holding), so
# a carrying nav leg starts with the arm within this of the canonical carry joints.
RESET_JOINT_TOL = 0.02

ROBOT_CONTYPE, ROBOT_CONAFFINITY = 2, 0  # furniture_geoms.ROBOT_BIT; movables carry it

# Meshes the head camera cannot usefully see (behind or below it) but which hold ~2/3 of the
# robot's triangles: they go to geom group 3, hidden in head renders, shown in third person.
HEAD_HIDDEN_GROUP = 3
HEAD_HIDDEN_GEOMS = tuple(
    PREFIX + n
    for n in (
        "base_link",
        "estop_link",
        "laser_link",
        "head_pan_link",
        "head_tilt_link",
        "torso_fixed_link",
        "torso_lift_link",
    )
)


# Render-only low-poly copies of the arm meshes, seen by the head camera instead of the
# full meshes (moved to HEAD_HIDDEN_GROUP, so third-person views keep the detailed robot).
HEAD_PROXY_GROUP = 4
PROXY_CELL = 0.015
"""Vertex-clustering cell (m): vertices move less than a cell; 8.2k -> 1.7k arm triangles.
Measured: < 0.6 % of 128x128 head depth pixels change by more than 1 cm."""


def _asset_dirs() -> tuple[str, str]:
    # find_spec locates the package without importing it: importing gymnasium_robotics
    # prints a notice about its Adroit envs to stderr, which would spoil one-line errors.
    spec = importlib.util.find_spec("gymnasium_robotics")
    locations = spec.submodule_search_locations if spec is not None else None
    root = Path(locations[0]) / "envs" / "assets" if locations else Path("/nonexistent")
    fetch, stls = root / "fetch", root / "stls" / "fetch"
    if not (fetch / "robot.xml").is_file():
        raise FileNotFoundError(
            f"Fetch assets not found at {fetch}; install gymnasium-robotics>=1.2 "
            "(pip install gymnasium-robotics)"
        )
    return str(fetch), str(stls)


def fetch_spec(config: SimConfig) -> mujoco.MjSpec:
    """A new MjSpec holding only the adapted Fetch; the scene builder adds the world."""
    fetch, stls = _asset_dirs()
    xml = f"""<mujoco model="rearrange">
      <compiler angle="radian" meshdir="{stls}"/>
      <include file="{fetch}/shared.xml"/>
      <worldbody><include file="{fetch}/robot.xml"/></worldbody>
    </mujoco>"""
    spec = mujoco.MjSpec.from_string(xml)
    for eq in list(spec.equalities):
        spec.delete(eq)
    spec.delete(spec.body(PREFIX + "mocap"))
    for tex in list(spec.textures):  # gym's skybox/block textures need files we don't ship
        spec.delete(tex)
    base = spec.body(BASE_BODY)
    base.pos = [0.0, 0.0, 0.0]
    base.add_joint(name=PREFIX + "base_yaw", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 0, 1])
    for body in [base, *base.find_all(mujoco.mjtObj.mjOBJ_BODY)]:
        body.gravcomp = 1.0
    for joint in base.find_all(mujoco.mjtObj.mjOBJ_JOINT):
        joint.damping = [0.0, 0.0, 0.0]
        joint.stiffness = [0.0, 0.0, 0.0]
        joint.armature = 1.0
    for geom in base.find_all(mujoco.mjtObj.mjOBJ_GEOM):
        geom.contype, geom.conaffinity = ROBOT_CONTYPE, ROBOT_CONAFFINITY
    for name in HEAD_HIDDEN_GEOMS:
        spec.geom(name).group = HEAD_HIDDEN_GROUP
    spec.camera(HEAD_CAMERA).fovy = config.head_fovy
    if config.head_lowpoly_robot:
        add_head_proxies(spec, stls)
    return spec


def read_stl(path: str) -> np.ndarray:
    """Triangles [n, 3, 3] of a binary STL file."""
    with open(path, "rb") as f:
        raw = f.read()
    n = int(np.frombuffer(raw, np.uint32, 1, 80)[0]) if len(raw) >= 84 else -1
    if n < 0 or len(raw) != 84 + 50 * n:
        raise ValueError(f"{path} is not a binary STL file; reinstall gymnasium-robotics")
    tri = np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)), ("attr", "<u2")])
    return np.frombuffer(raw, tri, n, 84)["v"].astype(np.float64)


def cluster_decimate(tris: np.ndarray, cell: float) -> tuple[np.ndarray, np.ndarray]:
    """Vertex clustering: merge the vertices in each `cell`-sized grid cube into their mean,
    drop the triangles that collapse and duplicates. Returns (vertices [v, 3], faces [f, 3])."""
    v = tris.reshape(-1, 3)
    _, inv = np.unique(np.floor(v / cell).astype(np.int64), axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    count = np.bincount(inv).astype(np.float64)
    verts = np.stack([np.bincount(inv, v[:, k]) for k in range(3)], axis=1) / count[:, None]
    f = inv.reshape(-1, 3)
    f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])]
    _, first = np.unique(np.sort(f, axis=1), axis=0, return_index=True)
    f = f[np.sort(first)]  # keep each triangle once, in its original winding
    used, faces = np.unique(f, return_inverse=True)
    return verts[used], faces.reshape(-1, 3)


@lru_cache(maxsize=32)
def _lowpoly(path: str, scale: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    return cluster_decimate(read_stl(path) * np.asarray(scale), PROXY_CELL)


def add_head_proxies(spec: mujoco.MjSpec, stls: str) -> None:
    """For every robot mesh geom the head camera can see, add a render-only low-poly copy
    (no collisions, no mass: bodies carry explicit inertials) and hide the original from it."""
    hidden, made = set(HEAD_HIDDEN_GEOMS), set()
    for body in [spec.body(BASE_BODY), *spec.body(BASE_BODY).find_all(mujoco.mjtObj.mjOBJ_BODY)]:
        for geom in list(body.geoms):
            if geom.type != mujoco.mjtGeom.mjGEOM_MESH or geom.name in hidden:
                continue
            mesh = spec.mesh(geom.meshname)
            proxy_name = f"{mesh.name}_lowpoly"
            if proxy_name not in made:  # meshes shared by several geoms get one proxy
                verts, faces = _lowpoly(f"{stls}/{mesh.file}", tuple(mesh.scale))
                proxy_mesh = spec.add_mesh(name=proxy_name)
                proxy_mesh.uservert = verts.reshape(-1).tolist()
                proxy_mesh.userface = faces.reshape(-1).tolist()
                proxy_mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL  # open is ok
                made.add(proxy_name)
            proxy = body.add_geom(
                name=f"{geom.name}_lowpoly",
                type=mujoco.mjtGeom.mjGEOM_MESH,
                meshname=proxy_name,
                pos=geom.pos,
                quat=geom.quat,
                group=HEAD_PROXY_GROUP,
                contype=0,
                conaffinity=0,
                mass=0.0,
            )
            proxy.material, proxy.rgba = geom.material, geom.rgba
            geom.group = HEAD_HIDDEN_GROUP
