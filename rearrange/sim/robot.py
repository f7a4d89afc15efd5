"""The Fetch robot, loaded from the installed gymnasium-robotics assets and adapted.

Changes to the gym model (why):
- the mocap body and its weld are removed: we drive the arm by joint targets, not mocap;
- a yaw hinge is added to the base so the base is driven kinematically as (x, y, yaw);
- gravity is compensated and damping removed: every robot joint is set kinematically each
  physics substep, so the robot's own dynamics must not fight the targets;
- robot geoms collide with furniture and objects but not with themselves or the floor
  (contype 2 / conaffinity 0; the world uses conaffinity 3, the floor 1).
"""

from __future__ import annotations

from importlib import resources

import mujoco

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

ROBOT_CONTYPE, ROBOT_CONAFFINITY = 2, 0

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


def _asset_dirs() -> tuple[str, str]:
    root = resources.files("gymnasium_robotics") / "envs" / "assets"
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
    return spec
