"""Scripted arm reset between plan steps (habitat-lab's TP-SRL: the fixed high-level policy
inserts a `reset_arm` skill after every skill but the last, `add_arm_rest`).

A learned pick ends anywhere inside the 0.15 m EE-rest tolerance, often at its lower edge,
where the held object hangs below 0.9 m counter tops; the nav leg that follows then drives
it into a counter and the weld breaks (docs/DESIGN.md §8.4). habitat-lab's reset drives
the arm joints to the rest state; here the arm goes to the carry pose while it holds an
object (rest raised 0.13 m, the pose the scripted pick carries at, still inside the rest
tolerance) and to rest otherwise. The grip keeps whatever is held.

Two phases. Since issue 27 the world blocks the arm at walls, furniture, doors and drawers
and each contact costs force, so the reset first moves the EE to its pose through
`oracle_motion.ArmMotion` (the scripted skills' collision-constrained step): a skill may
end with the arm beside an open door or over a counter, where a straight line to rest ran
into it. Then, as habitat-lab's reset does, it drives the joints to the canonical ones
(the rest joints, or `carry_joints` while holding): the EE phase reaches the pose with
whatever joints the skill left (the shoulder panned up to 0.9 rad from rest after a
pick), an arm the nav never trained with, whose elbow and wrist stood out into walls on
turns; tidy_house all learned went from 18 / 28 % to 40 / 36 % of 50 val episodes
(seeds 0 / 1) with the joint phase (benchmarks/RESULTS.md, "Physical honesty").

A planned detour, where the straight joint segment to the canonical joints is not clear
(`oracle_motion.segment_clear`): the reset follows a collision-free joint path
(`plan_joint_path`: RRT-Connect, shortcut) at the per-step joint bound, with a larger step
budget (`PLANNED_RESET_STEPS`: a detour is longer than the straight way); where none is
found, the two phases as before. Added with the step back below for the arm left beside the
door a learned open_fridge opened, where both phases stalled against the panel; there the
planner found no path (the canonical joints themselves were inside the door) and the step
back is what helped. On the first 20 set_table episodes of seed 0 (state skills, before the
step back) it planned a path in 1 of 25 resets; what it adds alone was not measured.

A step back first, where the canonical joints themselves are not clear at the base's
pose (`backoff_steps`): the learned open_fridge stands at the handle, and the door it
opened ends right before the robot with the rest arm 11 cm inside the panel, so no arm
motion reaches it; the base backs straight off (at full speed, up to `BACKOFF_MAX`) until
the folded arm fits, as a person steps back from a door to fold an arm. The executor
drives it (`TPSRLExecutor._reset_arm`) through the nav's layout: the reset's own (pick's)
has no base part without base movement.
"""

from __future__ import annotations

import math

import numpy as np

from rearrange.sim.episodes.arm_starts import carry_joints
from rearrange.sim.robot import RESET_JOINT_TOL, REST_ARM_QPOS
from rearrange.skills.oracle_common import rest_ee_world
from rearrange.skills.oracle_manip import CARRY_TOL, carry_ee_world
from rearrange.skills.oracle_motion import (
    PLAN_CLEAR,
    ArmMotion,
    clearance_at,
    plan_joint_path,
    segment_clear,
)
from rearrange.tasks.grip_rules import grip_for_hold

EE_PHASE_STEPS = 60  # policy steps the EE phase may take (the arm moves ≤ 0.0125 rad/step)
JOINT_PHASE_STEPS = 80  # ... and the joint phase after it
RESET_ARM_STEPS = EE_PHASE_STEPS + JOINT_PHASE_STEPS  # the reset's whole budget
PLANNED_RESET_STEPS = 400  # ... and a planned reset's (a detour of up to ~5 rad of joint motion)
STRAIGHT_CLEAR = 0.005  # m: the gap the straight joint segment must keep to go unplanned
WAYPOINT_TOL = 0.02  # rad: an intermediate waypoint is passed when every joint is this close
STALL_STEPS = 10  # a planned path is dropped after this many steps without joint motion
STALL_MOVE = 1e-4  # rad: less than this (every joint) in a step is no motion
PLAN_SEED = 0  # the planner's samples repeat (a reset is part of a deterministic episode)
BACKOFF_MAX = 0.6  # m: the farthest the base backs off for the canonical joints to fit
BACKOFF_LAYOUT_SKILL = "nav"  # the layout the back-off is decoded with (base, stop)
JOINT_TOL = RESET_JOINT_TOL  # rad: every joint this close to its canonical value ends the reset
# The action layout the reset is decoded with: pick's (arm, grip; base zero when it has one).
RESET_ARM_LAYOUT_SKILL = "pick"


def reset_arm_target(sim) -> np.ndarray:
    """World EE target: the carry pose while holding an object, else the resting EE."""
    return carry_ee_world(sim) if sim.held_object() is not None else rest_ee_world(sim)


def reset_arm_joints(sim) -> np.ndarray:
    """The joints the reset ends at: `carry_joints` while holding, else the rest joints."""
    return carry_joints() if sim.held_object() is not None else np.array(REST_ARM_QPOS)


def _joint_error(sim) -> np.ndarray:
    return reset_arm_joints(sim) - sim.arm_joint_pos()


class ResetArm:
    """Moves the EE to `reset_arm_target` clear of the scene, then the joints to
    `reset_arm_joints`, keeping the hold (both re-read from the sim every step)."""

    def __init__(self, layout, tol: float = CARRY_TOL) -> None:
        self.layout = layout
        self.tol = tol
        self.motion = ArmMotion()
        self.ee_steps = 0  # steps spent in the EE phase
        self.joint_phase = False
        self.checked = False  # whether the first act decided between path and phases
        self.path: list[np.ndarray] | None = None  # waypoints left of a planned detour
        self.planned = False  # a detour was planned (kept after it is followed or dropped)
        self._last_q: np.ndarray | None = None
        self._still = 0

    def budget(self, steps: int = RESET_ARM_STEPS) -> int:
        """The step budget: `steps`, or PLANNED_RESET_STEPS once a detour was planned."""
        return max(steps, PLANNED_RESET_STEPS) if self.planned else steps

    def is_done(self, sim) -> bool:
        return bool(np.abs(_joint_error(sim)).max() < JOINT_TOL)

    def act(self, sim) -> np.ndarray:
        if not self.checked:
            self.checked = True
            self.path = detour(sim)
            self.planned = self.path is not None
        if self.path is not None:
            arm = self._follow(sim)
            if arm is not None:
                return self._compose(sim, arm)
        if not self.joint_phase:
            ee_err = np.linalg.norm(sim.ee_pos("world") - reset_arm_target(sim))
            self.joint_phase = ee_err < self.tol or self.ee_steps >= EE_PHASE_STEPS
        if self.joint_phase:
            arm = np.clip(_joint_error(sim) / sim.config.arm_delta_scale, -1.0, 1.0)
        else:
            # No posture term: a pull toward the start joints stalled this short move 3-4
            # cm short of the carry pose.
            arm = self.motion.action(sim, reset_arm_target(sim))
            self.ee_steps += 1
        return self._compose(sim, arm)

    def _follow(self, sim) -> np.ndarray | None:
        """One step along the planned path: straight toward its next waypoint at the joint
        bound (every joint scaled alike, so the arm stays on the checked segment); None
        once the path is done or stalled (then the two phases take over)."""
        q = sim.arm_joint_pos()
        moved = math.inf if self._last_q is None else float(np.abs(q - self._last_q).max())
        self._still = self._still + 1 if moved < STALL_MOVE else 0
        self._last_q = q.copy()
        while len(self.path) > 1 and np.abs(self.path[0] - q).max() < WAYPOINT_TOL:
            self.path.pop(0)
        err = self.path[0] - q
        if self._still >= STALL_STEPS or np.abs(err).max() < JOINT_TOL:
            self.path = None
            self.joint_phase = True  # the canonical joints next (the EE is off the door)
            return None
        scale = sim.config.arm_delta_scale
        return err / max(scale, float(np.abs(err).max()))

    def _compose(self, sim, arm) -> np.ndarray:
        grip = grip_for_hold(sim.held_object() is not None)
        base = np.zeros(2) if self.layout.base is not None else None
        return self.layout.compose(arm=arm, grip=grip, base=base)


def detour(sim) -> list[np.ndarray] | None:
    """Waypoints (after the start) of a collision-free joint path to the canonical joints
    when the straight segment there is not clear, else None (straight: the two phases)."""
    q, goal = sim.arm_joint_pos(), reset_arm_joints(sim)
    if np.abs(goal - q).max() < JOINT_TOL or segment_clear(sim, q, goal, STRAIGHT_CLEAR):
        return None
    path = plan_joint_path(sim, q, goal, rng=np.random.default_rng(PLAN_SEED))
    return None if path is None else [np.asarray(p, dtype=np.float64) for p in path[1:]]


def reverse_step_m(sim) -> float:
    """How far one full-speed reverse step takes the base (m)."""
    return float(sim.config.base_max_linear * sim.config.policy_dt)


def pose_behind(sim, n: int) -> tuple[float, float, float]:
    """The base pose `n` full-speed reverse steps straight behind the current one (the step
    back's, here and in skills/nav_unstick.py)."""
    step = reverse_step_m(sim)
    x, y, yaw = (float(v) for v in sim.base_pose())
    return (x - n * step * math.cos(yaw), y - n * step * math.sin(yaw), yaw)


def reverse_action(layout) -> np.ndarray:
    """The step back's action in a nav layout: full reverse, no turn, no stop."""
    return layout.compose(base=np.array([-1.0, 0.0]))


def backoff_steps(sim) -> int:
    """Full-speed reverse steps the base takes before the arm reset, where the canonical
    joints are not clear of static geometry at its pose: the fewest (up to BACKOFF_MAX)
    after which the arm at them keeps PLAN_CLEAR; 0 where they already keep
    STRAIGHT_CLEAR, or no such pose is found (the reset then goes as far as it can)."""
    goal = reset_arm_joints(sim)
    if clearance_at(sim, arm=goal, whole_robot=False) >= STRAIGHT_CLEAR:
        return 0
    for n in range(1, int(BACKOFF_MAX / reverse_step_m(sim)) + 1):
        if clearance_at(sim, base=pose_behind(sim, n), arm=goal, whole_robot=False) >= PLAN_CLEAR:
            return n
    return 0
