"""Scripted open/close skills for the fridge door and the cabinet drawers.

A phase machine acting only through its task's action vector: (drive to the work pose,
with base movement) → approach a point in front of the handle → touch it with suction on
→ move the handle along its joint path (a straight line for a drawer, the door's arc about
its hinge for the fridge) → release → back off → return the arm to rest. Each step the
EE target is where the handle should be a little further along its path, plus the grasp
offset (rotated with the door), reached by damped-least-squares IK.

Why it works from a fixed base: the episode generator spawns fridge tasks at the fridge
work pose (`placement.articulation_work_pose`), from which the whole handle arc is in
reach, and the sim lets the arm pass through the door it holds (the door moves only through
its handle). Drawers are spawned facing the handle, within reach of its whole travel.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rearrange.sim import robot as R
from rearrange.sim.geometry import rot_z
from rearrange.sim.placement import articulation_work_pose, fridge_hinge
from rearrange.skills.ik import dls_joint_step, joint_delta_action, nullspace_step
from rearrange.skills.oracle_common import OracleSkill, rest_ee_world
from rearrange.skills.termination import articulation_goal, handle_held

REACH_TOL = 0.04  # m: the pre-grasp point counts as reached
PHASE_TIMEOUT = 90  # steps before a stuck phase moves on
DRIVE_TIMEOUT = 120  # steps the base may spend reaching the work pose
DRIVE_STALL_STEPS = 20  # a base that moved < 2 cm over this many steps stops driving
# Joint units from the goal at which the handle is let go: success needs 0.05, and the
# joint friction (furniture_parts.DOOR_FRICTION) keeps a released part where it is, so
# the last few centimetres of creeping onto the exact goal were wasted steps (a part
# released while moving toward the goal only coasts closer).
DONE_TOL = {"hinge": 0.04, "slide": 0.035}
CLOSE_PRESS = 0.015  # joint units pressed past "closed" (the joint stop holds it)
MAX_DQ = {"hinge": 0.03, "slide": 0.03}  # joint change asked per step (rad, m)
STALL_OK = 0.04  # joint units from the goal at which a stalled part is let go
PRE_GRASP = 0.06  # m in front of the handle the gripper approaches before touching it
JOINT_WEIGHTS = np.array([1.0, 1.0, 1.0, 1.0, 2.0, 4.0, 2.0])  # stiff wrist (see ik.py)


def limit_aware_ik(
    sim, target: np.ndarray, max_step: float, q_pref: np.ndarray, margin: float = 0.03
) -> np.ndarray:
    """DLS IK arm action (as `ik.ik_arm_action`) that locks joints at a limit which the
    step would push further: the sim clips them, so plain DLS wasted its motion on them
    and stalled (the shoulder lift saturates reaching the 1.1 m fridge handle)."""
    err = np.asarray(target, dtype=np.float64) - sim.ee_pos("world")
    norm = float(np.linalg.norm(err))
    far = norm > max_step
    if far:
        err = err * (max_step / norm)
    jac = sim.arm_jacobian()
    q = np.asarray(sim.arm_joint_pos(), dtype=np.float64)
    limits = sim.arm_joint_range()
    lo, hi = limits[:, 0], limits[:, 1]
    weights = JOINT_WEIGHTS.copy()
    for _ in range(3):
        dq = dls_joint_step(jac, err, 0.05, weights)
        dq = dq + nullspace_step(jac * (weights < 1e5), q, q_pref, 0.2) * (weights < 1e5)
        stuck = ((q - lo < margin) & (dq < 0)) | ((hi - q < margin) & (dq > 0))
        stuck &= weights < 1e5
        if not stuck.any():
            break
        weights[stuck] = 1e6
    return joint_delta_action(dq, full_speed=far)


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
        self._q_pref: np.ndarray | None = None
        self._trail: list[float] = []  # recent joint values while moving (stall check)

    def _goto(self, phase: str) -> None:
        self.phase, self._n = phase, 0

    def _arm_to(self, sim, target: np.ndarray, grip: float, max_step: float = 0.05) -> np.ndarray:
        if self._q_pref is None:
            self._q_pref = np.asarray(sim.arm_joint_pos(), dtype=np.float64).copy()
        arm = limit_aware_ik(sim, target, max_step, self._q_pref)
        return self.layout.compose(arm=arm, grip=grip, base=np.zeros(2))

    def _near(self, sim, target: np.ndarray, tol: float = REACH_TOL) -> bool:
        return bool(np.linalg.norm(sim.ee_pos("world") - target) < tol)

    def _setup(self, sim) -> None:
        name, self._goal = articulation_goal(sim, self.name, self.target)
        self._art = next(a for a in sim.layout.articulations if a.name == name)
        self._yaw = sim.layout.furniture_named(self._art.furniture).front_yaw
        self._front = np.array([math.cos(self._yaw), math.sin(self._yaw), 0.0])
        self._closed_handle = np.asarray(self._art.handle_closed_pos, dtype=np.float64)
        self._opening = self._goal != self._art.closed
        sign = 1.0 if self._art.open > self._art.closed else -1.0
        # Closing presses a little past the stop so the joint rests against it.
        self._aim = self._goal if self._opening else self._goal - sign * CLOSE_PRESS
        if self._art.kind == "hinge":
            self._hinge = fridge_hinge(self._closed_handle, self._yaw)

    # ------------------------------------------------------------------ geometry
    def _q(self, sim) -> float:
        return float(sim.articulation_pos(self._art.name))

    def _handle_at(self, q: float) -> np.ndarray:
        """World handle position at joint value q (exact: the handle is rigid on the part)."""
        if self._art.kind == "slide":
            return self._closed_handle + self._front * (q - self._art.closed)
        return self._hinge + rot_z(self._closed_handle - self._hinge, q - self._art.closed)

    def _outward(self, q: float) -> np.ndarray:
        """Outward normal of the handle's face at joint value q."""
        return rot_z(self._front, q) if self._art.kind == "hinge" else self._front

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
            target = self._handle_at(q) + PRE_GRASP * self._outward(q)
            if self._near(sim, target) or self._n > PHASE_TIMEOUT:
                self._goto("touch")
            else:
                return self._arm_to(sim, target, -1.0)
        if self.phase == "touch":
            handle = self._handle_at(q)
            if handle_held(sim):
                self._goto("move")
                self._offset = sim.ee_pos("world") - handle
                self._offset_q = q
                return self._move(sim, q)
            if self._n > PHASE_TIMEOUT:
                self._goto("approach")
            close = np.linalg.norm(sim.ee_pos("world") - handle) < 0.06
            target = handle - 0.02 * self._outward(q)
            return self._arm_to(sim, target, 1.0 if close else -1.0, max_step=0.03)
        if self.phase == "move":
            return self._move(sim, q)
        # Let go and head straight for rest: the robot passes through doors and drawers
        # (furniture_geoms), so no back-off move is needed before swinging the arm home.
        return self._rest(sim)

    def _rest(self, sim) -> np.ndarray:
        """Back to the resting pose in joint space: every joint at up to full speed (about
        twice as fast as an IK path to the rest EE position, which moves joints in step)."""
        dq = np.asarray(R.REST_ARM_QPOS) - np.asarray(sim.arm_joint_pos(), dtype=np.float64)
        arm = np.clip(dq / sim.config.arm_delta_scale, -1.0, 1.0).astype(np.float32)
        return self.layout.compose(arm=arm, grip=-1.0, base=np.zeros(2))

    def _move(self, sim, q: float) -> np.ndarray:  # noqa: C901 - one phase, kept together
        err = self._aim - q
        self._trail = (self._trail + [q])[-8:]
        # A part stopped inside the success band (0.05) is as good as it gets: let go.
        stalled = len(self._trail) == 8 and abs(self._trail[0] - q) < 0.002
        settled = stalled and abs(q - self._goal) < STALL_OK
        done = abs(q - self._goal) < DONE_TOL[self._art.kind]
        if not handle_held(sim) or done or settled or self._n > 3 * PHASE_TIMEOUT:
            self._goto("rest")
            return self._rest(sim)
        # Slow down near the goal so the part arrives without overshoot.
        step = float(np.clip(0.4 * err, -MAX_DQ[self._art.kind], MAX_DQ[self._art.kind]))
        q_next = q + step
        return self._arm_to(sim, self._handle_at(q_next) + self._lead(sim, q), 1.0, max_step=0.06)

    def _lead(self, sim, q: float) -> np.ndarray:
        """EE minus the point the suction weld pulls the handle to (it turns with the
        gripper): the EE target that brings that point onto the handle's path."""
        want = sim.hold_point()
        if want is None:  # nothing held: the grasp offset, turned with the door
            turn = q - self._offset_q if self._art.kind == "hinge" else 0.0
            return rot_z(self._offset, turn)
        return sim.ee_pos("world") - want

    # ------------------------------------------------------------------ base
    def _drive(self, sim) -> np.ndarray | None:
        """Base action toward the work pose along the NavMap's shortest path (None: there,
        stalled, or no base movement). A straight drive ran into the open fridge door or
        the furniture beside it and spent its whole budget there."""
        from rearrange.skills.oracle_nav import FollowerConfig, PathFollower

        if not self.base_movement or self._n > DRIVE_TIMEOUT:
            return None
        if self._work is None:  # once per episode: it searches round blocked spots
            self._work = articulation_work_pose(sim.layout, self._art, footprints=sim.footprints)
            cfg = FollowerConfig(pos_tol=0.05, yaw_tol=math.radians(4))
            self._follower = PathFollower(config=cfg)
            self._follower.reset(self._work)
        # Blocked for good (the open door stands in the path): work from where it is.
        xy = np.asarray(sim.base_pose()[:2], dtype=np.float64)
        self._base_trail = (self._base_trail + [xy])[-DRIVE_STALL_STEPS:]
        if len(self._base_trail) == DRIVE_STALL_STEPS:
            if np.linalg.norm(self._base_trail[0] - xy) < 0.02:
                return None
        base = self._follower.command(sim)
        return None if base is None else self._with_base(sim, base)

    def _with_base(self, sim, base) -> np.ndarray:
        action = self._arm_to(sim, rest_ee_world(sim), -1.0)
        action[self.layout.base] = base
        return action
