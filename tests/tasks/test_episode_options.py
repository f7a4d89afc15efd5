"""TaskConfig's episode generation options (`task.episodes`, the generator's own
`EpisodeGenConfig`) reach the generator (training on fridge picks and fridge goals), through
`load_task_episodes(..., gen)`."""

import dataclasses
import json

import numpy as np
import pytest

from rearrange.sim.episodes import EpisodeGenConfig
from rearrange.tasks import TaskConfig, default_task_config
from rearrange.tasks.base import load_task_episodes


def _eps(task, n, overrides=None):
    gen = EpisodeGenConfig(**overrides) if overrides is not None else None
    return load_task_episodes(task, None, n, "train", 3, gen)


def _in_fridge(episodes) -> int:
    return sum("fridge_shelf" in json.dumps(dataclasses.asdict(e)) for e in episodes)


def test_fridge_pick_prob_sets_the_share_of_fridge_pick_episodes():
    assert _in_fridge(_eps("pick", 12, {"fridge_pick_prob": 1.0})) == 12
    assert _in_fridge(_eps("pick", 12, {"fridge_pick_prob": 0.0})) == 0
    assert _eps("pick", 12) == _eps("pick", 12, {})


def _fridge_objects(episode) -> int:
    return sum(o.receptacle.startswith("fridge") for o in episode.objects)


def test_fridge_pick_others_puts_more_objects_beside_a_fridge_target():
    alone = _eps("pick", 12, {"fridge_pick_prob": 1.0})
    assert all(_fridge_objects(e) == 1 for e in alone)
    crowded = _eps("pick", 12, {"fridge_pick_prob": 1.0, "fridge_pick_others": 2})
    counts = [_fridge_objects(e) for e in crowded]
    assert all(1 <= c <= 3 for c in counts) and max(counts) > 1
    for e in crowded:  # the target is still the one on the shelf that the task names
        assert e.objects[e.targets[0].obj_index].receptacle.startswith("fridge")
    # the default (0 others) leaves the episodes as they were
    assert _eps("pick", 12, {"fridge_pick_prob": 1.0, "fridge_pick_others": 0}) == alone


def test_fridge_place_prob_puts_place_goals_on_the_fridge_shelf():
    to_fridge = _eps("place", 10, {"fridge_place_prob": 1.0})
    assert all(e.targets[0].goal_receptacle.startswith("fridge") for e in to_fridge)
    assert all(e.articulations.get("fridge", 0.0) > 1.0 for e in to_fridge)  # door open
    default = _eps("place", 10)
    assert not any(e.targets[0].goal_receptacle.startswith("fridge") for e in default)
    assert _eps("place", 10, {"fridge_place_prob": 0.0}) == default


def test_task_config_holds_the_generators_options_once():
    # one owner: TaskConfig mirrors no EpisodeGenConfig field, it holds the config whole
    gen_fields = set(EpisodeGenConfig.__dataclass_fields__)
    assert not gen_fields & set(TaskConfig.__dataclass_fields__)
    assert default_task_config("pick").episodes == EpisodeGenConfig()
    # the names without `episodes.` (TaskConfig fields before) set the generator's options
    cfg = default_task_config("pick", fridge_pick_prob=0.4, fridge_place_prob=0.0)
    assert cfg.episodes == EpisodeGenConfig(fridge_pick_prob=0.4, fridge_place_prob=0.0)
    both = default_task_config("pick", episodes=cfg.episodes, work_noise_scale=3.0)
    assert (both.episodes.fridge_pick_prob, both.episodes.work_noise_scale) == (0.4, 3.0)


def test_an_unknown_generation_option_is_one_clear_error():
    with pytest.raises(ValueError, match=r"unknown TaskConfig field\(s\) \['fridge_prob'\]"):
        default_task_config("pick", fridge_prob=1.0)


def _start_reach(episode) -> float:
    """Shoulder reach from the start pose to the nearest object (not the target)."""
    from rearrange.sim.placement import PlacementConfig, shoulder_reach

    t = episode.targets[0].obj_index
    return min(
        shoulder_reach(episode.robot_start, o.pos[:2], PlacementConfig().shoulder_x)
        for i, o in enumerate(episode.objects)
        if i != t
    )


def test_nav_stand_start_prob_starts_nav_in_front_of_another_object():
    from rearrange.sim.episodes import default_layout_fn, scene_assets
    from rearrange.sim.placement import PlacementConfig

    stand = _eps("nav", 10, {"nav_stand_start_prob": 1.0})
    anywhere = _eps("nav", 10)
    assert _eps("nav", 10, {"nav_stand_start_prob": 0.0}) == anywhere
    # stand starts have another object within the arm's reach band (0.85 m) but where no
    # such spawn is 2 m from the goal; starts from anywhere rarely do
    near = [_start_reach(e) <= 0.85 for e in stand]
    assert sum(near) >= 9
    assert sum(_start_reach(e) <= 0.85 for e in anywhere) <= 3
    for e in stand:  # still at least nav_min_dist (2 m) geodesic from the goal
        radius = PlacementConfig().robot_radius
        navmap = scene_assets(e.scene_seed, e.split, default_layout_fn, radius)[1]
        d = navmap.geodesic_distance(e.robot_start[:2], e.extras["nav_goal"][:2])
        assert d >= 2.0 - 0.05


def _start_geodesic(e) -> float:
    from rearrange.sim.episodes import default_layout_fn, scene_assets
    from rearrange.sim.placement import PlacementConfig

    navmap = scene_assets(e.scene_seed, e.split, default_layout_fn, PlacementConfig().robot_radius)[
        1
    ]
    return navmap.geodesic_distance(e.robot_start[:2], e.extras["nav_goal"][:2])


def test_nav_near_start_prob_starts_nav_within_2m_of_the_goal():
    default = _eps("nav", 8)
    assert _eps("nav", 8, {"nav_near_start_prob": 0.0}) == default
    assert all(_start_geodesic(e) >= 2.0 - 0.05 for e in default)
    near = _eps("nav", 8, {"nav_near_start_prob": 1.0})
    dists = [_start_geodesic(e) for e in near]
    assert all(d < 2.0 + 0.05 for d in dists), dists
    # any heading: not all facing the goal as the far spawns near a target do
    yaws = {round(e.robot_start[2], 1) for e in near}
    assert len(yaws) >= 4


def test_nav_hold_prob_starts_nav_carrying_another_object_at_the_carry_pose():
    from rearrange.sim.robot import CARRY_EE_OFFSET
    from rearrange.tasks import make_env

    default = _eps("nav", 4)
    assert _eps("nav", 4, {"nav_hold_prob": 0.0}) == default
    assert all("holding" not in e.extras for e in default)
    held = _eps("nav", 4, {"nav_hold_prob": 1.0})
    for e in held:
        h = e.extras["holding"]
        assert h != e.targets[0].obj_index and len(e.extras["arm_start"]) == 7
    # in the sim: the object is in the gripper and the EE at rest + CARRY_EE_OFFSET
    config = default_task_config("nav", obs_preset="state")
    env = make_env("nav", config, "train", 0, episodes=held[:1])
    env.reset()
    sim = env.sim
    assert sim.held_object() == held[0].extras["holding"]
    ee = sim.ee_pos("base") - sim.rest_ee_pos_base
    assert np.allclose(ee, CARRY_EE_OFFSET, atol=0.015), ee


def test_nav_fridge_prob_puts_nav_targets_on_the_open_fridge_shelf():
    to_fridge = _eps("nav", 8, {"nav_fridge_prob": 1.0})
    for e in to_fridge:
        assert e.objects[e.targets[0].obj_index].receptacle.startswith("fridge")
        assert e.articulations.get("fridge", 0.0) > 1.0  # the door open
        assert len(e.extras["nav_goal"]) == 3
    default = _eps("nav", 8)
    assert not any(
        e.objects[e.targets[0].obj_index].receptacle.startswith("fridge") for e in default
    )
    assert _eps("nav", 8, {"nav_fridge_prob": 0.0}) == default


def test_work_noise_scale_spreads_open_close_starts_around_the_work_pose():
    import math

    from rearrange.sim.apartment import generate_layout
    from rearrange.sim.placement import articulation_work_pose

    def offsets(overrides):
        out = []
        for e in _eps("open_cab", 12, overrides):
            layout = generate_layout(e.scene_seed, e.split)
            art = next(a for a in layout.articulations if a.name == e.extras["articulation"])
            out.append(math.dist(articulation_work_pose(layout, art)[:2], e.robot_start[:2]))
        return out

    # default: within the drawer's ±4 cm per axis (a diagonal of 5.7 cm)
    assert max(offsets(None)) <= 0.04 * math.sqrt(2) + 1e-6
    wide = offsets({"work_noise_scale": 6.0})
    assert max(wide) <= 0.24 * math.sqrt(2) + 1e-6 and sum(d > 0.1 for d in wide) >= 4
    assert _eps("open_cab", 6, {"work_noise_scale": 1.0}) == _eps("open_cab", 6)
