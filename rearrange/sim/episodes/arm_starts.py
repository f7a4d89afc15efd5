"""Where the previous skill left the arm (pick and place starts, docs/DESIGN.md §8.2) and
how a pick left the object in the gripper (place starts), sampled on the bare MuJoCo Fetch.

`arm_start` draws arm joints exactly at rest or with the EE within the skills' 0.15 m rest
tolerance; `pick_end` adds the held object's pose in the gripper frame, touching the
suction geoms from some side. Both return the base-frame discs the spawn clearance check
uses for that arm and object.
"""

from __future__ import annotations

import math

import numpy as np

from rearrange.sim.episodes.config import EpisodeGenConfig
from rearrange.sim.objects import OBJECT_TYPES, ObjectType
from rearrange.sim.placement.clearance import collision_vertices, vertex_discs
from rearrange.sim.robot import CARRY_EE_OFFSET, RESET_JOINT_TOL


class ArmKinematics:
    """The bare MuJoCo Fetch (as `placement.clearance` measures it) for arm forward
    kinematics: base at the origin facing +x, so world coordinates are base-frame ones."""

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
        """`placement.arm_discs` for the arm as it is now (not at rest)."""
        verts = collision_vertices(self.model, self.data, self.geoms)
        return vertex_discs(verts, slice_len, base_radius)


_KINEMATICS: list[ArmKinematics] = []


def arm_kinematics() -> ArmKinematics:
    if not _KINEMATICS:
        _KINEMATICS.append(ArmKinematics())
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


def sample_arm(rng: np.random.Generator, cfg: EpisodeGenConfig, kin: ArmKinematics) -> np.ndarray:
    """Arm joints with the EE at a drawn offset from rest (`_ee_offset_target`, within
    `arm_start_ee_tol`), reached by damped least squares from a random perturbation of the
    rest joints (`arm_start_spread`), which keeps the joints as varied as a policy's."""
    for _ in range(20):
        goal = kin.rest_ee + _ee_offset_target(rng, cfg)
        q = _reach(kin, goal, _perturbed_rest(rng, cfg, kin))
        if np.linalg.norm(kin.ee() - kin.rest_ee) <= cfg.arm_start_ee_tol:
            return q
    return kin.rest.copy()


def _perturbed_rest(rng: np.random.Generator, cfg: EpisodeGenConfig, kin: ArmKinematics):
    spread = np.asarray(cfg.arm_start_spread, dtype=np.float64)
    return np.clip(
        kin.rest + rng.uniform(-spread, spread), kin.arm_range[:, 0], kin.arm_range[:, 1]
    )


def carry_joints() -> np.ndarray:
    """The canonical carry joints: damped least squares from the rest joints to the carry
    pose (rest EE + CARRY_EE_OFFSET), what the HAB arm reset ends at while holding
    (skills/reset_arm.py) and what `carry_arm` starts nav legs round."""
    if not _CARRY_JOINTS:
        kin = arm_kinematics()
        _CARRY_JOINTS.append(
            _reach(kin, kin.rest_ee + np.asarray(CARRY_EE_OFFSET), kin.rest.copy())
        )
        kin.set_arm(kin.rest)
    return _CARRY_JOINTS[0].copy()


_CARRY_JOINTS: list[np.ndarray] = []


def _reach(kin: ArmKinematics, goal: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Damped least squares from joints `q` toward the EE at `goal` (base frame), 12 steps
    at most; `kin` is left at the joints returned."""
    lo, hi = kin.arm_range[:, 0], kin.arm_range[:, 1]
    for _ in range(12):
        kin.set_arm(q)
        err = goal - kin.ee()
        if np.linalg.norm(err) < 0.005:
            break
        jac = kin.jacobian()
        q = np.clip(q + jac.T @ np.linalg.solve(jac @ jac.T + 1e-4 * np.eye(3), err), lo, hi)
    kin.set_arm(q)
    return q


def carry_arm(rng: np.random.Generator, cfg: EpisodeGenConfig, kin: ArmKinematics) -> np.ndarray:
    """Arm joints where the HAB executor's arm reset leaves a held object for the nav leg:
    the canonical `carry_joints`, each joint off by at most RESET_JOINT_TOL (the reset's
    joint phase ends inside it, skills/reset_arm.py). `kin` is left at the joints returned.

    Not a free IK solution round the carry pose: the 7-joint arm reaches the same EE with
    the elbow anywhere, and the head camera sees the arm, so such starts show the depth nav
    arm poses no HAB leg has (up to 64 % of the head view against 21 % at rest). On the
    same 50 val episodes (seed 1) the shipped depth nav succeeded 22 % from those starts and
    60 % from these (benchmarks/RESULTS.md, "The carry pose in view")."""
    tol = RESET_JOINT_TOL
    q = carry_joints() + rng.uniform(-tol, tol, size=kin.rest.shape)
    q = np.clip(q, kin.arm_range[:, 0], kin.arm_range[:, 1])
    kin.set_arm(q)
    return q


def _sample_grasp(
    rng: np.random.Generator, obj: ObjectType, cfg: EpisodeGenConfig, kin: ArmKinematics
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


def arm_start(
    rng: np.random.Generator, cfg: EpisodeGenConfig, carry: bool = False
) -> tuple[list[float], np.ndarray]:
    """Arm joints a previous skill may leave (exactly at rest with `start_rest_prob`, else
    `sample_arm`; with `carry`, `carry_arm`), rounded as stored, and the arm's base-frame
    discs there."""
    kin = arm_kinematics()
    if carry:
        q = carry_arm(rng, cfg, kin)
    elif rng.random() < cfg.start_rest_prob:
        q = kin.rest.copy()
    else:
        q = sample_arm(rng, cfg, kin)
    q = np.round(q, cfg.decimals)
    kin.set_arm(q)
    discs = kin.arm_discs(base_radius=cfg.robot_radius)
    kin.set_arm(kin.rest)
    return [float(v) for v in q], discs


def pick_end(
    rng: np.random.Generator, obj: ObjectType, cfg: EpisodeGenConfig, carry: bool = False
) -> tuple:
    """A place start like a pick's end (with `carry`, a nav leg's start after the arm reset
    to the carry pose): (arm joints, held pose in the gripper frame, the arm's base-frame
    discs, the held object's base-frame disc), rounded as stored."""
    q, discs = arm_start(rng, cfg, carry)
    kin = arm_kinematics()
    kin.set_arm(q)
    pose = np.round(_sample_grasp(rng, obj, cfg, kin), cfg.decimals)
    kin.set_arm(q)
    g_pos, g_rot, _ = kin.gripper_frame()
    centre = g_pos + g_rot @ pose[:3]
    r = float(np.linalg.norm(obj.size))
    disc = (float(centre[0]), float(centre[1]), r, float(centre[2] - r), float(centre[2] + r))
    kin.set_arm(kin.rest)
    return q, [float(v) for v in pose], discs, disc
