"""Skill tasks as gymnasium envs (nav, pick, place, open/close fridge and cabinet) and the
HAB composite env. See docs/CONTRACTS.md §4 and DESIGN.md §4."""

from rearrange.skill_spec import RewardConfig, SkillTarget, Thresholds

from .config import HabConfig, HabThresholds, TaskConfig, default_task_config
from .hab import HabEnv
from .registry import TASK_REGISTRY, make_env, register_task
from .sensors import build_observation, task_observation_space

__all__ = [
    "TASK_REGISTRY",
    "HabConfig",
    "HabEnv",
    "HabThresholds",
    "RewardConfig",
    "SkillTarget",
    "TaskConfig",
    "Thresholds",
    "build_observation",
    "default_task_config",
    "make_env",
    "register_task",
    "task_observation_space",
]
