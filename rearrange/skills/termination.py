"""Skill termination rules shared by learned and oracle skills (DESIGN §4, §6).

A skill ends when its own stop is called (nav), when its post-condition holds, or at its
step limit. Post-conditions read only what the skill's own sensors carry (is_holding,
EE-to-rest, the joint of the articulation it works on), so they are not privileged.
"""

from __future__ import annotations

import numpy as np

from rearrange.skill_spec import ARTICULATED_SKILLS, SUCCESS, SkillTarget, articulation_shortfall
from rearrange.tasks.sensors import held_handle  # the is_holding sensor's own probe


def ee_at_rest(sim, tol: float = SUCCESS.ee_rest) -> bool:
    return bool(np.linalg.norm(sim.ee_pos("base") - sim.rest_ee_pos_base) < tol)


def articulation_goal(sim, skill_name: str, target: SkillTarget) -> tuple[str, float]:
    """(articulation name, joint value the skill drives it to)."""
    spec = ARTICULATED_SKILLS[skill_name]
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


def postcondition_met(skill_name: str, target: SkillTarget, sim) -> bool:
    """True once the skill achieved what it is for and the arm is back at rest."""
    if skill_name == "pick":
        return sim.held_object() == target.obj_index and ee_at_rest(sim)
    if skill_name == "place":
        return sim.held_object() is None and ee_at_rest(sim)
    if skill_name in ARTICULATED_SKILLS:
        name, goal = articulation_goal(sim, skill_name, target)
        short = articulation_shortfall(skill_name, sim.articulation_pos(name), goal)
        at_goal = short < SUCCESS.articulation
        return at_goal and not handle_held(sim) and ee_at_rest(sim)
    return False  # nav ends only by its stop action


def handle_held(sim) -> bool:
    """Whether the suction gripper holds an articulation handle (sims without it: False)."""
    return held_handle(sim) is not None
