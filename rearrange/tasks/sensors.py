"""Observation builders shared by the skill envs and the HAB composite env.

A learned skill must see identical observations in its training env and inside the HAB
executor, so both build them here from (task, sim, SkillTarget). All vectors are in the
robot base frame; relative sensors point from the end-effector (EE) to the thing named.
"""

from __future__ import annotations

import math

import numpy as np
from gymnasium import spaces

from rearrange.sim.arm_scan import ARM_RAY_COUNT
from rearrange.sim.episode_types import Episode
from rearrange.sim.geometry import wrap_angle
from rearrange.skill_spec import SCAN_SENSORS, SkillTarget, Thresholds, skill_def

from .config import TaskConfig
from .grip_rules import held_handle

DEPTH_MAX = 10.0  # metres; the sim clips depth to [0, 10]

# Obstacle range scan ("rays" sensor, obs preset "state_rays"): RAY_COUNT headings evenly over
# 360 degrees in the base frame, ray k at 2*pi*k/RAY_COUNT counter-clockwise from forward,
# each the distance from the base centre to the first wall, furniture footprint or open door
# panel (RearrangeSim.obstacle_ranges), capped at RAY_MAX_RANGE and divided by it (so in
# [0, 1]; the base, radius 0.3 m, never reads below 0.06). Only egocentric geometry: nothing
# from the planner (no navmap, geodesic direction or waypoints).
RAY_COUNT = 64
RAY_MAX_RANGE = 5.0  # metres
RAY_ANGLES = np.arange(RAY_COUNT) * (2.0 * math.pi / RAY_COUNT)
# Under "state_head_rays" the scan is cut to the head camera's horizontal field of view
# (SimConfig.head_fovy, square images: 90 degrees): a ray more than HEAD_RAY_HALF_FOV from
# forward reads 1.0 (free to RAY_MAX_RANGE), as if nothing were there. A nav teacher on it sees
# only what the depth student's camera sees; its LSTM must remember the rest, as the student's.
# Same 64 entries and key as "rays" under "state_rays", so a state_rays nav fine-tunes into it.
RAY_PRESETS = ("state_rays", "state_head_rays")
HEAD_RAY_HALF_FOV = math.radians(45.0)
HEAD_RAY_MASK = np.abs(np.vectorize(wrap_angle)(RAY_ANGLES)) <= HEAD_RAY_HALF_FOV + 1e-9
# Arm clearance scan ("arm_rays" sensor, obs preset "state_rays", `SkillDef.arm_scan`):
# ARM_RAY_COUNT = 18 rays, 6 from each of 3 origins, ray 6 * origin + direction, origins
# (0) the EE (gripper centre), (1) the wrist flex joint, (2) the elbow flex joint,
# directions +x, -x, +y, -y, +z, -z of the robot base frame (x forward, y left, z up)
# (sim/arm_scan.py ARM_RAY_ORIGINS, ARM_RAY_DIRECTIONS). Each the distance to the first wall,
# furniture, fridge wall/shelf, door or drawer geom, i.e. what blocks the arm
# (RearrangeSim.arm_clearance): not the robot, free objects or the floor; capped at
# ARM_RAY_MAX_RANGE and divided by it (so in [0, 1]); an origin inside such a geom reads 0
# on its six rays.
ARM_RAY_MAX_RANGE = 0.5  # metres
# Which state sensors a skill observes is its definition's (`SkillDef.sensors`, DESIGN.md §4
# table), plus "depth" in that preset, and in "state_rays" "rays" for a skill with
# `ray_scan` and "arm_rays" for one with `arm_scan` (task_sensors); for a skill with neither
# that preset is exactly "state". Skills of every preset share one HAB env: the executor
# asks it for each learned skill's own preset (eval/executor.skill_preset), so depth and
# state skills can alternate in one chain. SENSOR_DIMS is the registry
# of the sensors: every name a definition lists must be a key
# (tests/test_skill_registry_coverage.py).
SENSOR_DIMS = {
    "art_joint_to_target": 1,  # the articulation's joint value minus the skill's target
    "joint": 7,
    "is_holding": 1,
    "ee_pos": 3,
    "obj_start_sensor": 3,
    "obj_goal_sensor": 3,
    "goal_from_obj": 3,
    "relative_resting_position": 3,
    "goal_polar": 2,  # [euclidean distance, angle to the goal point in the robot frame]
    "goal_heading": 1,  # wrapped (goal yaw - robot yaw)
    "goal_dir": 4,  # cos, sin of goal_polar's angle; cos, sin of goal_heading
    "marker_rel_pos": 3,
    "rays": RAY_COUNT,  # normalised obstacle ranges, see RAY_ANGLES
    "arm_rays": ARM_RAY_COUNT,  # normalised arm clearances, see ARM_RAY_MAX_RANGE
}


def articulation_target(task: str, name: str, th: Thresholds) -> float:
    if not skill_def(task).articulation.opens:
        return 0.0
    return th.fridge_open if name == "fridge" else th.drawer_open


def skill_target_from_episode(task: str, episode: Episode, th: Thresholds) -> SkillTarget:
    """The target of a skill-training episode (first target / extras), by the skill's
    target kind (`SkillDef.target`)."""
    spec = skill_def(task)
    if spec.target == "nav_goal":
        goal = episode.extras.get("nav_goal")
        if goal is None:
            raise ValueError(f"{task} episode {episode.episode_id} has no extras['nav_goal']")
        return SkillTarget(nav_goal=np.asarray(goal, dtype=np.float64))
    if spec.target == "object":
        if not episode.targets:
            raise ValueError(f"{task} episode {episode.episode_id} has no targets")
        t = episode.targets[0]
        return SkillTarget(obj_index=t.obj_index, goal_pos=np.asarray(t.goal_pos, dtype=float))
    default = "fridge" if spec.articulation.articulation == "fridge" else "drawer_0"
    name = episode.extras.get("articulation") or default
    return SkillTarget(articulation=name, art_target=articulation_target(task, name, th))


def observation_space(cfg: TaskConfig) -> spaces.Dict:
    return task_observation_space(cfg.task, cfg.obs_preset, cfg.depth_size, cfg.base_movement)


def task_sensors(task: str, obs_preset: str, base_movement: bool = True) -> tuple[str, ...]:
    """The vector sensors of `task` under `obs_preset` ("state_rays" and "state_head_rays" add
    "rays" for a skill with `ray_scan`, "arm_rays" for one with `arm_scan`); without
    `base_movement`, less its
    `base_movement_sensors`. The default (with them) is the superset the HAB env observes: a
    learned skill reads the keys its checkpoint was trained with."""
    spec = skill_def(task)
    names = spec.sensors
    if not base_movement:
        names = tuple(n for n in names if n not in spec.base_movement_sensors)
    if obs_preset not in RAY_PRESETS:
        return names
    scans = (("rays", spec.ray_scan), ("arm_rays", spec.arm_scan))
    return names + tuple(name for name, on in scans if on)


def task_observation_space(
    task: str, obs_preset: str, depth_size: int = 128, base_movement: bool = True
) -> spaces.Dict:
    d: dict[str, spaces.Space] = {}
    if obs_preset == "depth":
        shape = (depth_size, depth_size, 1)
        d["depth"] = spaces.Box(0.0, DEPTH_MAX, shape=shape, dtype=np.float32)
    for name in task_sensors(task, obs_preset, base_movement):
        low, high = (0.0, 1.0) if name in ("is_holding", *SCAN_SENSORS) else (-np.inf, np.inf)
        d[name] = spaces.Box(low, high, shape=(SENSOR_DIMS[name],), dtype=np.float32)
    return spaces.Dict(d)


def is_holding(sim, target: SkillTarget) -> bool:
    """Holding an object, or (articulated skills) holding the target's handle."""
    if sim.held_object() is not None:
        return True
    return target.articulation is not None and held_handle(sim) == target.articulation


def _rel(sim, p_world: np.ndarray, ee_base: np.ndarray) -> np.ndarray:
    return np.asarray(sim.to_base_frame(np.asarray(p_world, dtype=float))) - ee_base


def goal_polar(base_pose: np.ndarray, goal_xy: np.ndarray) -> np.ndarray:
    dx, dy = goal_xy[0] - base_pose[0], goal_xy[1] - base_pose[1]
    return np.array([math.hypot(dx, dy), wrap_angle(math.atan2(dy, dx) - base_pose[2])])


def head_rays(ranges: np.ndarray) -> np.ndarray:
    """A normalised range scan (RAY_ANGLES order) cut to the head camera's view: the rays
    outside it read 1.0."""
    return np.where(HEAD_RAY_MASK, ranges, 1.0)


def _sensor(
    name: str, sim, target: SkillTarget, ee_base: np.ndarray, preset: str = "state_rays"
) -> np.ndarray:
    if name == "joint":
        return np.asarray(sim.arm_joint_pos())
    if name == "is_holding":
        return np.array([1.0 if is_holding(sim, target) else 0.0])
    if name == "ee_pos":
        return ee_base
    if name == "obj_start_sensor":
        return _rel(sim, sim.object_pos(target.obj_index), ee_base)
    if name == "obj_goal_sensor":
        return _rel(sim, target.goal_pos, ee_base)
    if name == "goal_from_obj":
        obj_base = np.asarray(sim.to_base_frame(np.asarray(sim.object_pos(target.obj_index))))
        return np.asarray(sim.to_base_frame(np.asarray(target.goal_pos, dtype=float))) - obj_base
    if name == "relative_resting_position":
        return np.asarray(sim.rest_ee_pos_base) - ee_base
    if name == "goal_polar":
        return goal_polar(np.asarray(sim.base_pose()), target.nav_goal[:2])
    if name == "goal_heading":
        return np.array([wrap_angle(float(target.nav_goal[2]) - float(sim.base_pose()[2]))])
    if name == "goal_dir":
        pose = np.asarray(sim.base_pose())
        bearing = goal_polar(pose, target.nav_goal[:2])[1]
        heading = float(target.nav_goal[2]) - float(pose[2])
        return np.array(
            [math.cos(bearing), math.sin(bearing), math.cos(heading), math.sin(heading)]
        )
    if name == "art_joint_to_target":
        q = float(sim.articulation_pos(target.articulation))
        return np.array([q - float(target.art_target)])
    if name == "marker_rel_pos":
        return _rel(sim, sim.handle_pos(target.articulation), ee_base)
    if name == "rays":
        ranges = np.asarray(sim.obstacle_ranges(RAY_ANGLES, RAY_MAX_RANGE)) / RAY_MAX_RANGE
        return head_rays(ranges) if preset == "state_head_rays" else ranges
    if name == "arm_rays":
        return np.asarray(sim.arm_clearance(ARM_RAY_MAX_RANGE)) / ARM_RAY_MAX_RANGE
    raise KeyError(f"unknown sensor {name!r}; known: {', '.join(SENSOR_DIMS)}")


def build_observation(
    task: str, obs_preset: str, sim, target: SkillTarget, base_movement: bool = True
) -> dict:
    """The observation dict of skill `task` for the sim's current state."""
    obs: dict[str, np.ndarray] = {}
    if obs_preset == "depth":
        depth = np.asarray(sim.render_depth(), dtype=np.float32)
        obs["depth"] = np.clip(depth.reshape(depth.shape[0], depth.shape[1], 1), 0.0, DEPTH_MAX)
    ee_base = np.asarray(sim.ee_pos("base"), dtype=np.float64)
    for name in task_sensors(task, obs_preset, base_movement):
        obs[name] = np.asarray(_sensor(name, sim, target, ee_base, obs_preset), dtype=np.float32)
    return obs
