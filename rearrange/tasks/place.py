"""Place: put the held object within 0.15 m of its goal, release it, return the arm to rest.

Reward (DESIGN.md §4): dist 2.0 (object->goal while held, EE->rest after release), place +5.0
on releasing within the place threshold, drop -0.5 on releasing elsewhere (ends), wrong pick
-0.5 on grasping anything afterwards (ends), constraint -1.0, force, slack -0.005.
Success: object within 0.15 m of goal, released, EE within 0.15 m of rest. With
`thresholds.place_settle` > 0 the released object must also have come to rest (moved less
than that in the last step), and one that slides out of the radius after the release fails
the episode as a drop.
"""

from __future__ import annotations

import numpy as np

from .actions import DecodedAction
from .base import SkillEnv, StepResult
from .rewards import DistanceDelta, constraint_term, ee_to_rest, force_term, slack_term

PLACE_TERMS = ("dist", "place", "drop", "wrong_pick", "constraint", "force", "slack")


class PlaceEnv(SkillEnv):
    def _obj_pos(self) -> np.ndarray:
        return np.asarray(self.sim.object_pos(self.target.obj_index), dtype=float)

    def _obj_to_goal(self) -> float:
        return float(np.linalg.norm(self._obj_pos() - self.target.goal_pos))

    def _tracked_dist(self, holding: bool) -> float:
        return self._obj_to_goal() if holding else ee_to_rest(self.sim)

    def _reset_task(self) -> None:
        self._was_holding = self.sim.held_object() == self.target.obj_index
        self._released = False
        self._dist = DistanceDelta()
        self._dist.reset(self._tracked_dist(self._was_holding), self._was_holding)
        self._obj_last = self._obj_pos()

    def _task_step(self, action: DecodedAction) -> StepResult:
        rc, th = self.config.reward, self.config.thresholds
        terms = dict.fromkeys(PLACE_TERMS, 0.0)
        held = self.sim.held_object()
        holding = held == self.target.obj_index
        failed = False
        # Grasping anything once the object is down (or another object at all) is wrong.
        if held is not None and (not holding or self._released):
            terms["wrong_pick"], failed = -rc.wrong_pick, True
        elif self._was_holding and not holding:
            self._released = True
            if self._obj_to_goal() < th.place:
                terms["place"] = rc.place
            else:
                terms["drop"], failed = -rc.drop, True
        elif self._released and th.place_settle > 0 and self._obj_to_goal() >= th.place:
            terms["drop"], failed = -rc.drop, True  # it slid out of the radius after the release
        terms["dist"] = self._dist.step(self._tracked_dist(holding), rc.dist, holding)
        terms["constraint"] = constraint_term(self.sim, rc)
        terms["force"] = force_term(self.sim, rc)
        terms["slack"] = slack_term(rc)
        self._was_holding = holding
        pos = self._obj_pos()
        moved, self._obj_last = float(np.linalg.norm(pos - self._obj_last)), pos
        settled = th.place_settle <= 0 or moved < th.place_settle
        success = (
            held is None
            and self._obj_to_goal() < th.place
            and ee_to_rest(self.sim) < th.ee_rest
            and settled
        )
        return StepResult(terms, success, failed)
