"""Build the PDDL problem of one episode (Layout + Episode -> problem text).

Only what the targets need goes into the problem: the target objects, the receptacles
they start on and go to, and the containers around those receptacles. Clutter never
blocks anything in this domain, so leaving it out keeps grounding and search small.

PDDL names: episode object i is `obj_i`; receptacles and articulations keep their layout
names (`table_0`, `fridge_shelf_0`, `fridge`, `drawer_0`); receptacles open to the room
are in the pseudo-container `open_air`; the robot starts at `robot_start`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources

from rearrange.planner.search import PlanningError
from rearrange.sim.episode_types import Episode, Target
from rearrange.sim.layout_types import Articulation, Layout

OPEN_AIR = "open_air"
ROBOT_START = "robot_start"
# An articulation counts as opened within this distance of its open value (the
# open-skill success tolerance, DESIGN.md §4); a fridge door swung past `open` is open.
OPEN_TOLERANCE = 0.05
# Articulation.kind -> PDDL type; the type picks the open/close skill.
ARTICULATION_TYPES = {"hinge": "fridge", "slide": "drawer"}
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def domain_file() -> str:
    return str(resources.files("rearrange.planner") / "domain.pddl")


def object_name(index: int) -> str:
    return f"obj_{index}"


def object_index(name: str) -> int:
    """Inverse of `object_name`; raises PlanningError for anything else."""
    if not name.startswith("obj_") or not name[4:].isdigit():
        raise PlanningError(f"{name!r} is not a PDDL object name of the form obj_<index>")
    return int(name[4:])


@dataclass
class Problem:
    """A problem's text plus what is needed to read its plans back."""

    text: str
    order: dict[str, int]  # PDDL object name -> rank used to break ties between plans
    notes: list[str] = field(default_factory=list)  # hints for "no plan" errors


def is_opened(art: Articulation, value: float, tol: float = OPEN_TOLERANCE) -> bool:
    """True when `value` is at least as far from `closed` as `open` is, less `tol`."""
    span = art.open - art.closed
    direction = 1.0 if span >= 0 else -1.0
    return (value - art.closed) * direction >= abs(span) - tol


def _check_name(name: str, what: str) -> str:
    if not _NAME.match(name) or name in (OPEN_AIR, ROBOT_START):
        raise PlanningError(
            f"{what} name {name!r} cannot be a PDDL name (use letters, digits, '_', '-', "
            f"starting with a letter, and not {OPEN_AIR!r} or {ROBOT_START!r})"
        )
    return name


def _check_targets(layout: Layout, episode: Episode) -> None:
    names = {r.name for r in layout.receptacles}
    seen = set()
    for k, t in enumerate(episode.targets):
        if not 0 <= t.obj_index < len(episode.objects):
            raise PlanningError(
                f"episode {episode.episode_id}: target {k} names object {t.obj_index}, "
                f"but the episode has {len(episode.objects)} objects"
            )
        if t.obj_index in seen:
            raise PlanningError(
                f"episode {episode.episode_id}: object {t.obj_index} is the target of two "
                "targets; give each object one goal"
            )
        seen.add(t.obj_index)
        if t.goal_receptacle not in names:
            raise PlanningError(
                f"episode {episode.episode_id}: target {k} goal receptacle "
                f"{t.goal_receptacle!r} is not in layout {layout.split}/{layout.seed}"
            )
        if t.obj_index == _held(episode):
            continue
        where = episode.objects[t.obj_index].receptacle
        if where not in names:
            raise PlanningError(
                f"episode {episode.episode_id}: object {t.obj_index} rests on "
                f"{where!r}, which is not a receptacle of layout {layout.split}/{layout.seed}"
            )


def _held(episode: Episode) -> int | None:
    """The object the robot starts holding (extras["holding"]), which must be a target:
    the planner has no goal for where to put anything else."""
    held = episode.extras.get("holding")
    if held is None:
        return None
    if int(held) not in {t.obj_index for t in episode.targets}:
        raise PlanningError(
            f"episode {episode.episode_id}: the robot starts holding object {held}, "
            "which no target places; add a target for it"
        )
    return int(held)


@dataclass
class _Builder:
    objects: dict[str, str] = field(default_factory=dict)  # name -> type, in rank order
    init: list[str] = field(default_factory=list)
    goal: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def declare(self, name: str, pddl_type: str) -> None:
        self.objects.setdefault(name, pddl_type)


def _add_containers(b: _Builder, layout: Layout, episode: Episode, recs: list[str]) -> None:
    arts = {a.name: a for a in layout.articulations}
    b.declare(OPEN_AIR, "room")
    b.init.append(f"(opened {OPEN_AIR})")
    for name in recs:
        container = layout.receptacle(name).container
        if container is None:
            b.init.append(f"(in {name} {OPEN_AIR})")
            continue
        _check_name(container, "container")
        b.init.append(f"(in {name} {container})")
        if container in b.objects:
            continue
        art = arts.get(container)
        if art is None or art.kind not in ARTICULATION_TYPES:
            # Declared as a bare container: no action opens it, so what is inside is
            # unreachable and the search reports it with this note.
            b.declare(container, "container")
            b.notes.append(f"container {container!r} has no openable articulation in the layout")
            continue
        b.declare(container, ARTICULATION_TYPES[art.kind])
        b.init.append(f"(nav-target {container})")
        if is_opened(art, episode.articulations.get(container, art.closed)):
            b.init.append(f"(opened {container})")


def build_problem(layout: Layout, episode: Episode) -> Problem:
    """The PDDL problem for `episode` in `layout`; PlanningError on inconsistent input."""
    _check_targets(layout, episode)
    held = _held(episode)
    b = _Builder()
    for t in episode.targets:
        b.declare(object_name(t.obj_index), "movable")
    recs = _relevant_receptacles(episode, held)
    for r in recs:
        b.declare(r, "receptacle")
    _add_containers(b, layout, episode, recs)
    b.declare(ROBOT_START, "base")
    b.init.append(f"(robot-at {ROBOT_START})")
    if held is None:
        b.init.append("(hand-empty)")
    for t in episode.targets:
        _add_target(b, episode, t, held)
    return Problem(text=_render(b, episode), order=_ranks(b), notes=b.notes)


def _relevant_receptacles(episode: Episode, held: int | None) -> list[str]:
    """Start and goal receptacles of the targets, in target order."""
    recs: list[str] = []
    for t in episode.targets:
        start = None if t.obj_index == held else episode.objects[t.obj_index].receptacle
        for r in (start, t.goal_receptacle):
            if r is not None and r not in recs:
                recs.append(_check_name(r, "receptacle"))
    return recs


def _add_target(b: _Builder, episode: Episode, t: Target, held: int | None) -> None:
    o = object_name(t.obj_index)
    b.init.append(f"(nav-target {o})")
    b.init.append(f"(nav-target {t.goal_receptacle})")
    b.init.append(f"(goal-rec {o} {t.goal_receptacle})")
    if t.obj_index == held:
        b.init.append(f"(holding {o})")
    else:
        b.init.append(f"(at {o} {episode.objects[t.obj_index].receptacle})")
    b.goal.append(f"(placed {o})")


def _ranks(b: _Builder) -> dict[str, int]:
    return {name: i for i, name in enumerate(b.objects)}


def _render(b: _Builder, episode: Episode) -> str:
    objects = "\n    ".join(f"{n} - {t}" for n, t in b.objects.items())
    init = "\n    ".join(dict.fromkeys(b.init))
    goal = "\n    ".join(b.goal)
    name = re.sub(r"[^A-Za-z0-9_-]", "_", f"ep_{episode.episode_id}")
    return (
        f"(define (problem {name})\n  (:domain hab-rearrange)\n"
        f"  (:objects\n    {objects})\n"
        f"  (:init\n    {init})\n"
        f"  (:goal (and\n    {goal})))\n"
    )
