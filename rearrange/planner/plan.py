"""TP-SRL plans: PDDL actions turned into skill calls the executor can run.

`make_plan(layout, episode)` plans with the PDDL domain and returns `PlanStep`s whose
runtime target is resolved (episode object index, target index, receptacle, articulation),
e.g. for Tidy House, per object: nav(obj) pick(obj) nav(goal) place(obj, goal).

Two plan transforms from the VER paper (Appendix B / Section 6.2):
- Set Table adds a nav after each open_cab, because the open-cabinet skill with base
  movement tends to drive away from the drawer before the pick.
- `no_nav=True` (the TP-SRL(NoNav) ablation) removes exactly the nav steps, so pick and
  place must navigate by themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rearrange.planner.problem import build_problem, domain_file, object_index
from rearrange.planner.search import GroundAction, PlanningError, bfs, ground
from rearrange.sim.episode_types import Episode
from rearrange.sim.layout_types import Layout
from rearrange.skill_spec import SKILLS, skill_def


def action_skills() -> dict[str, str]:
    """PDDL action -> the skill that runs it, from the definitions (`SkillDef.pddl_actions`;
    e.g. pick-at-container is the pick skill run from where the robot opened the container
    instead of from next to the object)."""
    return {action: name for name, d in SKILLS.items() for action in d.pddl_actions}


# Tie-break nav actions by their destination (parameter 1), so that among shortest
# plans the one visiting targets in episode order comes out.
_SORT_ARG = {"nav": 1}
NAV_KINDS = ("object", "goal", "articulation", "receptacle")


@dataclass(frozen=True)
class PlanStep:
    """One skill call.

    args are PDDL names: nav (destination,), pick (obj, receptacle), place (obj, goal
    receptacle), open/close (articulation,). The resolved fields say what to run against:
    - pick: obj_index, target_index, receptacle (where it rests now)
    - place: obj_index, target_index, receptacle (the goal receptacle; the goal position
      is episode.targets[target_index].goal_pos)
    - open/close: articulation
    - nav: see `nav_kind`.
    """

    skill: str
    args: tuple[str, ...]
    obj_index: int | None = None
    target_index: int | None = None
    receptacle: str | None = None
    articulation: str | None = None

    @property
    def nav_kind(self) -> str:
        """For nav: "object" (go to object obj_index where it is now), "goal" (go to the
        goal position of target target_index), "articulation" (go to its front) or
        "receptacle" (go to the receptacle itself)."""
        if self.skill != "nav":
            raise ValueError(f"nav_kind asked of a {self.skill} step; only nav steps have one")
        if self.articulation is not None:
            return "articulation"
        if self.target_index is not None and self.receptacle is not None:
            return "goal"
        if self.obj_index is not None:
            return "object"
        return "receptacle"

    def __str__(self) -> str:
        return f"{self.skill}({', '.join(self.args)})"


@dataclass(frozen=True)
class Stage:
    """An interaction the per-stage success report counts (VER Fig. 6)."""

    name: str  # "pick_1", "place_1", "open_cab_1", ...
    step_index: int  # index in the plan of the step that completes the stage


def pddl_plan(layout: Layout, episode: Episode) -> list[GroundAction]:
    """The raw minimal-length PDDL plan of an episode."""
    if not episode.targets:
        return []
    problem = build_problem(layout, episode)
    task = ground(domain_file(), problem.text, problem.order, _SORT_ARG, problem.notes)
    try:
        return bfs(task)
    except PlanningError as e:
        raise PlanningError(f"episode {episode.episode_id}: {e}") from None


def _to_step(action: GroundAction, episode: Episode) -> PlanStep:
    skill = action_skills().get(action.name)
    if skill is None:
        raise PlanningError(
            f"PDDL action {action.name!r} maps to no skill; name it in a SkillDef.pddl_actions"
        )
    kind = skill_def(skill).target
    if kind == "nav_goal":  # nav (from, to)
        return PlanStep(skill, (action.args[1],))
    if kind == "object":  # pick (obj, where it rests), place (obj, goal receptacle)
        obj = object_index(action.args[0])
        target = next(k for k, t in enumerate(episode.targets) if t.obj_index == obj)
        return PlanStep(skill, action.args[:2], obj, target, receptacle=action.args[1])
    return PlanStep(skill, action.args[:1], articulation=action.args[0])


def _resolve_navs(steps: list[PlanStep], layout: Layout, episode: Episode) -> list[PlanStep]:
    """Give each nav the target of the interaction it leads to."""
    articulations = {a.name for a in layout.articulations}
    out = []
    for i, step in enumerate(steps):
        if step.skill == "nav":
            nxt = next((s for s in steps[i + 1 :] if s.skill != "nav"), None)
            step = _nav_for(step.args[0], nxt, episode, articulations)
        out.append(step)
    return out


def _nav_for(
    dest: str, nxt: PlanStep | None, episode: Episode, articulations: set[str]
) -> PlanStep:
    if dest.startswith("obj_") and dest[4:].isdigit():
        obj = object_index(dest)
        target = next((k for k, t in enumerate(episode.targets) if t.obj_index == obj), None)
        return PlanStep("nav", (dest,), obj_index=obj, target_index=target)
    if nxt is not None and nxt.skill == "place" and nxt.receptacle == dest:
        return PlanStep("nav", (dest,), nxt.obj_index, nxt.target_index, receptacle=dest)
    if dest in articulations:
        return PlanStep("nav", (dest,), articulation=dest)
    return PlanStep("nav", (dest,), receptacle=dest)


def add_nav_after_open(steps: list[PlanStep], skill: str) -> list[PlanStep]:
    """Insert a nav to the next interaction's target after each `skill` step (an open_cab:
    VER App. B; an open_fridge: see make_plan)."""
    out: list[PlanStep] = []
    for i, step in enumerate(steps):
        out.append(step)
        if step.skill != skill:
            continue
        nxt = steps[i + 1] if i + 1 < len(steps) else None
        if nxt is None or nxt.skill == "nav":
            continue
        out.append(_nav_to(nxt, step))
    return out


def _nav_to(nxt: PlanStep, opened: PlanStep) -> PlanStep:
    if nxt.skill == "pick":
        return PlanStep("nav", (nxt.args[0],), nxt.obj_index, nxt.target_index)
    if nxt.skill == "place":
        return replace(nxt, skill="nav", args=(nxt.receptacle,))
    # e.g. open_cab then open_fridge of the same spot: go back to the opened drawer.
    return PlanStep("nav", opened.args, articulation=opened.articulation)


def remove_nav(steps: list[PlanStep]) -> list[PlanStep]:
    """TP-SRL(NoNav): the same plan without its nav steps."""
    return [s for s in steps if s.skill != "nav"]


def make_plan(
    layout: Layout,
    episode: Episode,
    no_nav: bool = False,
    nav_after_open_cab: bool | None = None,
    nav_after_open_fridge: bool = True,
) -> list[PlanStep]:
    """The TP-SRL skill sequence of an episode.

    nav_after_open_cab defaults to True for set_table only (as in the VER paper).
    nav_after_open_fridge is on by default: in this simulator the open-fridge skill ends at
    the door's work pose (beside the hinge, where the whole handle arc is in reach), about
    1.3 m from the shelf objects, so a pick needs a nav first.
    Raises PlanningError (one line) if the goal cannot be reached or the input is bad.
    """
    steps = [_to_step(a, episode) for a in pddl_plan(layout, episode)]
    steps = _resolve_navs(steps, layout, episode)
    if nav_after_open_cab is None:
        nav_after_open_cab = episode.task == "set_table"
    if nav_after_open_cab:
        steps = add_nav_after_open(steps, "open_cab")
    if nav_after_open_fridge:
        steps = add_nav_after_open(steps, "open_fridge")
    return remove_nav(steps) if no_nav else steps


def plan_stages(plan: list[PlanStep]) -> list[Stage]:
    """Every non-nav step is an interaction, numbered per skill: pick_1, place_1, pick_2..."""
    counts: dict[str, int] = {}
    stages = []
    for i, step in enumerate(plan):
        if step.skill == "nav":
            continue
        counts[step.skill] = counts.get(step.skill, 0) + 1
        stages.append(Stage(f"{step.skill}_{counts[step.skill]}", i))
    return stages


def stage_names(plan: list[PlanStep]) -> list[str]:
    return [s.name for s in plan_stages(plan)]


def format_plan(plan: list[PlanStep]) -> str:
    return " ".join(str(s) for s in plan)
