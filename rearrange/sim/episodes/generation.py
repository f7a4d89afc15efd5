"""Deterministic episode generation over pools of shared scenes (see `rearrange.sim.episodes`)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from rearrange.sim.episode_types import SPLITS, Episode
from rearrange.sim.episodes.builders import BUILDERS
from rearrange.sim.episodes.config import (
    TASKS,
    EpisodeError,
    EpisodeGenConfig,
    LayoutFn,
    check_task_split,
)
from rearrange.sim.episodes.scene_draw import SceneDraw
from rearrange.sim.episodes.start_check import start_check
from rearrange.sim.layout_types import Layout
from rearrange.sim.navmap import NavMap
from rearrange.sim.placement import Footprints, NoPlacement

SCENE_SEEDS = {"train": 1000, "val": 100}  # scene seeds are range(SCENE_SEEDS[split])
EPISODES_PER_BLOCK = 10  # consecutive episodes sharing one scene pool
SCENES_PER_BLOCK = 4  # scenes in a block's pool
_POOL_SALT = 7919


def default_layout_fn(seed: int, split: str) -> Layout:
    from rearrange.sim.apartment import generate_layout

    return generate_layout(seed, split)


_CACHE_SIZE = 64
_SCENES: OrderedDict[tuple, tuple[Layout, NavMap, Footprints]] = OrderedDict()


def scene_assets(
    scene_seed: int, split: str, layout_fn: LayoutFn, robot_radius: float
) -> tuple[Layout, NavMap, Footprints]:
    """(layout, NavMap, sim footprints) of a scene, from an LRU cache shared by all calls
    (the NavMap's distance fields are deterministic, so sharing never changes results)."""
    key = (layout_fn, int(scene_seed), split, float(robot_radius))
    if key in _SCENES:
        _SCENES.move_to_end(key)
        return _SCENES[key]
    layout = layout_fn(scene_seed, split)
    assets = (layout, NavMap(layout, robot_radius=robot_radius), Footprints(layout))
    _SCENES[key] = assets
    if len(_SCENES) > _CACHE_SIZE:
        _SCENES.popitem(last=False)
    return assets


def scene_pool(seed: int, split: str, index: int) -> list[int]:
    """Scene seeds the episode `index` draws from: its block's pool (task-independent)."""
    block = index // EPISODES_PER_BLOCK
    rng = np.random.default_rng([_POOL_SALT, seed, SPLITS.index(split), block])
    n = SCENE_SEEDS[split]
    return [int(v) for v in rng.choice(n, size=min(SCENES_PER_BLOCK, n), replace=False)]


def generate_episodes(
    task: str,
    split: str,
    n: int,
    seed: int,
    *,
    layout_fn: LayoutFn | None = None,
    config: EpisodeGenConfig | None = None,
    check_starts: bool = True,
) -> list[Episode]:
    """`n` episodes of `task` on `split` scenes, identical for identical arguments.

    `layout_fn(scene_seed, split)` defaults to `apartment.generate_layout` (tests pass
    hand-made layouts). With `check_starts`, a draw whose start poses put the robot or its
    held object deeper than the sim's block depth into static geometry (measured in the
    MuJoCo scene, `start_check`) is redrawn on another scene like any failed draw.
    """
    check_task_split(task, split)
    if n < 0:
        raise EpisodeError(f"number of episodes must be >= 0, got {n}")
    cfg = config or EpisodeGenConfig()
    fn = layout_fn or default_layout_fn
    return [_generate_one(task, split, seed, i, fn, cfg, check_starts) for i in range(n)]


def _generate_one(
    task: str, split: str, seed: int, index: int, layout_fn: LayoutFn, cfg, check_starts: bool
) -> Episode:
    rng = np.random.default_rng([seed, TASKS.index(task), SPLITS.index(split), index])
    pool = scene_pool(seed, split, index)
    last = ""
    for attempt in range(cfg.max_attempts):
        if attempt < 2 * len(pool):  # the block's pool first, then any scene of the split
            scene_seed = pool[int(rng.integers(len(pool)))]
        else:
            scene_seed = int(rng.integers(SCENE_SEEDS[split]))
        layout, navmap, footprints = scene_assets(scene_seed, split, layout_fn, cfg.robot_radius)
        sc = SceneDraw(layout, navmap, rng, cfg, footprints)
        try:
            start, targets, extras = BUILDERS[task](sc, task)
        except NoPlacement as err:
            last = str(err)
            continue
        episode = Episode(
            episode_id=f"{task}-{split}-{index:04d}",
            task=task,
            split=split,
            scene_seed=scene_seed,
            robot_start=start,
            objects=sc.objects,
            targets=targets,
            articulations=sc.articulation_values(),
            extras=extras,
        )
        if check_starts:  # draws nothing from rng: episodes that pass are unchanged
            last = start_check().problem(episode, layout)
            if last:
                continue
        return episode
    raise EpisodeError(
        f"could not generate {task} episode {index} of split {split} in {cfg.max_attempts} scenes "
        f"(last problem: {last}); check the layouts have the receptacles this task needs"
    )
