"""The runtime Skill contract shared by learned and oracle skills (DESIGN §2, §6).

The plan executor only ever sees `Skill`: `reset(target, state)`, then `act(obs, sim)` until
`is_done(obs, sim)`. Each skill speaks its own skill task's action layout
(`skill_spec.action_layout`), so a learned policy and a scripted oracle for the same skill
are interchangeable. Names, layouts, targets, thresholds and step limits live in
`rearrange.skill_spec`.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from rearrange.sim.simulator import Simulator
from rearrange.skill_spec import SkillTarget, skill_names


class SkillError(ValueError):
    """A skill cannot be built or run; the message names the problem and the fix."""


@runtime_checkable
class Skill(Protocol):
    name: str  # e.g. "pick"
    task: str  # skill task whose action / observation layout this skill uses
    step_limit: int  # the skill ends (is_done) after this many steps

    def reset(self, target: SkillTarget, sim_or_env_state: Any = None) -> None: ...

    def act(self, obs: dict, sim: Simulator | None) -> np.ndarray: ...

    def is_done(self, obs: dict, sim: Simulator | None) -> bool: ...


def check_skill_name(skill_name: str) -> str:
    if skill_name not in skill_names():
        known = ", ".join(skill_names())
        raise SkillError(f"unknown skill {skill_name!r}; choose one of: {known}")
    return skill_name
