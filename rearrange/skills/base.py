"""The runtime Skill contract shared by learned and oracle skills (DESIGN §2, §6).

The plan executor only ever sees `Skill`: `reset(target, state)`, then `act(obs, sim)` until
`is_done(obs, sim)`. Each skill speaks its own skill task's action layout (`ActionLayout`),
so a learned policy and a scripted oracle for the same skill are interchangeable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

# DESIGN §6: default skill step limit 200, nav 300.
DEFAULT_STEP_LIMIT = 200
NAV_STEP_LIMIT = 300
# HAB apartments need more: nav paths reach ~13 m, ~400 steps at 1 m/s plus turns
# (rearrange.eval.executor.HAB_STEP_LIMITS). A base-moving (NoNav) manipulation skill
# navigates first, so it gets a nav's worth of steps on top of its own.
NAV_STEP_LIMIT_HAB = 500

SKILL_NAMES = ("nav", "pick", "place", "open_fridge", "close_fridge", "open_cab", "close_cab")

# Success thresholds (DESIGN §4).
EE_REST_TOL = 0.15
PLACE_TOL = 0.15
NAV_DIST_TOL = 1.5
NAV_ANGLE_TOL = np.deg2rad(15.0)
ARTICULATION_TOL = 0.05


class SkillError(ValueError):
    """A skill cannot be built or run; the message names the problem and the fix."""


@dataclass
class SkillTarget:
    """What a skill acts on. Fields a skill does not use stay None.

    obj_index: episode object index (pick, place: the held object).
    goal_pos: world position to place the object at (place).
    receptacle: receptacle name of the goal (place) or of the object (pick), informative.
    articulation: "fridge" | "drawer_0" | "drawer_1" (open/close skills).
    nav_goal: (x, y, yaw) the navigation skill drives to.
    """

    obj_index: int | None = None
    goal_pos: tuple[float, float, float] | None = None
    receptacle: str | None = None
    articulation: str | None = None
    nav_goal: tuple[float, float, float] | None = None


@runtime_checkable
class Skill(Protocol):
    name: str  # e.g. "pick"
    task: str  # skill task whose action / observation layout this skill uses

    def reset(self, target: SkillTarget, sim_or_env_state: Any = None) -> None: ...

    def act(self, obs: dict, sim: Any) -> np.ndarray: ...

    def is_done(self, obs: dict, sim: Any) -> bool: ...


def step_limit_for(skill_name: str, base_movement: bool = False) -> int:
    """A skill's own step cap (its `is_done` fires there).

    Base-moving skills get a HAB nav's 500 steps on top of the 200: in TP-SRL(NoNav) a
    pick/place/open/close must first drive there itself (the plan has no nav step). This
    is deliberately larger than the skill task envs' limits (`tasks.config`: 300, and
    200 + 100 for the base-moving articulated tasks): those envs truncate first, so in
    training and in `oracle_success` the env's limit is the one that binds; the cap here
    only matters in HAB episodes, whose 3000-step budget bounds the total."""
    if skill_name == "nav":
        return NAV_STEP_LIMIT
    return DEFAULT_STEP_LIMIT + (NAV_STEP_LIMIT_HAB if base_movement else 0)


def check_skill_name(skill_name: str) -> str:
    if skill_name not in SKILL_NAMES:
        raise SkillError(f"unknown skill {skill_name!r}; choose one of: {', '.join(SKILL_NAMES)}")
    return skill_name


@dataclass(frozen=True)
class ActionLayout:
    """Where each action part sits in a skill task's flat action vector.

    Parts are "arm" (7 joint deltas), "grip" (1, ≥ 0 grasp), "base" (2: linear, angular)
    and "stop" (1, ≥ 0 stop). A part that the task does not have is None.
    """

    arm: slice | None = None
    grip: int | None = None
    base: slice | None = None
    stop: int | None = None
    size: int = 0

    @staticmethod
    def from_parts(parts: list[tuple[str, int]]) -> ActionLayout:
        """Builds a layout from an ordered list of (part name, width)."""
        kwargs: dict[str, Any] = {}
        start = 0
        for part, width in parts:
            if part in ("arm", "base"):
                kwargs[part] = slice(start, start + width)
            elif part in ("grip", "stop"):
                kwargs[part] = start
            else:
                raise SkillError(f"unknown action part {part!r}; expected arm, grip, base, stop")
            start += width
        return ActionLayout(size=start, **kwargs)

    def compose(
        self,
        arm: np.ndarray | None = None,
        grip: float | None = None,
        base: np.ndarray | None = None,
        stop: bool = False,
    ) -> np.ndarray:
        """A flat action in [-1, 1]; missing parts are zero, stop is +1 / -1."""
        a = np.zeros(self.size, dtype=np.float32)
        if self.arm is not None and arm is not None:
            a[self.arm] = arm
        if self.grip is not None and grip is not None:
            a[self.grip] = grip
        if self.base is not None and base is not None:
            a[self.base] = base
        if self.stop is not None:
            a[self.stop] = 1.0 if stop else -1.0
        return np.clip(a, -1.0, 1.0)


def default_layout(task: str, base_movement: bool = False) -> ActionLayout:
    """The skill task action layout, as `rearrange.tasks.actions` decodes it.

    Manipulation: [7 arm deltas, grip] (+ [linear, angular] base); nav: [linear, angular, stop].
    """
    if task == "nav":
        return ActionLayout.from_parts([("base", 2), ("stop", 1)])
    parts = [("arm", 7), ("grip", 1)]
    if base_movement:
        parts.append(("base", 2))
    return ActionLayout.from_parts(parts)


def layout_from_env(env: Any, task: str) -> ActionLayout:
    """Reads the env's action layout if it publishes one, else infers it from the width."""
    parts = getattr(env, "action_parts", None) or getattr(
        getattr(env, "unwrapped", None), "action_parts", None
    )
    if parts:
        return ActionLayout.from_parts([(str(p), int(w)) for p, w in parts])
    width = int(np.prod(env.action_space.shape))
    for base_movement in (False, True):
        layout = default_layout(task, base_movement)
        if layout.size == width:
            return layout
    raise SkillError(
        f"cannot infer the action layout of task {task!r} from width {width}; "
        "publish `action_parts` on the env"
    )


def from_task_target(task_target: Any, receptacle: str | None = None) -> SkillTarget:
    """Converts `rearrange.tasks.sensors.SkillTarget` (what a skill env holds) to ours."""

    def _tuple(v: Any) -> tuple | None:
        return None if v is None else tuple(float(x) for x in np.asarray(v).reshape(-1))

    return SkillTarget(
        obj_index=getattr(task_target, "obj_index", None),
        goal_pos=_tuple(getattr(task_target, "goal_pos", None)),
        receptacle=receptacle,
        articulation=getattr(task_target, "articulation", None),
        nav_goal=_tuple(getattr(task_target, "nav_goal", None)),
    )
