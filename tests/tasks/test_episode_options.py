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
