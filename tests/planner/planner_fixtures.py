"""Hand-built Layout / Episode fixtures for the planner tests (no simulator needed)."""

from __future__ import annotations

from rearrange.sim.episode_types import Episode, ObjectPlacement, Target
from rearrange.sim.layout_types import Articulation, Box, Layout, Receptacle

OPEN_AIR_RECEPTACLES = (
    "counter_0",
    "table_0",
    "sofa_0",
    "coffee_table_0",
    "side_table_0",
    "shelf_0",
)


def _surface(x: float) -> Box:
    return Box(center=(x, 0.0, 0.4), half_size=(0.3, 0.3, 0.01))


def make_layout() -> Layout:
    recs = [Receptacle(n, n, _surface(i)) for i, n in enumerate(OPEN_AIR_RECEPTACLES)]
    recs += [
        Receptacle("fridge_shelf_0", "fridge", _surface(7), container="fridge"),
        Receptacle("drawer_0_inside", "cabinet_0", _surface(8), container="drawer_0"),
        Receptacle("drawer_1_inside", "cabinet_0", _surface(9), container="drawer_1"),
    ]
    arts = [
        Articulation("fridge", "hinge", "fridge", 0.0, 1.2208, (7.0, 0.3, 1.0)),
        Articulation("drawer_0", "slide", "cabinet_0", 0.0, 0.45, (8.0, 0.3, 0.6)),
        Articulation("drawer_1", "slide", "cabinet_0", 0.0, 0.45, (9.0, 0.3, 0.4)),
    ]
    return Layout(
        seed=0, split="train", bounds=(0, 0, 10, 10), receptacles=recs, articulations=arts
    )


def make_episode(
    task: str,
    starts: list[str],
    goals: list[str | None],
    articulations: dict[str, float] | None = None,
) -> Episode:
    """Object i starts on starts[i]; goals[i] is its goal receptacle (None: clutter)."""
    objects = [
        ObjectPlacement("cracker_box", (float(i), 0.0, 0.5), (1.0, 0.0, 0.0, 0.0), r)
        for i, r in enumerate(starts)
    ]
    targets = [Target(i, (float(i), 0.5, 0.5), g) for i, g in enumerate(goals) if g is not None]
    return Episode(
        episode_id=f"{task}_test",
        task=task,
        split="train",
        scene_seed=0,
        robot_start=(5.0, 5.0, 0.0),
        objects=objects,
        targets=targets,
        articulations=dict(articulations or {}),
    )
