"""Scripted open/close skills for the fridge door and the cabinet drawers.

A phase machine acting only through its task's action vector: (drive to the work pose,
with base movement) -> pre-grasp: the gripper stands off the handle along its grasp axis
-> touch: straight in along that axis until the suction holds the handle -> move the
handle along its joint path (a straight line for a drawer, the door's arc about its hinge)
-> release -> back off -> the EE back near rest. Every arm step is
`oracle_motion.ArmMotion`'s collision-constrained QP: the world blocks the arm at walls,
furniture, doors and drawers (issue 27) and each contact costs force, so no link comes
closer than 2.5 cm to any of them (the handle bar excepted while touching it; 2 cm to the
part being moved, which the world counts too, all but its handle).

Grasp axes (why): turning the gripper is slow (every joint moves <= 0.72 deg a step), so
each grasp asks for a range of headings and pitches and the gripper turns only into it
(`oracle_motion.box_axis`):

- Drawers: heading into the handle along the front's normal, pitched down 5-75 deg. The
  handle sits 10-14 cm below the cabinet's top slab; a gripper pitched straight down (as
  plain position IK left it) put the wrist, 15 cm behind the fingertips, into the slab's
  edge. Pitched at most ~75 deg the gripper body leans out in front of the slab. A drawer
  already out (to close it) may be grasped from almost any direction.
- Fridge: heading PHI from the door's inward normal toward the hinge, PHI = door angle +
  10 deg, at most 80 deg: nearly head-on on the closed door, then a side grasp from past
  the free edge as it opens, so the gripper keeps its heading in the world while the door
  turns under it (the handle weld has torque scale 0) and never reaches behind the panel.

Coming back (why): an opened fridge door stands with its free edge ~0.4 m in front of the
robot and the handle on its far face, so the arm is round the edge when it lets go. It
backs out past the edge, crosses to the door's inner side and heads for rest there; with
base movement the base first backs off until the gripper is past the edge (`_unwrap`), as
the arm alone (bound by its shoulder pan) needs 210-290 steps for the whole task, beyond
the fixed-base task's 200. A drawer is let go once slowed down, and the gripper backs up
and out of its way: a drawer released at speed coasted on into the fingers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rearrange.sim import apartment as A
from rearrange.sim import robot as R
from rearrange.sim.geometry import rot_z
from rearrange.sim.placement import articulation_work_pose, fridge_hinge
from rearrange.skills.oracle_common import OracleSkill, rest_ee_world
from rearrange.skills.oracle_motion import (
    FINGERTIP,
    REST_BALL,
    ArmMotion,
    Settle,
    box_axis,
    clearance_at,
    gripper_axis,
    toward_ball,
)
from rearrange.skills.termination import articulation_goal, handle_held

PHASE_TIMEOUT = 90  # steps before a stuck phase moves on
DRIVE_TIMEOUT = 120  # steps the base may spend reaching the work pose
DRIVE_STALL_STEPS = 40  # a base that moved < 2 cm (and turned < 3 deg) this long stops
WORK_TURN = math.radians(21)  # the work heading at most this far off facing the handle
# Joint units from the goal at which the handle is let go: success needs 0.05, and the
# joint friction (furniture_parts.DOOR_FRICTION) keeps a released part where it is, so
# the last few centimetres of creeping onto the exact goal were wasted steps (a part
# released while moving toward the goal only coasts closer).
DONE_TOL = {"hinge": 0.04, "slide": 0.035}
CLOSE_PRESS = 0.015  # joint units pressed past "closed" (the joint stop holds it)
MAX_DQ = {"hinge": 0.03, "slide": 0.03}  # joint change asked per step (rad, m)
SLOW = 0.3  # ... and at most this fraction of the way left (the part arrives slowly and
# hardly coasts on into the gripper after the release)
STALL_OK = 0.04  # joint units from the goal at which a stalled part is let go
HANDLE_HALF = 0.012  # m, half the handle bar's thickness (furniture_parts)
TOUCH_GAP = 0.010  # m the fingertips stop short of the bar (suction reaches 2 cm)
PRE_GRASP = 0.12  # m the EE stands off the grasp point along the axis before going in
PRE_GRASP_TOL = 0.03  # m: the pre-grasp point counts as reached ...
AXIS_TOL = math.radians(4)  # ... with the gripper axis this close to its asked range
# Grasp axis (module doc): its heading within a tolerance of the grasp heading, pitched
# down within a range. Fridge handle:
YAW_TOL = math.radians(15)
PITCH = (math.radians(5), math.radians(60))
# Drawer handle under the cabinet's top slab: up to 75 deg down the gripper body still
# leans out in front of the slab; a drawer out SLIDE_OUT or more has its handle clear of
# the slab, where almost any direction will do (a steep one is what the arm reaches
# quickly so close to the robot).
SLIDE_YAW_TOL = math.radians(30)
SLIDE_PITCH = (math.radians(5), math.radians(75))
SLIDE_OUT = 0.15
OUT_YAW_TOL = math.radians(60)
OUT_PITCH = (math.radians(5), math.radians(88))
# Fridge: the axis heading is PHI from the door's inward normal toward the hinge, PHI =
# clip(door angle + PHI[0], PHI[1], PHI[2]): 10 deg (nearly head-on) with the door shut,
# then turning with the door's angle, so that the gripper keeps its heading in the world
# while the door turns under it, until it lies along the door (80 deg, a side grasp).
# Between 0 and 90 deg the gripper and wrist stay on the handle's side of the panel.
FRIDGE_PHI = (math.radians(10), math.radians(10), math.radians(80))
# m backed off after letting go: a drawer's handle, or (fridge) along the gripper axis,
# which lies along the door, out past its free edge, where the arm came in
RETREAT = {"slide": 0.06, "hinge": 0.14}
MOVE_AXIS_WEIGHT = 0.1  # the axis asked lightly while the part moves (speed)
RETREAT_STEPS = 15  # steps a back-off waypoint may take
# Fridge (`_release`): the EE goes FRIDGE_BEYOND past the door's free edge, then
# FRIDGE_INWARD to the panel's inner side, where the robot and the resting arm are.
FRIDGE_BEYOND = 0.12
FRIDGE_INWARD = 0.15
FRIDGE_DOOR_WIDTH = 2 * A.FRIDGE_HALF[1]
UNWRAP_STEPS = 15  # steps the base may back off to free the arm (`_unwrap`)
FRIDGE_REST_OFF = 0.08  # m the EE returns off its resting point, away from the open door
HANDLE_SAFE = 0.004  # m kept from the handle bar while touching it
PART_SAFE = 0.012  # m kept from the rest of the target door or drawer while touching
MOVE_PART_SAFE = 0.02  # m kept from the door or drawer while moving it (it lags the hold)


class OracleArticulation(OracleSkill):
    """Open or close the fridge door or a drawer through its handle."""

    def __init__(self, name: str, base_movement: bool = False, step_limit: int | None = None):
        self.name = name
        super().__init__(base_movement=base_movement, step_limit=step_limit)

    # ------------------------------------------------------------------ plumbing
    def _reset(self) -> None:
        self._art: Any = None
        self._work: tuple[float, float, float] | None = None
        self._follower: Any = None
        self._base_trail: list[np.ndarray] = []
        self._n = 0
        self._trail: list[float] = []  # recent joint values while moving (stall check)
        self._motion = ArmMotion()
        self._waypoints: list[np.ndarray] = []
        self._settle = Settle(0.03, math.pi, patience=5)

    def _goto(self, phase: str) -> None:
        self.phase, self._n = phase, 0
        self._settle.reset()

    def _compose(self, arm: np.ndarray, grip: float) -> np.ndarray:
        base = None if self.layout.base is None else np.zeros(2)
        return self.layout.compose(arm=arm, grip=grip, base=base)

    def _setup(self, sim) -> None:
        name, self._goal = articulation_goal(sim, self.name, self.target)
        self._art = sim.layout.articulation(name)
        self._yaw = sim.layout.furniture_named(self._art.furniture).front_yaw
        self._front = np.array([math.cos(self._yaw), math.sin(self._yaw), 0.0])
        self._left = np.array([-math.sin(self._yaw), math.cos(self._yaw), 0.0])
        self._closed_handle = np.asarray(self._art.handle_closed_pos, dtype=np.float64)
        self._opening = self._goal != self._art.closed
        sign = 1.0 if self._art.open > self._art.closed else -1.0
        # Closing presses a little past the stop so the joint rests against it.
        self._aim = self._goal if self._opening else self._goal - sign * CLOSE_PRESS
        if self._art.kind == "hinge":
            self._hinge = fridge_hinge(self._closed_handle, self._yaw)
        idx = sim.idx
        self._handle_geom = int(idx.art_handle_geom[self._art.name])
        part = {int(g) for g in np.asarray(idx.art_geoms[self._art.name]).ravel()}
        self._touch_safe = {g: PART_SAFE for g in part}
        self._touch_safe[self._handle_geom] = HANDLE_SAFE
        self._move_safe = {g: MOVE_PART_SAFE for g in part}

    # ------------------------------------------------------------------ geometry
    def _q(self, sim) -> float:
        return float(sim.articulation_pos(self._art.name))

    def _handle_at(self, q: float) -> np.ndarray:
        """World handle position at joint value q (exact: the handle is rigid on the part)."""
        if self._art.kind == "slide":
            return self._closed_handle + self._front * (q - self._art.closed)
        return self._hinge + rot_z(self._closed_handle - self._hinge, q - self._art.closed)

    def _axis_yaw(self, q: float) -> float:
        """Heading of the grasp axis at joint value q (module doc): into a drawer handle
        along the front's normal; for the fridge PHI(q) from the door's inward normal
        toward its hinge."""
        inward = -self._front
        if self._art.kind == "slide":
            return math.atan2(inward[1], inward[0])
        turn = q - self._art.closed
        phi = float(np.clip(turn + FRIDGE_PHI[0], FRIDGE_PHI[1], FRIDGE_PHI[2]))
        inward, along = rot_z(inward, turn), rot_z(self._left, turn)
        a = math.cos(phi) * inward + math.sin(phi) * along
        return math.atan2(a[1], a[0])

    def _axis_want(self, sim, q: float) -> np.ndarray:
        """The axis asked for: the one nearest the gripper's own whose heading is within
        YAW_TOL of `_axis_yaw` and whose pitch is in PITCH (turning the wrist is slow;
        any of them keeps the gripper clear)."""
        if self._art.kind == "slide":
            out = q - self._art.closed > SLIDE_OUT  # the handle is clear of the top slab
            yaw_tol, pitch = (OUT_YAW_TOL, OUT_PITCH) if out else (SLIDE_YAW_TOL, SLIDE_PITCH)
            return box_axis(gripper_axis(sim), self._axis_yaw(q), yaw_tol, pitch)
        return box_axis(gripper_axis(sim), self._axis_yaw(q), YAW_TOL, PITCH)

    def _grasp_point(self, sim, q: float) -> np.ndarray:
        """EE position with the fingertips TOUCH_GAP short of the bar, along the axis."""
        axis = self._axis_want(sim, q)
        return self._handle_at(q) - axis * (HANDLE_HALF + TOUCH_GAP + FINGERTIP)

    # ------------------------------------------------------------------ phases
    def _act(self, obs: dict, sim: Any) -> np.ndarray:
        if self._art is None:
            self._setup(sim)
        self._n += 1
        q = self._q(sim)
        if self.phase == "start":
            if abs(q - self._goal) < DONE_TOL[self._art.kind]:
                self._goto("rest")
            else:
                drive = self._drive(sim)
                if drive is not None:
                    return drive
                self._goto("approach")
        if self.phase == "approach":
            axis = self._axis_want(sim, q)
            target = self._grasp_point(sim, q) - PRE_GRASP * axis
            aligned = float(gripper_axis(sim) @ axis) > math.cos(AXIS_TOL)
            if (self._near(sim, target, PRE_GRASP_TOL) and aligned) or self._n > PHASE_TIMEOUT:
                self._goto("touch")
            else:
                return self._compose(self._motion.action(sim, target, axis), -1.0)
        if self.phase == "touch":
            if handle_held(sim):
                self._goto("move")
                self._grasp_q = q
                return self._move(sim, q)
            if self._n > PHASE_TIMEOUT:
                self._goto("approach")
            axis = self._axis_want(sim, q)
            target = self._grasp_point(sim, q)
            close = np.linalg.norm(sim.ee_pos("world") - target) < 0.05
            arm = self._motion.action(sim, target, axis, max_lin=0.012, safe_for=self._touch_safe)
            return self._compose(arm, 1.0 if close else -1.0)
        if self.phase == "move":
            return self._move(sim, q)
        if self.phase == "retreat":
            return self._retreat(sim)
        if self.phase == "unwrap":
            return self._unwrap(sim)
        return self._rest(sim)

    def _near(self, sim, target: np.ndarray, tol: float) -> bool:
        return bool(np.linalg.norm(sim.ee_pos("world") - target) < tol)

    def _release(self, sim) -> np.ndarray:
        """Let go (this step), then back off out of the handle: along the gripper axis
        for the fridge; up and out for a drawer, which may coast on toward the gripper
        after the hold ends."""
        self._goto("retreat")
        back = -gripper_axis(sim)
        back[2] = 0.0
        norm = float(np.linalg.norm(back))
        back = back / norm if norm > 1e-6 else self._front
        if self._art.kind == "slide":
            back = self._front + np.array([0.0, 0.0, 1.0])
            back /= np.linalg.norm(back)
        ee = sim.ee_pos("world")
        self._waypoints = [ee + RETREAT[self._art.kind] * back]
        if self._art.kind == "hinge" and self._opening:
            # round the door's free edge to its inner side, where the robot stands
            turn = self._q(sim) - self._art.closed
            along, out = rot_z(-self._left, turn), rot_z(self._front, turn)
            edge = self._hinge + along * FRIDGE_DOOR_WIDTH
            edge[2] = ee[2]
            self._door_frame = (edge, along, out)
            self._waypoints = [
                edge + FRIDGE_BEYOND * along + 0.05 * out,
                edge + FRIDGE_BEYOND * along - FRIDGE_INWARD * out,
            ]
            if self.base_movement:  # back the base off until the gripper is past the edge
                self._goto("unwrap")
        return self._compose(np.zeros(7, dtype=np.float32), -1.0)

    def _unwrap(self, sim) -> np.ndarray:
        """With base movement, after opening the fridge: reverse until the gripper (on the
        door's outer face, the arm round its free edge) is FRIDGE_BEYOND past the edge,
        then take the arm to the inner side and to rest. The base backs off at 6.7 cm a
        step where the arm, bound by its shoulder pan (0.72 deg a step), crawled round the
        edge for 60-120 steps."""
        from rearrange.skills.oracle_nav import guard_base

        edge, along, out = self._door_frame
        ee = sim.ee_pos("world")
        past = float((ee - edge) @ along)
        if past > FRIDGE_BEYOND or self._n > UNWRAP_STEPS:
            self._goto("retreat")
            self._waypoints = [ee - FRIDGE_INWARD * out]
            return self._retreat(sim)
        base = guard_base(sim, np.array([-0.6, 0.0]))
        return self.layout.compose(arm=np.zeros(7), grip=-1.0, base=base)

    def _retreat(self, sim) -> np.ndarray:
        target = self._waypoints[0]
        if self._settle(sim, target) or self._n > RETREAT_STEPS:
            self._waypoints.pop(0)
            self._n = 0
            self._settle.reset()
            if not self._waypoints:
                self._goto("rest")
                return self._rest(sim)
            target = self._waypoints[0]
        arm = self._motion.action(sim, target, None, max_lin=0.04)
        return self._compose(arm, -1.0)

    def _rest(self, sim) -> np.ndarray:
        """The EE back near its resting point (`toward_ball`: what the task's success asks
        for), under the clearance constraints, the joints drawn toward the resting pose."""
        centre = rest_ee_world(sim)
        if self._art.kind == "hinge":
            # the open door's inner face passes ~6 cm from the resting EE: aim off it
            turn = self._q(sim) - self._art.closed
            centre = centre - FRIDGE_REST_OFF * rot_z(self._front, turn)
        target = toward_ball(sim.ee_pos("world"), centre, REST_BALL - 0.5 * FRIDGE_REST_OFF)
        arm = self._motion.action(sim, target, q_pref=np.asarray(R.REST_ARM_QPOS))
        return self._compose(arm, -1.0)

    def _move(self, sim, q: float) -> np.ndarray:
        err = self._aim - q
        self._trail = (self._trail + [q])[-8:]
        # A part stopped inside the success band (0.05) is as good as it gets: let go.
        stalled = len(self._trail) == 8 and abs(self._trail[0] - q) < 0.002
        settled = stalled and abs(q - self._goal) < STALL_OK
        done = abs(q - self._goal) < DONE_TOL[self._art.kind]
        if not handle_held(sim) or done or settled or self._n > 3 * PHASE_TIMEOUT:
            return self._release(sim)
        # Slow down near the goal so the part arrives without overshoot.
        step = float(np.clip(SLOW * err, -MAX_DQ[self._art.kind], MAX_DQ[self._art.kind]))
        q_next = q + step
        target = self._handle_at(q_next) + self._lead(sim)
        # The gripper axis is asked lightly (within its range, `_axis_want`): tracking the
        # handle is what bounds the speed. The part itself stays an obstacle (but its
        # handle): the world counts it, and the constraints know it moves with the hold.
        arm = self._motion.action(
            sim, target, self._axis_want(sim, q_next), max_lin=0.06,
            safe_for=self._move_safe, axis_weight=MOVE_AXIS_WEIGHT,
        )  # fmt: skip
        return self._compose(arm, 1.0)

    def _lead(self, sim) -> np.ndarray:
        """EE minus the point the suction weld pulls the handle to (it turns with the
        gripper): the EE target that brings that point onto the handle's path."""
        want = sim.hold_point()
        if want is None:
            return np.zeros(3)
        return sim.ee_pos("world") - want

    # ------------------------------------------------------------------ base
    def _drive(self, sim) -> np.ndarray | None:
        """Base action toward the work pose along the NavMap's shortest path (None: there,
        stalled, or no base movement). A straight drive ran into the open fridge door or
        the furniture beside it and spent its whole budget there."""
        from rearrange.skills.oracle_nav import LONG_TURN_MAX, FollowerConfig, PathFollower

        if not self.base_movement or self._n > DRIVE_TIMEOUT:
            return None
        if self._work is None:  # once per episode: it searches round blocked spots
            x, y, yaw = articulation_work_pose(sim.layout, self._art, footprints=sim.footprints)
            # facing the handle where it is now, turned toward the work heading at most
            # WORK_TURN, less where the resting arm would touch the scene: the close
            # spawns' rule (`RobotPlacement.spawn_work`); facing the middle of the fridge
            # door's arc, the open handle was hard to reach round
            handle = sim.handle_pos(self._art.name)
            to_handle = math.atan2(handle[1] - y, handle[0] - x)
            off = math.remainder(yaw - to_handle, 2 * math.pi)
            turn = float(np.clip(off, -WORK_TURN, WORK_TURN))
            rest = np.asarray(R.REST_ARM_QPOS)
            for f in (1.0, 0.5, 0.0):
                heading = to_handle + f * turn
                if clearance_at(sim, base=(x, y, heading), arm=rest, whole_robot=False) > 0.04:
                    break
            self._work = (x, y, heading)
            cfg = FollowerConfig(pos_tol=0.05, yaw_tol=math.radians(4), long_turn_max=LONG_TURN_MAX)
            self._follower = PathFollower(config=cfg)
            self._follower.ignore_parts = (self._art.name,)
            self._follower.reset(self._work)
        # Blocked for good (the open door stands in the path): work from where it is.
        pose = np.asarray(sim.base_pose(), dtype=np.float64)
        self._base_trail = (self._base_trail + [pose])[-DRIVE_STALL_STEPS:]
        if len(self._base_trail) == DRIVE_STALL_STEPS:
            old = self._base_trail[0]
            turned = abs(math.remainder(float(pose[2] - old[2]), 2 * math.pi))
            if np.linalg.norm(old[:2] - pose[:2]) < 0.02 and turned < math.radians(3):
                return None
        base = self._follower.command(sim)
        return None if base is None else self._with_base(sim, base)

    def _with_base(self, sim, base) -> np.ndarray:
        arm = self._motion.action(sim, rest_ee_world(sim))
        return self.layout.compose(arm=arm, grip=-1.0, base=base)
