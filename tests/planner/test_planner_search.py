"""BFS over bit-encoded ground tasks, on tiny hand-built tasks."""

from __future__ import annotations

import pytest

from rearrange.planner.search import GroundAction, GroundTask, PlanningError, bfs


def _act(name, pre=0, add=0, delete=0, pre_neg=0):
    return GroundAction(name, (), pre, pre_neg, add, delete)


# bits: 0 start, 1 a, 2 b, 3 goal
LINE = [
    _act("start-a", pre=1, add=2, delete=1),
    _act("a-b", pre=2, add=4, delete=2),
    _act("b-goal", pre=4, add=8, delete=4),
    _act("start-goal-blocked", pre=1, add=8, pre_neg=2 | 1),  # never applicable
    _act("a-goal", pre=2, add=8, delete=2),
]


def test_bfs_returns_a_shortest_plan():
    task = GroundTask(atoms=[("s",), ("a",), ("b",), ("g",)], init=1, goal=8, actions=LINE)
    assert [a.name for a in bfs(task)] == ["start-a", "a-goal"]


def test_bfs_breaks_ties_by_action_order():
    first = _act("first", pre=1, add=8)
    second = _act("second", pre=1, add=8)
    task = GroundTask(
        atoms=[("s",), ("a",), ("b",), ("g",)], init=1, goal=8, actions=[first, second]
    )
    assert [a.name for a in bfs(task)] == ["first"]
    task.actions = [second, first]
    assert [a.name for a in bfs(task)] == ["second"]


def test_goal_already_true_gives_empty_plan():
    task = GroundTask(atoms=[("g",)], init=1, goal=1, actions=[])
    assert bfs(task) == []


def test_unreachable_goal_names_the_atoms():
    task = GroundTask(
        atoms=[("s",), ("placed", "obj_2")], init=1, goal=2, actions=[_act("noop", pre=1, add=1)]
    )
    with pytest.raises(PlanningError, match=r"goal atoms \(placed obj_2\) can never be reached"):
        bfs(task)


def test_jointly_unreachable_goal():
    # a and b are each reachable, but reaching one deletes the other's precondition.
    take_a = _act("take-a", pre=1, add=2, delete=1)
    take_b = _act("take-b", pre=1, add=4, delete=1)
    task = GroundTask(atoms=[("s",), ("a",), ("b",)], init=1, goal=6, actions=[take_a, take_b])
    with pytest.raises(PlanningError, match="cannot all hold together"):
        bfs(task)
