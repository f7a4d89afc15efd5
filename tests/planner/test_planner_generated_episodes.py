"""Plans for episodes from the real generator (skipped while it is not importable)."""

from __future__ import annotations

import pytest

from rearrange.planner import make_plan

episodes = pytest.importorskip("rearrange.sim.episodes")
apartment = pytest.importorskip("rearrange.sim.apartment")


@pytest.mark.parametrize("task", ["tidy_house", "prepare_groceries", "set_table"])
def test_generated_hab_episodes_plan(task):
    for episode in episodes.generate_episodes(task, "train", 2, 0):
        layout = apartment.generate_layout(episode.scene_seed, episode.split)
        plan = make_plan(layout, episode)
        picks = [s.obj_index for s in plan if s.skill == "pick"]
        places = [s.obj_index for s in plan if s.skill == "place"]
        order = [t.obj_index for t in episode.targets]
        assert picks == places == order  # one pick and one place per target, in order
        for i, step in enumerate(plan):
            if step.skill == "place":
                goal = episode.targets[step.target_index].goal_receptacle
                assert step.receptacle == goal
            if step.skill == "open_cab" and task == "set_table":
                assert plan[i + 1].skill == "nav"
        assert make_plan(layout, episode, no_nav=True) == [s for s in plan if s.skill != "nav"]
