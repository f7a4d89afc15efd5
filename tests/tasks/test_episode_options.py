"""TaskConfig.fridge_pick_prob reaches the episode generator (training on fridge picks)."""

import dataclasses
import json

from rearrange.tasks.base import load_task_episodes


def _in_fridge(episodes) -> int:
    return sum("fridge_shelf" in json.dumps(dataclasses.asdict(e)) for e in episodes)


def test_fridge_pick_prob_sets_the_share_of_fridge_pick_episodes():
    assert _in_fridge(load_task_episodes("pick", None, 12, "train", 3, 1.0)) == 12
    assert _in_fridge(load_task_episodes("pick", None, 12, "train", 3, 0.0)) == 0
    default = load_task_episodes("pick", None, 12, "train", 3)
    assert default == load_task_episodes("pick", None, 12, "train", 3, None)


def _fridge_objects(episode) -> int:
    return sum(o.receptacle.startswith("fridge") for o in episode.objects)


def test_fridge_pick_others_puts_more_objects_beside_a_fridge_target():
    alone = load_task_episodes("pick", None, 12, "train", 3, 1.0)
    assert all(_fridge_objects(e) == 1 for e in alone)
    crowded = load_task_episodes("pick", None, 12, "train", 3, 1.0, fridge_pick_others=2)
    counts = [_fridge_objects(e) for e in crowded]
    assert all(1 <= c <= 3 for c in counts) and max(counts) > 1
    for e in crowded:  # the target is still the one on the shelf that the task names
        assert e.objects[e.targets[0].obj_index].receptacle.startswith("fridge")
    # the default (0 others) leaves the episodes as they were
    assert load_task_episodes("pick", None, 12, "train", 3, 1.0, fridge_pick_others=0) == alone


def test_fridge_place_prob_puts_place_goals_on_the_fridge_shelf():
    to_fridge = load_task_episodes("place", None, 10, "train", 3, fridge_place_prob=1.0)
    assert all(e.targets[0].goal_receptacle.startswith("fridge") for e in to_fridge)
    assert all(e.articulations.get("fridge", 0.0) > 1.0 for e in to_fridge)  # door open
    default = load_task_episodes("place", None, 10, "train", 3)
    assert not any(e.targets[0].goal_receptacle.startswith("fridge") for e in default)
    assert load_task_episodes("place", None, 10, "train", 3, fridge_place_prob=0.0) == default
