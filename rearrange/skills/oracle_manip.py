"""Scripted arm skills: pick, place, open/close fridge and cabinet drawers.

Each is a small phase machine that sets a world-frame EE target every step and reaches it
with damped-least-squares IK through the 7 joint-delta action (≤ 0.0125 rad per step). The
suction gripper grasps on contact, so grasping is "grip on while touching". With base
movement enabled the oracle first drives the base within arm's reach.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rearrange.sim import objects
from rearrange.skills.base import SkillError
from rearrange.skills.ik import ik_arm_action
from rearrange.skills.oracle_common import OracleSkill, rest_ee_world, wrap_angle
from rearrange.skills.termination import articulation_goal, handle_held

REACH_TOL = 0.03  # m: a via-point counts as reached
ARM_REACH = 0.85  # m: horizontal base-centre → target distance the arm reaches comfortably
STAND_OFF = 0.65  # m: where the base stops when it drives closer
PHASE_TIMEOUT = 90  # steps before a stuck phase moves on
ART_DONE_TOL = 0.02  # joint units: close enough to the target (success allows 0.05)
CLOSE_PRESS = 0.02  # joint units pressed past "closed"
DRIVE_TIMEOUT = 60
FRIDGE_STAND_OPEN = (1.1, -0.85)  # m, hinge frame (see OracleArticulation._fridge_stand)
FRIDGE_STAND_CLOSE = (1.0, 0.35)
HANDLE_DIST = 0.75  # m: base-to-handle distance kept while pushing a door or drawer
HANDLE_DIST_PULL = 0.9  # m: ... while pulling it open (the arm pulls poorly when folded)  # steps the base may spend getting within reach
# IK joint costs: a stiff wrist makes the shoulder and elbow do the reaching, which keeps
# the largest joint excursion (and so the travel time at 0.0125 rad/step) small.
JOINT_WEIGHTS = np.array([1.0, 1.0, 1.0, 1.0, 2.0, 4.0, 2.0])


class _ArmOracle(OracleSkill):
    """EE-target helpers shared by the arm oracles."""

    def _reset(self) -> None:
        self._phase_steps = 0
        self._q_pref: np.ndarray | None = None

    def _goto(self, phase: str) -> None:
        self.phase, self._phase_steps = phase, 0

    def _arm_to(self, sim, target: np.ndarray, grip: float, max_step: float = 0.05) -> np.ndarray:
        if self._q_pref is None:
            self._q_pref = np.asarray(sim.arm_joint_pos(), dtype=np.float64).copy()
        arm = ik_arm_action(
            sim,
            target,
            max_step=max_step,
            q_pref=self._q_pref,
            posture_gain=0.2,
            weights=JOINT_WEIGHTS,
        )
        return self.layout.compose(arm=arm, grip=grip, base=np.zeros(2))

    def _near(self, sim, target: np.ndarray, tol: float = REACH_TOL) -> bool:
        return bool(np.linalg.norm(sim.ee_pos("world") - target) < tol)

    def _tick(self) -> int:
        self._phase_steps += 1
        return self._phase_steps

    def _base_toward(
        self,
        sim,
        point_xy: np.ndarray,
        grip: float,
        arm_target: np.ndarray | None = None,
        near: float = 0.0,
        far: float = ARM_REACH,
        stand: float = STAND_OFF,
    ) -> np.ndarray | None:
        """A base action bringing `point_xy` to between `near` and `far` metres in front of
        the robot (aiming at `stand`), or None when it is there."""
        if not self.base_movement or self._tick() > DRIVE_TIMEOUT:
            return None  # (a base blocked by furniture gives up and lets the arm try)
        x, y, yaw = (float(v) for v in sim.base_pose())
        dist = math.hypot(point_xy[0] - x, point_xy[1] - y)
        err = wrap_angle(math.atan2(point_xy[1] - y, point_xy[0] - x) - yaw)
        if near <= dist <= far and abs(err) < math.radians(30):
            return None
        angular = float(np.clip(err / 0.15, -1.0, 1.0))
        linear = 0.0 if abs(err) > 0.5 else float(np.clip((dist - stand) / 0.3, -1.0, 1.0))
        # The arm already heads for its first via-point while the base drives (saves steps).
        action = (
            self._arm_to(sim, arm_target, grip)
            if arm_target is not None
            else (self.layout.compose(arm=np.zeros(7), grip=grip))
        )
        action[self.layout.base] = [linear, angular]
        return action

    def _base_to_pose(
        self, sim, goal: np.ndarray, goal_yaw: float, grip: float, arm_target: np.ndarray | None
    ) -> np.ndarray | None:
        """A base action driving to (x, y) then turning to `goal_yaw`; None once there.

        Drives backwards when the goal is behind (short moves in front of furniture).
        """
        if not self.base_movement or self._tick() > 1.5 * DRIVE_TIMEOUT:
            return None
        x, y, yaw = (float(v) for v in sim.base_pose())
        dx, dy = goal[0] - x, goal[1] - y
        dist = math.hypot(dx, dy)
        if dist > 0.06:
            bearing = math.atan2(dy, dx)
            err = wrap_angle(bearing - yaw)
            sign = 1.0
            if abs(err) > math.pi / 2:  # goal behind: reverse instead of turning around
                err, sign = wrap_angle(err + math.pi), -1.0
            linear = 0.0 if abs(err) > 0.3 else sign * float(np.clip(dist / 0.3, 0.2, 1.0))
            base = [linear, float(np.clip(err / 0.15, -1.0, 1.0))]
        else:
            err = wrap_angle(goal_yaw - yaw)
            if abs(err) < math.radians(5):
                return None
            base = [0.0, float(np.clip(err / 0.15, -1.0, 1.0))]
        action = (
            self._arm_to(sim, arm_target, grip)
            if arm_target is not None
            else (self.layout.compose(arm=np.zeros(7), grip=grip))
        )
        action[self.layout.base] = base
        return action

    def _rest(self, sim, grip: float) -> np.ndarray:
        return self._arm_to(sim, rest_ee_world(sim), grip)


class OraclePick(_ArmOracle):
    name = "pick"

    def _reset(self) -> None:
        super()._reset()
        if self.target.obj_index is None:
            raise SkillError("pick skill needs SkillTarget.obj_index")

    def _top(self, sim) -> np.ndarray:
        i = self.target.obj_index
        half = objects.object_type(sim.episode.objects[i].obj_type).half_height
        return np.asarray(sim.object_pos(i), dtype=np.float64) + np.array([0.0, 0.0, half])

    def _act(self, obs: dict, sim: Any) -> np.ndarray:
        holding = sim.held_object() == self.target.obj_index
        if holding and self.phase in ("start", "above", "descend"):
            self._goto("lift")
            self._lift_to = sim.ee_pos("world") + np.array([0.0, 0.0, 0.12])
        if self.phase == "start":
            above = self._top(sim) + np.array([0.0, 0.0, 0.10])
            drive = self._base_toward(sim, self._top(sim)[:2], -1.0, above)
            if drive is not None:
                return drive
            self._goto("above")
        n = self._tick()
        if self.phase == "above":
            target = self._top(sim) + np.array([0.0, 0.0, 0.10])
            if self._near(sim, target) or n > PHASE_TIMEOUT:
                self._goto("descend")
            return self._arm_to(sim, target, -1.0)
        if self.phase == "descend":
            # Aim slightly into the object: contact is what triggers the suction grasp.
            target = self._top(sim) - np.array([0.0, 0.0, 0.01 + 0.0005 * n])
            # Creep near contact: the grasp fires at ≤ 2 cm, before the fingers press into
            # the object (a kinematic finger inside a welded object shoves it out of the hold).
            close = np.linalg.norm(sim.ee_pos("world") - self._top(sim)) < 0.07
            if n > 2 * PHASE_TIMEOUT:
                self._goto("above")
            return self._arm_to(
                sim, target, 1.0 if close else -1.0, max_step=0.006 if close else 0.02
            )
        if self.phase == "lift":
            if self._near(sim, self._lift_to, 0.04) or n > PHASE_TIMEOUT // 2:
                self._goto("rest")
            return self._arm_to(sim, self._lift_to, 1.0)
        return self._rest(sim, 1.0)


class OraclePlace(_ArmOracle):
    name = "place"

    def _reset(self) -> None:
        super()._reset()
        if self.target.obj_index is None or self.target.goal_pos is None:
            raise SkillError("place skill needs SkillTarget.obj_index and goal_pos")
        self._released_at = 0

    def _ee_for_object_at(self, sim, obj_target: np.ndarray) -> np.ndarray:
        """EE position that puts the held object's centre at `obj_target` (current grasp)."""
        offset = np.asarray(sim.object_pos(self.target.obj_index)) - sim.ee_pos("world")
        return obj_target - offset

    def _act(self, obs: dict, sim: Any) -> np.ndarray:
        goal = np.asarray(self.target.goal_pos, dtype=np.float64)
        holding = sim.held_object() == self.target.obj_index
        if self.phase == "start":
            drive = self._base_toward(sim, goal[:2], 1.0)
            if drive is not None:
                return drive
            self._goto("above")
        if not holding and self.phase in ("above", "lower"):
            self._goto("release")  # dropped or let go: never grasp again (grip masking)
        n = self._tick()
        obj = np.asarray(sim.object_pos(self.target.obj_index), dtype=np.float64)
        if self.phase == "above":
            want = goal + np.array([0.0, 0.0, 0.10])
            if np.linalg.norm(obj - want) < 0.04 or n > PHASE_TIMEOUT:
                self._goto("lower")
            return self._arm_to(sim, self._ee_for_object_at(sim, want), 1.0)
        if self.phase == "lower":
            want = goal + np.array([0.0, 0.0, 0.015])
            if np.linalg.norm(obj - want) < 0.02 or n > PHASE_TIMEOUT:
                self._goto("release")
            return self._arm_to(sim, self._ee_for_object_at(sim, want), 1.0, max_step=0.02)
        if self.phase == "release":
            if n > 3:
                self._goto("retreat")
                self._up = sim.ee_pos("world") + np.array([0.0, 0.0, 0.10])
            return self.layout.compose(arm=np.zeros(7), grip=-1.0, base=np.zeros(2))
        if self.phase == "retreat":
            if self._near(sim, self._up, 0.04) or n > PHASE_TIMEOUT // 2:
                self._goto("rest")
            return self._arm_to(sim, self._up, -1.0)
        return self._rest(sim, -1.0)


class OracleArticulation(_ArmOracle):
    """Open or close the fridge door or a drawer: grasp the handle, move it along its joint."""

    def __init__(self, name: str, base_movement: bool = False, step_limit: int | None = None):
        self.name = name
        super().__init__(base_movement=base_movement, step_limit=step_limit)

    def _reset(self) -> None:
        super()._reset()
        self._art: Any = None
        self._q_trail: list[float] = []

    def _setup(self, sim) -> None:
        art_name, self._goal = articulation_goal(sim, self.name, self.target)
        self._art = next(a for a in sim.layout.articulations if a.name == art_name)
        yaw = sim.layout.furniture_named(self._art.furniture).front_yaw
        self._front = np.array([math.cos(yaw), math.sin(yaw), 0.0])
        if self._art.kind == "hinge":
            self._hinge = _fridge_hinge(np.asarray(self._art.handle_closed_pos), yaw)

    def _handle(self, sim) -> np.ndarray:
        return np.asarray(sim.handle_pos(self._art.name), dtype=np.float64)

    def _holding(self, sim) -> bool:
        return handle_held(sim)

    def _act(self, obs: dict, sim: Any) -> np.ndarray:
        if self._art is None:
            self._setup(sim)
        err = self._goal - float(sim.articulation_pos(self._art.name))
        done = abs(err) < ART_DONE_TOL
        if self._goal == self._art.closed:
            # Closing: press slightly past the closed stop so the joint does not rebound.
            err -= CLOSE_PRESS * (1.0 if self._art.open > self._art.closed else -1.0)
        if self.phase == "start":
            if done:
                self._goto("rest")
            else:
                drive = self._drive_to_stand(sim)
                if drive is not None:
                    return drive
                self._goto("approach")
        n = self._tick()
        handle = self._handle(sim)
        if self.phase == "approach":
            target = handle + 0.10 * self._approach_dir(sim)
            if self._near(sim, target) or n > PHASE_TIMEOUT:
                self._goto("touch")
            return self._arm_to(sim, target, -1.0)
        if self.phase == "touch":
            if done:  # pushing the handle already closed it
                self._goto("release")
            elif self._holding(sim):
                self._goto("move")
                # Hold the gripper a little off the face: pressing into the drawer front or
                # door pushes against the very motion the weld is pulling for.
                pulling = self._goal > self._art.closed
                back_off = 0.02 * self._approach_dir(sim) if pulling else 0.0
                self._grasp_offset = sim.ee_pos("world") - handle + back_off
            elif n > PHASE_TIMEOUT:
                self._goto("approach")
            target = handle - 0.02 * self._approach_dir(sim)
            close = np.linalg.norm(sim.ee_pos("world") - handle) < 0.06
            return self._arm_to(sim, target, 1.0 if close else -1.0, max_step=0.02)
        if self.phase == "move":
            self._q_trail.append(float(sim.articulation_pos(self._art.name)))
            stalled = (
                len(self._q_trail) > 10 and abs(self._q_trail[-1] - self._q_trail[-11]) < 0.005
            )
            # A joint that stopped moving inside the success band is as good as it gets.
            if (
                done
                or (stalled and abs(err) < 0.045)
                or not self._holding(sim)
                or n > 3 * PHASE_TIMEOUT
            ):
                self._goto("release")
            # Track the handle, not the EE: the soft weld lets the handle lag the gripper.
            if self.base_movement:
                return self._follow_handle(sim, handle, err)
            step = self._handle_step(sim, handle, err)
            return self._arm_to(sim, handle + self._grasp_offset + step, 1.0, max_step=0.04)
        if self.phase == "release":
            if n > 3:
                self._goto("retreat")
                # Straight up first (backing out drags the handle along by friction), so
                # the arm does not sweep the door/drawer on its way home.
                self._up = sim.ee_pos("world") + np.array([0.0, 0.0, 0.12])
            return self.layout.compose(arm=np.zeros(7), grip=-1.0, base=np.zeros(2))
        if self.phase == "retreat":
            if self._near(sim, self._up, 0.04) or n > PHASE_TIMEOUT // 2:
                self._goto("rest")
            return self._arm_to(sim, self._up, -1.0)
        return self._rest(sim, -1.0)

    def _follow_handle(self, sim, handle: np.ndarray, err: float) -> np.ndarray:
        """Base movement while moving a door/drawer: the arm moves the handle along its
        joint, the base keeps the handle at a comfortable distance in front (the arm alone
        runs out of travel pulling toward the body or pushing far away)."""
        step = self._handle_step(sim, handle, err)
        action = self._arm_to(sim, handle + self._grasp_offset + step, 1.0, max_step=0.04)
        x, y, yaw = (float(v) for v in sim.base_pose())
        dist = math.hypot(handle[0] - x, handle[1] - y)
        heading_err = wrap_angle(math.atan2(handle[1] - y, handle[0] - x) - yaw)
        keep = HANDLE_DIST_PULL if self._goal > self._art.closed else HANDLE_DIST
        linear = float(np.clip((dist - keep) / 0.2, -0.7, 0.7)) * math.cos(heading_err)
        # No turning: a turning base swings the gripper sideways faster than IK corrects.
        action[self.layout.base] = [linear, 0.0]
        return action

    def _drive_to_stand(self, sim) -> np.ndarray | None:
        """Base action toward where the robot stands to work the handle (None: there)."""
        handle = self._handle(sim)
        via = handle + 0.10 * self._approach_dir(sim)
        if self._art.kind == "hinge":
            stand = self._fridge_stand()
            yaw = math.atan2(handle[1] - stand[1], handle[0] - stand[0])
            return self._base_to_pose(sim, stand, yaw, -1.0, via)
        return self._base_toward(sim, handle[:2], -1.0, via, near=0.6, far=0.95, stand=0.8)

    def _fridge_stand(self) -> np.ndarray:
        """Where to stand for the fridge door, in the hinge frame (x out of the fridge, y
        along the closed door toward the hinge): opening, in front of the handle side, clear
        of the swinging door; closing, on the door's outer side to push/pull it shut."""
        lx, ly = FRIDGE_STAND_OPEN if self._goal > self._art.closed else FRIDGE_STAND_CLOSE
        left = np.array([-self._front[1], self._front[0], 0.0])
        return self._hinge + lx * self._front + ly * left

    def _approach_dir(self, sim) -> np.ndarray:
        """Outward normal of the handle's face (the door rotates it with its angle)."""
        if self._art.kind == "hinge":
            theta = float(sim.articulation_pos(self._art.name))
            return _rot_z(self._front, theta)
        return self._front

    def _handle_step(self, sim, handle: np.ndarray, err: float) -> np.ndarray:
        """Where the handle should move this step to drive the joint toward its goal."""
        # Proportional near the goal so the joint arrives slowly and does not coast on.
        if self._art.kind == "slide":
            return self._front * float(np.clip(0.5 * err, -0.03, 0.03))
        radius = handle - self._hinge
        radius[2] = 0.0
        dtheta = float(np.clip(0.5 * err, -0.035, 0.035))  # the soft hold lags a fast door
        return _rot_z(radius, dtheta) - radius


def _rot_z(v: np.ndarray, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]])


def _fridge_hinge(handle_closed: np.ndarray, front_yaw: float) -> np.ndarray:
    """World position of the fridge door hinge from the closed handle position.

    In the door frame the handle sits at (door thickness + handle offset, −(door width −
    inset)) from the hinge (`rearrange.sim.apartment` dimensions).
    """
    from rearrange.sim import apartment as A

    local = np.array(
        [
            A.FRIDGE_DOOR_THICKNESS + A.FRIDGE_HANDLE_OUT,
            -2 * A.FRIDGE_HALF[1] + A.FRIDGE_HANDLE_INSET,
            0.0,
        ]
    )
    hinge = handle_closed - _rot_z(local, front_yaw)
    hinge[2] = handle_closed[2]
    return hinge
