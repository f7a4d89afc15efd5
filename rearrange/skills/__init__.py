"""Runtime skills for the planner: learned (VER checkpoints) and oracle (scripted,
privileged), sharing one `Skill` protocol; HRL masks; termination rules."""

from rearrange.skill_spec import ActionLayout, SkillTarget, action_layout, step_limit_for
from rearrange.skills.base import Skill, SkillError
from rearrange.skills.registry import SKILL_KINDS, make_skill
from rearrange.tasks.grip_rules import grip_for_hold, mask_grip
from rearrange.tasks.stop_rule import mask_nav_stop

__all__ = [
    "SKILL_KINDS",
    "ActionLayout",
    "Skill",
    "SkillError",
    "SkillTarget",
    "action_layout",
    "grip_for_hold",
    "make_skill",
    "mask_grip",
    "mask_nav_stop",
    "step_limit_for",
]
