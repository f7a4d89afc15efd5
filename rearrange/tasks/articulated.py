"""Open / close the fridge door or a kitchen-cabinet drawer.

Reward (DESIGN.md §4): articulation-distance change x10, handle grasp +5 (first time),
marker (EE->handle) distance change x1 until the joint reaches its target, EE->rest change x1
afterwards (measured round an open door's panel: tasks/door_path.py), at-state +5 (first time the joint is at its target), wrong grasp (an object
instead of the handle) -5 and ends; close skills use only the EE and marker terms (the
others have coefficient 0 in their default config). Success: joint within 0.05 of the
target or past it (`skill_spec.articulation_shortfall`), EE within 0.15 m of rest, nothing
held (the brief's simplification: no stop action).
"""

from __future__ import annotations

from rearrange.skill_spec import articulation_shortfall

from .actions import DecodedAction
from .base import SkillEnv, StepResult
from .door_path import ee_to_rest_round_door
from .rewards import DistanceDelta, constraint_term, ee_to_point, ee_to_rest, force_term, slack_term
from .sensors import held_handle

ART_TERMS = (
    "art_dist",
    "grasp",
    "marker_dist",
    "ee_dist",
    "at_state",
    "wrong_grasp",
    "constraint",
    "force",
    "slack",
)


class ArticulatedEnv(SkillEnv):
    def _art_err(self) -> float:
        t = self.target
        return articulation_shortfall(
            self.task, self.sim.articulation_pos(t.articulation), t.art_target
        )

    def _handle_grasped(self) -> bool:
        return held_handle(self.sim) == self.target.articulation

    def _phase_dist(self, at_target: bool) -> float:
        if at_target:
            if self.config.reward.ee_round_door:
                return ee_to_rest_round_door(self.sim, self.target.articulation)
            return ee_to_rest(self.sim)
        return ee_to_point(self.sim, self.sim.handle_pos(self.target.articulation))

    def _reset_task(self) -> None:
        self._grasped_once = False
        err = self._art_err()
        self._reached = err < self.config.thresholds.articulation
        self._art = DistanceDelta()
        self._art.reset(err)
        self._phase = DistanceDelta()
        self._phase.reset(self._phase_dist(self._reached), self._reached)

    def _task_step(self, action: DecodedAction) -> StepResult:
        rc, th = self.config.reward, self.config.thresholds
        terms = dict.fromkeys(ART_TERMS, 0.0)
        failed = self.sim.held_object() is not None
        if failed:
            terms["wrong_grasp"] = -rc.wrong_grasp
        grasped = self._handle_grasped()
        if grasped and not self._grasped_once:
            self._grasped_once, terms["grasp"] = True, rc.grasp
        err = self._art_err()
        terms["art_dist"] = self._art.step(err, rc.art_dist)
        at_target = err < th.articulation
        if at_target and not self._reached:
            self._reached, terms["at_state"] = True, rc.at_state
        phase_delta = self._phase.step(self._phase_dist(at_target), 1.0, at_target)
        key = "ee_dist" if at_target else "marker_dist"
        terms[key] = phase_delta * (rc.ee_dist if at_target else rc.marker_dist)
        terms["constraint"] = constraint_term(self.sim, rc)
        terms["force"] = force_term(self.sim, rc)
        terms["slack"] = slack_term(rc)
        released = not grasped and not failed
        success = at_target and released and ee_to_rest(self.sim) < th.ee_rest
        return StepResult(terms, bool(success), failed)


__all__ = ["ArticulatedEnv", "ART_TERMS"]
