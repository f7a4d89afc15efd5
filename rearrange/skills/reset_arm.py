"""Scripted arm reset between plan steps (habitat-lab's TP-SRL: the fixed high-level policy
inserts a `reset_arm` skill after every skill but the last, `add_arm_rest`).

A learned pick ends anywhere inside the 0.15 m EE-rest tolerance, often at its lower edge,
where the held object hangs below 0.9 m counter tops; the nav leg that follows then drives
it into a counter and the weld breaks (docs/DESIGN.md §8.4). habitat-lab's reset drives
the arm joints to the rest state; here the arm goes to the carry pose while it holds an
object (rest raised 0.13 m, the pose the scripted pick carries at, still inside the rest
tolerance) and to rest otherwise. The grip keeps whatever is held.

Since issue 27 the world blocks the arm at walls, furniture, doors and drawers and each
contact costs force, so the reset moves through `oracle_motion.ArmMotion` (the scripted
skills' collision-constrained step): a skill may end with the arm beside an open door or
over a counter, where a straight line to rest ran into it.
"""

from __future__ import annotations

import numpy as np

from rearrange.skills.oracle_common import rest_ee_world
from rearrange.skills.oracle_manip import CARRY_TOL, carry_ee_world
from rearrange.skills.oracle_motion import ArmMotion
from rearrange.tasks.grip_rules import grip_for_hold

RESET_ARM_STEPS = 60  # policy steps the reset may take (the arm moves ≤ 0.0125 rad/step)
# The action layout the reset is decoded with: pick's (arm, grip; base zero when it has one).
RESET_ARM_LAYOUT_SKILL = "pick"


def reset_arm_target(sim) -> np.ndarray:
    """World EE target: the carry pose while holding an object, else the resting EE."""
    return carry_ee_world(sim) if sim.held_object() is not None else rest_ee_world(sim)


class ResetArm:
    """Moves the EE to `reset_arm_target` clear of the scene, keeping the hold (the
    target is re-read from the sim every step)."""

    def __init__(self, layout, tol: float = CARRY_TOL) -> None:
        self.layout = layout
        self.tol = tol
        self.motion = ArmMotion()

    def is_done(self, sim) -> bool:
        return bool(np.linalg.norm(sim.ee_pos("world") - reset_arm_target(sim)) < self.tol)

    def act(self, sim) -> np.ndarray:
        # No posture term: a pull toward the start joints stalled this short move 3-4 cm
        # short of the carry pose.
        arm = self.motion.action(sim, reset_arm_target(sim))
        grip = grip_for_hold(sim.held_object() is not None)
        base = np.zeros(2) if self.layout.base is not None else None
        return self.layout.compose(arm=arm, grip=grip, base=base)
