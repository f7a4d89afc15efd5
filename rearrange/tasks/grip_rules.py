"""Grip rules: how a skill's grip command is overridden, in training and at deployment.

One home for the rule (VER Appendix B, docs/DESIGN.md §4.3): the skill envs apply it while
training (`TaskConfig.grip_mask`) and the HRL executor and learned skills apply the same
functions at deployment, so a policy is trained under exactly the action semantics it is run
with.

- pick keeps the grip on once it holds an object: a thresholded Gaussian grip output flips
  sign at random, and without the rule pick learns grasp-then-drop (docs/DESIGN.md §8.2);
- place keeps it on while the held object is farther than its release distance from its goal
  (PLACE_RELEASE_DIST unless the task's `thresholds.place_release` says otherwise) or more than PLACE_RELEASE_MAX_BELOW under it (release-masking, the grip analogue of the
  paper's nav stop-masking: a thresholded Gaussian grip otherwise drops the object within
  ~1.4 steps), and off once it has released it;
- open/close fridge and cabinet keep the grip on while the target's handle is held and the
  joint is short of its target, and off once the joint has reached it (the hold is over:
  the skill lets go and returns the arm to rest);
- nav keeps whatever the robot currently holds.

`GripTracker` is the one implementation of what a rule needs over a skill run (holding,
released, near the goal): the skill envs, the learned skill and the HRL executor all use it.
"""

from __future__ import annotations

import numpy as np

from rearrange.skill_spec import SUCCESS, articulation_shortfall, skill_def

# The grip rules, by the name a skill's definition gives (`SkillDef.grip_rule`): how the grip
# dimension is overridden.
GRIP_KEEP_ON_WHEN_HOLDING = "keep_on_when_holding"
GRIP_KEEP_OFF_AFTER_RELEASE = "keep_off_after_release"
GRIP_KEEP_CURRENT = "keep_current"
GRIP_KEEP_ON_UNTIL_GOAL = "keep_on_until_goal"
GRIP_HOLD_HANDLE_UNTIL_TARGET = "hold_handle_until_target"
GRIP_RULES = (
    GRIP_KEEP_ON_WHEN_HOLDING,
    GRIP_KEEP_OFF_AFTER_RELEASE,
    GRIP_KEEP_CURRENT,
    GRIP_KEEP_ON_UNTIL_GOAL,
    GRIP_HOLD_HANDLE_UNTIL_TARGET,
)
# Place may release only with the object this close to its goal unless the task says otherwise
# (`Thresholds.place_release`, by default the place success threshold).
PLACE_RELEASE_DIST = SUCCESS.place_release
# ... and no lower than this under the goal (the goal is the object's resting centre).
PLACE_RELEASE_MAX_BELOW = 0.05
# Open/close: the hold is over once the joint is this close to its target (its success threshold).
ART_AT_TARGET_TOL = SUCCESS.articulation


def object_near_goal(
    sim,
    obj_index: int | None,
    goal_pos,
    tol: float = PLACE_RELEASE_DIST,
    max_below: float = PLACE_RELEASE_MAX_BELOW,
) -> bool:
    """Whether object `obj_index` is within `tol` of `goal_pos` and not more than
    `max_below` under it (True when either is unknown). The height check keeps place from
    letting go beside the furniture, under the surface, where the object falls to the floor
    (docs/DESIGN.md §8.2)."""
    if sim is None or obj_index is None or goal_pos is None:
        return True
    p = np.asarray(sim.object_pos(obj_index), dtype=float)
    g = np.asarray(goal_pos, dtype=float)
    return float(np.linalg.norm(p - g)) < tol and float(p[2]) > float(g[2]) - max_below


def grip_for_hold(is_holding: bool) -> float:
    """The grip command that keeps the current hold: +1 keeps a held object, −1 stays open."""
    return 1.0 if is_holding else -1.0


def mask_grip(
    action: np.ndarray,
    grip_index: int | None,
    rule: str | None,
    is_holding: bool,
    has_released: bool = False,
    near_goal: bool = True,
) -> np.ndarray:
    """Overrides the grip dimension by `rule` (one of GRIP_RULES); no-op without a grip dimension.

    `has_released`: place: it has let go of its object; open/close: the joint has reached its
    target (the hold is over). `is_holding`: open/close: the target's handle is held.
    """
    out = np.array(action, dtype=np.float32, copy=True)
    if grip_index is None or rule is None:
        return out
    if rule == GRIP_KEEP_ON_WHEN_HOLDING:
        if is_holding:
            out[grip_index] = 1.0
    elif rule == GRIP_KEEP_OFF_AFTER_RELEASE:
        if has_released:
            out[grip_index] = -1.0
    elif rule == GRIP_KEEP_ON_UNTIL_GOAL:
        if has_released:
            out[grip_index] = -1.0
        elif is_holding and not near_goal:
            out[grip_index] = 1.0
    elif rule == GRIP_HOLD_HANDLE_UNTIL_TARGET:
        if has_released:
            out[grip_index] = -1.0
        elif is_holding:
            out[grip_index] = 1.0
    elif rule == GRIP_KEEP_CURRENT:
        out[grip_index] = grip_for_hold(is_holding)
    else:
        raise ValueError(f"unknown grip rule {rule!r}; expected one of {', '.join(GRIP_RULES)}")
    return out


def held_handle(sim) -> str | None:
    """Name of the articulation whose handle the suction holds."""
    return sim.held_articulation()


class GripTracker:
    """What a skill's grip rule needs over one run, read from the sim each step.

    The one home of that bookkeeping: the skill env applies it while training, the learned
    skill and the HRL executor at deployment. `target` is any object with the SkillTarget
    fields the rule reads (obj_index, goal_pos, articulation, art_target).
    """

    def __init__(
        self,
        skill: str,
        art_tol: float = ART_AT_TARGET_TOL,
        release_dist: float = PLACE_RELEASE_DIST,
    ) -> None:
        self.skill, self.rule = skill, skill_def(skill).grip_rule
        self.art_tol = art_tol
        self.release_dist = release_dist  # place: let go only within this of the goal
        self.reset()

    def reset(self) -> None:
        self.was_holding = False
        self.released = False

    def mask(self, action: np.ndarray, grip_index: int | None, sim, target) -> np.ndarray:
        """`action` with the grip overridden by the rule, given the sim's state now."""
        if grip_index is None or self.rule is None:
            return np.array(action, dtype=np.float32, copy=True)
        near = True
        if self.rule == GRIP_HOLD_HANDLE_UNTIL_TARGET:
            holding = held_handle(sim) == target.articulation
            joint = sim.articulation_pos(target.articulation)
            err = articulation_shortfall(self.skill, joint, target.art_target)
            self.released |= err < self.art_tol
        else:
            holding = sim.held_object() is not None
            self.released |= self.was_holding and not holding
            if self.rule == GRIP_KEEP_ON_UNTIL_GOAL:
                near = object_near_goal(
                    sim, target.obj_index, target.goal_pos, tol=self.release_dist
                )
        self.was_holding = holding
        return mask_grip(action, grip_index, self.rule, holding, self.released, near)
