"""Ground a PDDL task with pddlpy once, then find a minimal-length plan by BFS.

States are Python ints used as bit sets over the task's ground atoms, so applying an
operator is three mask operations; a 5-object Tidy House has a few thousand reachable
states and plans in milliseconds once grounded (parsing with ANTLR dominates).

Breadth-first search with duplicate detection returns a shortest plan. Among the
shortest plans it returns the lexicographically smallest one in the operator order
given by `order` (the first path that reaches a state is the smallest one, by induction
over BFS layers); the problem builder orders objects as the episode lists its targets,
so ties are broken the way a person would write the plan.
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

Atom = tuple[str, ...]


class PlanningError(ValueError):
    """No plan exists, or the problem could not be built; the message is one line."""


@dataclass(frozen=True)
class GroundAction:
    name: str  # PDDL action name, e.g. "pick-at-container"
    args: tuple[str, ...]  # parameters in the domain's declared order
    pre: int  # bit mask of positive preconditions
    pre_neg: int  # bit mask of negative preconditions
    add: int
    delete: int


@dataclass
class GroundTask:
    """A grounded, bit-encoded planning task."""

    atoms: list[Atom]  # bit i of a state <-> atoms[i]
    init: int
    goal: int
    actions: list[GroundAction]
    notes: list[str] = field(default_factory=list)  # hints appended to "no plan" errors

    def describe(self, mask: int) -> str:
        """The atoms of a mask in PDDL syntax, e.g. '(placed obj_0) (placed obj_3)'."""
        return " ".join("(" + " ".join(a) + ")" for i, a in enumerate(self.atoms) if mask >> i & 1)


class _AtomIndex:
    def __init__(self) -> None:
        self.atoms: list[Atom] = []
        self._bit: dict[Atom, int] = {}

    def mask(self, atoms: Iterable[Atom]) -> int:
        m = 0
        for a in atoms:
            a = tuple(a)
            if a not in self._bit:
                self._bit[a] = len(self.atoms)
                self.atoms.append(a)
            m |= 1 << self._bit[a]
        return m


def _parse(domain_file: str, problem_text: str):
    # pddlpy reads files, so the generated problem goes through a temp file.
    from pddlpy import DomainProblem

    fd, path = tempfile.mkstemp(suffix=".pddl", prefix="rearrange_problem_")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(problem_text)
        dp = DomainProblem(domain_file, path)
    finally:
        os.unlink(path)
    if not list(dp.operators()):
        raise PlanningError(f"PDDL domain {domain_file} has no actions (parse error?)")
    return dp


def _ground_actions(dp, index: _AtomIndex) -> list[GroundAction]:
    actions = []
    for name in dp.operators():
        declared = list(dp.domain.operators[name].variable_list)
        for op in dp.ground_operator(name):
            if op.conditional_effects or op.precondition_num or op.effect_num:
                raise PlanningError(
                    f"action {name} uses conditional or numeric effects, which the search "
                    "does not support; keep the domain STRIPS with typing"
                )
            actions.append(
                GroundAction(
                    name=name,
                    args=tuple(op.variable_list[v] for v in declared),
                    pre=index.mask(op.precondition_pos),
                    pre_neg=index.mask(op.precondition_neg),
                    add=index.mask(op.effect_pos),
                    delete=index.mask(op.effect_neg),
                )
            )
    return actions


def relaxed_reachable(init: int, actions: list[GroundAction]) -> int:
    """Atoms reachable when delete effects are ignored (negative preconditions too)."""
    reached = init
    changed = True
    while changed:
        changed = False
        for a in actions:
            if reached & a.pre == a.pre and reached | a.add != reached:
                reached |= a.add
                changed = True
    return reached


def ground(
    domain_file: str,
    problem_text: str,
    order: Mapping[str, int] | None = None,
    sort_arg: Mapping[str, int] | None = None,
    notes: Iterable[str] = (),
) -> GroundTask:
    """Parse and ground with pddlpy; keep only actions whose preconditions are relaxed-
    reachable, sorted by (domain action order, rank of the `sort_arg` parameter, ranks of
    all parameters). `order` ranks object names (unlisted names sort last)."""
    task = _ground_cached(domain_file, problem_text)
    order = order or {}
    sort_arg = sort_arg or {}
    names = list(dict.fromkeys(a.name for a in task.actions))

    def key(a: GroundAction) -> tuple:
        ranks = tuple(order.get(x, len(order)) for x in a.args)
        first = ranks[sort_arg[a.name]] if a.name in sort_arg else 0
        return (names.index(a.name), first, ranks, a.args)

    return GroundTask(
        atoms=task.atoms,
        init=task.init,
        goal=task.goal,
        actions=sorted(task.actions, key=key),
        notes=list(notes),
    )


@functools.lru_cache(maxsize=64)
def _ground_cached(domain_file: str, problem_text: str) -> GroundTask:
    # Cached on the problem text: re-planning the same episode (e.g. evaluating several
    # agents on one episode set) skips the ANTLR parse.
    dp = _parse(domain_file, problem_text)
    index = _AtomIndex()
    init = index.mask(a.ground({}) for a in dp.initialstate())
    goal = index.mask(a.ground({}) for a in dp.goals())
    actions = _ground_actions(dp, index)
    reachable = relaxed_reachable(init, actions)
    useful = [a for a in actions if reachable & a.pre == a.pre and a.add | a.delete]
    return GroundTask(atoms=index.atoms, init=init, goal=goal, actions=useful)


def _no_plan_message(task: GroundTask) -> str:
    missing = task.goal & ~relaxed_reachable(task.init, task.actions)
    if missing:
        msg = f"no plan: goal atoms {task.describe(missing)} can never be reached"
    else:
        msg = f"no plan: goal atoms {task.describe(task.goal)} cannot all hold together"
    if task.notes:
        msg += " (" + "; ".join(task.notes) + ")"
    return msg


def _extract(parents: dict[int, tuple[int, int] | None], state: int) -> list[int]:
    steps = []
    while parents[state] is not None:
        state, action = parents[state]
        steps.append(action)
    return steps[::-1]


def bfs(task: GroundTask, max_states: int = 2_000_000) -> list[GroundAction]:
    """A minimal-length plan (list of ground actions) from task.init to task.goal."""
    if task.init & task.goal == task.goal:
        return []
    parents: dict[int, tuple[int, int] | None] = {task.init: None}
    frontier = deque([task.init])
    goal = task.goal
    # Plain tuples in the inner loop: attribute lookups dominate otherwise.
    ops = [(i, a.pre, a.pre_neg, ~a.delete, a.add) for i, a in enumerate(task.actions)]
    while frontier:
        state = frontier.popleft()
        for i, pre, pre_neg, keep, add in ops:
            if state & pre != pre or state & pre_neg:
                continue
            nxt = (state & keep) | add
            if nxt in parents:
                continue
            parents[nxt] = (state, i)
            if nxt & goal == goal:
                return [task.actions[j] for j in _extract(parents, nxt)]
            frontier.append(nxt)
        if len(parents) > max_states:
            raise PlanningError(
                f"no plan within {max_states} states; prune the problem (fewer objects)"
            )
    raise PlanningError(_no_plan_message(task))
