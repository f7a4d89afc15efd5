"""An eighth skill, defined outside the package: reach (docs/ADDING_A_SKILL.md).

Reach moves the end effector to the episode's target object, without grasping it. It is one
definition (what the layers read) plus one task class (its reward and success); importing
this module registers both.
"""

from __future__ import annotations

from rearrange.skill_spec import RewardConfig, SkillDef, register_skill
from rearrange.tasks import register_task
from rearrange.tasks.actions import DecodedAction
from rearrange.tasks.base import SkillEnv, StepResult
from rearrange.tasks.rewards import DistanceDelta, ee_to_point, force_term, slack_term

REACH_RADIUS = 0.15  # m: success once the end effector is this close to the object's centre

REACH = register_skill(
    SkillDef(
        name="reach",
        actions=("arm",),  # 7 arm joint deltas: no grip, no stop
        step_limit=100,
        target="object",  # the episode's first target object (SkillTarget.obj_index)
        sensors=("joint", "ee_pos", "obj_start_sensor"),  # names from tasks/sensors.py
        episode_builder="object",  # pick's episodes: objects on receptacles, robot in reach
        rewards=RewardConfig(dist=2.0, success=10.0),
    )
)


class ReachEnv(SkillEnv):
    """Reward: EE->object distance change x `dist`, force penalty, slack; success within
    REACH_RADIUS (the base class adds the success bonus and the step limit)."""

    def _distance(self) -> float:
        return ee_to_point(self.sim, self.sim.object_pos(self.target.obj_index))

    def _reset_task(self) -> None:
        self._dist = DistanceDelta()
        self._dist.reset(self._distance())

    def _task_step(self, action: DecodedAction) -> StepResult:
        rc = self.config.reward
        distance = self._distance()
        terms = {
            "dist": self._dist.step(distance, rc.dist),
            "force": force_term(self.sim, rc),
            "slack": slack_term(rc),
        }
        return StepResult(terms, success=distance < REACH_RADIUS, failed=False)


register_task("reach", ReachEnv)
