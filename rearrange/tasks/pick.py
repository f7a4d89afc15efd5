"""Pick: grasp the target object and bring the arm back to its resting pose.

Reward (DESIGN.md §4): dist 2.0 (EE->object before the grasp, EE->rest after), pick +2.0 on
grasping the target, drop -0.5 (ends), wrong pick -0.5 (ends), constraint -1.0, force 1e-4
capped at 0.01, slack -0.005. Success: holding the target and EE within 0.15 m of rest.
"""

from __future__ import annotations

from .actions import DecodedAction
from .base import SkillEnv, StepResult
from .rewards import DistanceDelta, constraint_term, ee_to_point, ee_to_rest, force_term, slack_term

PICK_TERMS = ("dist", "pick", "drop", "wrong_pick", "constraint", "force", "slack")


class PickEnv(SkillEnv):
    def _holding_target(self) -> bool:
        return self.sim.held_object() == self.target.obj_index

    def _tracked_dist(self, holding: bool) -> float:
        if holding:
            return ee_to_rest(self.sim)
        return ee_to_point(self.sim, self.sim.object_pos(self.target.obj_index))

    def _reset_task(self) -> None:
        self._was_holding = self._holding_target()
        self._dist = DistanceDelta()
        self._dist.reset(self._tracked_dist(self._was_holding), self._was_holding)

    def _task_step(self, action: DecodedAction) -> StepResult:
        rc = self.config.reward
        terms = dict.fromkeys(PICK_TERMS, 0.0)
        held = self.sim.held_object()
        holding = held == self.target.obj_index
        failed = False
        if held is not None and not holding:
            terms["wrong_pick"], failed = -rc.wrong_pick, True
        elif self._was_holding and not holding:
            terms["drop"], failed = -rc.drop, True
        elif holding and not self._was_holding:
            terms["pick"] = rc.pick
        terms["dist"] = self._dist.step(self._tracked_dist(holding), rc.dist, holding)
        terms["constraint"] = constraint_term(self.sim, rc)
        terms["force"] = force_term(self.sim, rc)
        terms["slack"] = slack_term(rc)
        self._was_holding = holding
        success = holding and ee_to_rest(self.sim) < self.config.thresholds.ee_rest
        return StepResult(terms, success, failed)


def pick_receptacle(env):
    """The receptacle a pick's target lies on (None: not a pick, or not a layout's)."""
    base = env.unwrapped
    if base.task != "pick":
        return None
    sim, target = base.sim, base.target
    name = target.receptacle or sim.episode.objects[target.obj_index].receptacle
    try:
        return sim.layout.receptacle(name)
    except KeyError:
        return None


PICK_SOURCES = ("open", "fridge", "drawer")
"""Where a pick's target lies (`pick_source`): an open receptacle, the open fridge's shelf, an
open drawer (the episode options fridge_pick_prob and drawer_pick_prob choose the last two)."""


def pick_source(env) -> str:
    """One of PICK_SOURCES for a pick env's current episode; '' for any other task."""
    rec = pick_receptacle(env)
    if rec is None:
        return ""
    return "fridge" if rec.in_fridge else "drawer" if rec.in_drawer else "open"
