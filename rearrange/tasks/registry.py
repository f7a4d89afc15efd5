"""Task registry: `make_env(task, config, split, seed)` builds a skill env by name.

TASK_REGISTRY holds one env class per defined skill (`skill_spec.SKILLS`); a skill defined
outside the package registers its class with `register_task` (docs/ADDING_A_SKILL.md)."""

from __future__ import annotations

from collections.abc import Callable

from rearrange.skill_spec import skill_def

from .articulated import ArticulatedEnv
from .base import SkillEnv
from .config import TaskConfig, default_task_config
from .nav import NavEnv
from .pick import PickEnv
from .place import PlaceEnv

TASK_REGISTRY: dict[str, Callable[..., SkillEnv]] = {
    "nav": NavEnv,
    "pick": PickEnv,
    "place": PlaceEnv,
    "open_fridge": ArticulatedEnv,
    "close_fridge": ArticulatedEnv,
    "open_cab": ArticulatedEnv,
    "close_cab": ArticulatedEnv,
}


def register_task(name: str, env_cls: Callable[..., SkillEnv]) -> None:
    """The env class of skill `name`, which must be defined (`skill_spec.register_skill`)."""
    skill_def(name)
    TASK_REGISTRY[name] = env_cls


def make_env(
    task: str,
    config: TaskConfig | None = None,
    split: str = "train",
    seed: int = 0,
    **kwargs,
) -> SkillEnv:
    """Build the env of skill `task`. `config` defaults to `default_task_config(task)`.

    Extra keyword arguments (`sim=`, `episodes=`) go to the env, e.g. to share a sim or to
    pass episodes in memory.
    """
    if task not in TASK_REGISTRY:
        raise ValueError(f"unknown task {task!r}; valid tasks: {', '.join(TASK_REGISTRY)}")
    if config is None:
        config = default_task_config(task)
    if config.task != task:
        raise ValueError(
            f"make_env({task!r}) got a TaskConfig for {config.task!r}; "
            f"use default_task_config({task!r})"
        )
    return TASK_REGISTRY[task](config, split, seed, **kwargs)
