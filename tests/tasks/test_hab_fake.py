"""HabEnv on a FakeSim: skill observations identical to the skill envs, predicates, limit."""

from __future__ import annotations

import numpy as np
import pytest
from tasks_fakes import FakeSim, make_episode

from rearrange.sim.simulator import Simulator
from rearrange.tasks import HabConfig, HabEnv, default_task_config, make_env


def test_the_fake_sim_implements_the_simulator_protocol():
    assert isinstance(FakeSim(), Simulator)


def _hab(**cfg):
    ep = make_episode("tidy_house")
    ep.split = "val"
    sim = FakeSim()
    env = HabEnv(
        "tidy_house", HabConfig(obs_preset="state", **cfg), "val", 0, sim=sim, episodes=[ep]
    )
    env.reset(seed=0)
    return env, sim


def test_observe_equals_skill_env_observation():
    hab, sim = _hab()
    # The HAB env observes the superset of a skill's sensors (those of its base-moving
    # variant); a learned skill reads the keys its checkpoint was trained with.
    pick = make_env(
        "pick",
        default_task_config("pick", obs_preset="state", base_movement=True),
        sim=FakeSim(),
        episodes=[make_episode("pick")],
    )
    pick_obs, _ = pick.reset()
    hab_obs = hab.observe("pick", hab.pick_target(0))
    assert set(hab_obs) == set(pick_obs)
    for k in pick_obs:
        np.testing.assert_array_equal(hab_obs[k], pick_obs[k])
    assert hab.observation_space("pick") == pick.observation_space
    assert hab.observation_space("place").contains(hab.observe("place", hab.place_target(0)))
    nav_t = hab.nav_target(2.0, 0.0, 0.0)
    np.testing.assert_allclose(hab.observe("nav", nav_t)["goal_polar"], [2.0, 0.0])
    art = hab.articulation_target("open_fridge", "fridge")
    assert art.art_target == pytest.approx(1.2208)
    assert hab.observation_space("open_fridge").contains(hab.observe("open_fridge", art))


def test_apply_action_decodes_per_skill_and_truncates():
    hab, sim = _hab(max_steps=3)
    d = hab.apply_action("nav", np.array([0.1, 0.0, 1.0]))
    assert d.stop and sim.last_action[0] is None
    hab.apply_action("pick", np.zeros(8))
    assert sim.last_action[2] is None and not hab.truncated
    hab.apply_action("place", np.zeros(8))
    assert hab.truncated and hab.num_steps == 3
    with pytest.raises(ValueError, match="expected 8"):
        hab.apply_action("pick", np.zeros(10))


def test_nonav_skills_drive_the_base():
    hab, sim = _hab(skill_base_movement=True)
    assert hab.action_space("pick").shape == (10,)
    hab.apply_action("pick", np.array([0] * 8 + [0.5, -0.5]))
    assert list(sim.last_action[2]) == [0.5, -0.5]


@pytest.mark.parametrize("offset, at", [(0.29, True), (0.31, False)])
def test_object_at_threshold(offset, at):
    hab, sim = _hab()
    goal = np.array(hab.episode.targets[0].goal_pos)
    sim.objects[0] = goal + [offset, 0, 0]
    assert hab.object_at(0, goal) is at
    assert hab.all_targets_done() is at
    sim.held = 0
    assert not hab.target_done(0)


def test_robot_at_opened_closed():
    hab, sim = _hab()
    assert hab.robot_at((1.99, 0.0)) and not hab.robot_at((2.01, 0.0))
    sim.arts["fridge"] = 1.19
    assert hab.opened("fridge") and not hab.closed("fridge")
    sim.arts["fridge"] = 1.16
    assert not hab.opened("fridge")
    sim.arts["drawer_0"] = 0.14
    assert hab.closed("drawer_0") and not hab.opened("drawer_0")
    sim.arts["drawer_0"] = 0.45
    assert hab.opened("drawer_0")


def test_bad_scenario_and_no_reset_errors():
    with pytest.raises(ValueError, match="valid: tidy_house"):
        HabEnv("cook_dinner", sim=FakeSim(), episodes=[])
    ep = make_episode("tidy_house")
    ep.split = "val"
    hab = HabEnv("tidy_house", HabConfig(obs_preset="state"), sim=FakeSim(), episodes=[ep])
    with pytest.raises(RuntimeError, match="reset"):
        hab.observe("pick", hab.nav_target(0, 0, 0))


def test_observe_with_a_per_skill_preset():
    hab, sim = _hab()
    obs = hab.observe("pick", hab.pick_target(0), obs_preset="depth")
    assert obs["depth"].shape == (128, 128, 1)
    assert hab.observation_space("pick", "depth").contains(obs)
