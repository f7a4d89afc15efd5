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
"""

from __future__ import annotations

import numpy as np

from rearrange.sim.episodes.arm_starts import carry_joints
from rearrange.sim.robot import RESET_JOINT_TOL, REST_ARM_QPOS
from rearrange.skills.oracle_common import rest_ee_world
from rearrange.skills.oracle_manip import CARRY_TOL, carry_ee_world
from rearrange.skills.oracle_motion import ArmMotion
from rearrange.tasks.grip_rules import grip_for_hold

EE_PHASE_STEPS = 60  # policy steps the EE phase may take (the arm moves ≤ 0.0125 rad/step)
JOINT_PHASE_STEPS = 80  # ... and the joint phase after it
RESET_ARM_STEPS = EE_PHASE_STEPS + JOINT_PHASE_STEPS  # the reset's whole budget
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

    def is_done(self, sim) -> bool:
        return bool(np.abs(_joint_error(sim)).max() < JOINT_TOL)

    def act(self, sim) -> np.ndarray:
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
        grip = grip_for_hold(sim.held_object() is not None)
        base = np.zeros(2) if self.layout.base is not None else None
        return self.layout.compose(arm=arm, grip=grip, base=base)
