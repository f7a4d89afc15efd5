"""`other_obj_sensor` (pick with base movement): the nearest object that is neither the
target nor held, relative to the EE in the base frame, capped at OTHER_OBJ_MAX_RANGE."""

import math

import numpy as np
import pytest
from tasks_fakes import FakeSim

from rearrange.tasks import default_task_config, make_env
from rearrange.tasks.sensors import OTHER_OBJ_MAX_RANGE, nearest_other_object, task_sensors


def _sim(objects, yaw=0.0, held=None):
    sim = FakeSim()
    sim.objects = [np.array(p, dtype=float) for p in objects]
    sim.base = np.array([1.0, 2.0, yaw])
    sim.held = held
    return sim


def test_only_pick_with_base_movement_observes_it():
    assert "other_obj_sensor" in task_sensors("pick", "state", base_movement=True)
    assert "other_obj_sensor" in task_sensors("pick", "state_rays", base_movement=True)
    assert "other_obj_sensor" not in task_sensors("pick", "state", base_movement=False)
    assert "other_obj_sensor" not in task_sensors("place", "state", base_movement=True)


def test_nearest_non_target_object_in_the_base_frame():
    # base at (1, 2) facing +y (yaw 90°): world +y is base +x, world -x is base +y.
    ee_base = np.array([0.5, 0.0, 1.0])  # EE at world (1, 2.5, 1)
    objects = [(1.0, 2.6, 1.0), (1.2, 2.5, 1.0), (0.7, 2.5, 1.1), (1.0, 3.4, 1.0)]
    sim = _sim(objects, yaw=math.pi / 2)
    # object 0 (the target, 0.1 m) is nearest, skipped; then 1 (0.2 m), 2 (0.32 m), 3 (0.9 m)
    out = nearest_other_object(sim, 0, ee_base)
    # object 1: world offset (+0.2, 0, 0) = base (0, -0.2, 0)
    np.testing.assert_allclose(out, [0.0, -0.2, 0.0], atol=1e-9)
    # holding object 1: the next nearest is 2, world offset (-0.3, 0, +0.1) = base (0, 0.3, 0.1)
    sim.held = 1
    np.testing.assert_allclose(nearest_other_object(sim, 0, ee_base), [0.0, 0.3, 0.1], atol=1e-9)


def test_far_objects_read_their_direction_at_the_cap_and_none_reads_straight_up():
    ee_base = np.array([0.5, 0.0, 1.0])  # yaw 0: EE at world (1.5, 2, 1)
    sim = _sim([(1.5, 2.0, 1.0), (4.5, 6.0, 1.0)])  # other object 3, 4 m off: 5 m away
    out = nearest_other_object(sim, 0, ee_base)
    np.testing.assert_allclose(out, [0.6 * OTHER_OBJ_MAX_RANGE, 0.8 * OTHER_OBJ_MAX_RANGE, 0.0])
    alone = _sim([(1.5, 2.0, 1.0)])
    np.testing.assert_allclose(nearest_other_object(alone, 0, ee_base), [0, 0, OTHER_OBJ_MAX_RANGE])


def test_the_real_pick_env_observes_it_and_it_follows_the_objects():
    cfg = default_task_config("pick", obs_preset="state", num_episodes=2, base_movement=True)
    env = make_env("pick", cfg, split="val", seed=0)
    try:
        obs, _ = env.reset(options={"episode_index": 0})
        assert env.observation_space.contains(obs)
        base = env.unwrapped
        sim, target = base.sim, base.target.obj_index
        ee_base = np.asarray(sim.ee_pos("base"))
        others = [i for i in range(sim.num_objects) if i != target]
        assert others, "pick episodes place other objects"
        rel = [np.asarray(sim.to_base_frame(sim.object_pos(i))) - ee_base for i in others]
        want = min(rel, key=lambda r: float(r @ r))
        if np.linalg.norm(want) > OTHER_OBJ_MAX_RANGE:
            want = want * OTHER_OBJ_MAX_RANGE / np.linalg.norm(want)
        np.testing.assert_allclose(obs["other_obj_sensor"], want, atol=1e-5)
        assert np.linalg.norm(obs["other_obj_sensor"]) <= OTHER_OBJ_MAX_RANGE + 1e-6
    finally:
        env.close()


@pytest.mark.parametrize("base_movement", [False, True])
def test_the_fixed_base_pick_space_is_unchanged(base_movement):
    cfg = default_task_config(
        "pick", obs_preset="state", num_episodes=1, base_movement=base_movement
    )
    env = make_env("pick", cfg)
    try:
        obs, _ = env.reset(options={"episode_index": 0})
        assert ("other_obj_sensor" in obs) is base_movement
    finally:
        env.close()
