"""Skill termination rules shared by learned and oracle skills (DESIGN §4, §6).

A skill ends when its own stop is called (nav), when its post-condition holds, or at its
step limit. Post-conditions read only what the skill's own sensors carry (is_holding,
EE-to-rest, the joint of the articulation it works on), so they are not privileged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rearrange.skill_spec import (
    ARTICULATED_SKILLS,
    SUCCESS,
    SkillTarget,
    articulation_shortfall,
    skill_def,
)
from rearrange.tasks.sensors import held_handle  # the is_holding sensor's own probe

Postcondition = Callable[[str, SkillTarget, Any], bool]
"""(skill name, target, sim) -> whether the skill has achieved what it is for."""


def ee_at_rest(sim, tol: float = SUCCESS.ee_rest) -> bool:
    return bool(np.linalg.norm(sim.ee_pos("base") - sim.rest_ee_pos_base) < tol)


def articulation_goal(sim, skill_name: str, target: SkillTarget) -> tuple[str, float]:
    """(articulation name, joint value the skill drives it to)."""
    spec = skill_def(skill_name).articulation
    # the fridge is the only one of its kind; a drawer must be named
    name = target.articulation or ("fridge" if spec.articulation == "fridge" else None)
    if name is None:
        raise ValueError(f"{skill_name} needs SkillTarget.articulation (e.g. 'drawer_0')")
    for art in sim.layout.articulations:
        if art.name == name:
            return name, float(art.open if spec.opens else art.closed)
    raise ValueError(
        f"layout has no articulation {name!r}; known: {[a.name for a in sim.layout.articulations]}"
    )


def _holds_target_at_rest(skill_name: str, target: SkillTarget, sim) -> bool:
    return sim.held_object() == target.obj_index and ee_at_rest(sim)


def _released_at_rest(skill_name: str, target: SkillTarget, sim) -> bool:
    return sim.held_object() is None and ee_at_rest(sim)


def _articulation_at_goal(skill_name: str, target: SkillTarget, sim) -> bool:
    name, goal = articulation_goal(sim, skill_name, target)
    short = articulation_shortfall(skill_name, sim.articulation_pos(name), goal)
    at_goal = short < SUCCESS.articulation
    return at_goal and not handle_held(sim) and ee_at_rest(sim)


def _ends_by_stop(skill_name: str, target: SkillTarget, sim) -> bool:
    return False  # nav ends only by its stop action


# Each defined skill's post-condition; a skill defined outside the package that runs as a
# runtime skill adds its own with `register_postcondition`.
POSTCONDITIONS: dict[str, Postcondition] = {
    "nav": _ends_by_stop,
    "pick": _holds_target_at_rest,
    "place": _released_at_rest,
    **{name: _articulation_at_goal for name in ARTICULATED_SKILLS},  # open/close
}


def register_postcondition(skill_name: str, postcondition: Postcondition) -> None:
    skill_def(skill_name)
    POSTCONDITIONS[skill_name] = postcondition


def postcondition_met(skill_name: str, target: SkillTarget, sim) -> bool:
    """True once the skill achieved what it is for and the arm is back at rest."""
    check = POSTCONDITIONS.get(skill_name)
    if check is None:
        raise ValueError(
            f"skill {skill_name!r} has no post-condition; add one with "
            "rearrange.skills.termination.register_postcondition"
        )
    return check(skill_name, target, sim)


def handle_held(sim) -> bool:
    """Whether the suction gripper holds an articulation handle (sims without it: False)."""
    return held_handle(sim) is not None
