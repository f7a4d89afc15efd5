"""The open/close skills that drive the base observe their articulation's joint relative to
the target, so a policy can tell "not yet opened" from "opened and released" wherever the
base stands; fixed-base runs leave the key out (with it fixed-base open_cab stopped learning)."""

import numpy as np
import pytest

from rearrange.tasks import default_task_config, make_env
from rearrange.tasks.sensors import task_sensors


@pytest.mark.parametrize("skill", ["open_cab", "close_cab", "open_fridge", "close_fridge"])
def test_open_close_skills_observe_the_joint_to_target(skill):
    assert "art_joint_to_target" in task_sensors(skill, "state")
    assert "art_joint_to_target" in task_sensors(skill, "state", base_movement=True)
    assert "art_joint_to_target" not in task_sensors(skill, "state", base_movement=False)
    assert "art_joint_to_target" not in task_sensors("pick", "state")


@pytest.mark.parametrize("base_movement", [False, True])
def test_a_skill_env_observes_the_key_only_with_base_movement(base_movement):
    cfg = default_task_config(
        "close_cab", obs_preset="state", num_episodes=1, base_movement=base_movement
    )
    env = make_env("close_cab", cfg)
    try:
        obs, _ = env.reset(options={"episode_index": 0})
        assert ("art_joint_to_target" in obs) is base_movement
        assert set(obs) == set(env.observation_space.spaces)
        assert env.observation_space.contains(obs)
    finally:
        env.close()


def test_the_value_is_joint_minus_target_and_follows_the_joint():
    cfg = default_task_config("open_cab", obs_preset="state", num_episodes=1, base_movement=True)
    env = make_env("open_cab", cfg)
    try:
        obs, _ = env.reset(options={"episode_index": 0})
        base = env.unwrapped
        name, target = base.target.articulation, base.target.art_target
        q0 = base.sim.articulation_pos(name)
        assert target == pytest.approx(0.45)  # Habitat's drawer "open" joint value
        np.testing.assert_allclose(obs["art_joint_to_target"], [q0 - 0.45], atol=1e-6)
        base.sim.set_articulation_pos(name, 0.3)
        obs = base.observe()
        np.testing.assert_allclose(obs["art_joint_to_target"], [0.3 - 0.45], atol=1e-5)
    finally:
        env.close()
