"""Pick-ready poses from the episode generator's own clearance test (real val scenes)."""

import math

import numpy as np
import pytest

from rearrange.sim.placement import best_ready_pose, in_ready_pose, placement_now
from rearrange.sim.placement.stand_poses import PLACEMENT

pytest.importorskip("mujoco")


@pytest.fixture(scope="module")
def hab_env():
    from rearrange.tasks import HabConfig, HabEnv
    from rearrange.tasks.base import load_task_episodes

    ep = load_task_episodes("tidy_house", None, 1, "val", 0)[0]
    env = HabEnv("tidy_house", HabConfig(obs_preset="state"), split="val", episodes=[ep])
    env.reset()
    yield env
    env.close()


def _front(sim, obj):
    rec = sim.layout.receptacle(sim.episode.objects[obj].receptacle)
    return sim.layout.furniture_named(rec.furniture).front_yaw


def test_ready_pose_faces_the_object_within_reach_and_passes_the_generator_check(hab_env):
    sim = hab_env.sim
    obj = hab_env.episode.targets[0].obj_index
    target = sim.object_pos(obj)[:2]
    x, y, yaw = best_ready_pose(sim, target, _front(sim, obj))
    # facing the target exactly, shoulder within the generator's reach band
    assert abs(math.remainder(math.atan2(target[1] - y, target[0] - x) - yaw, 2 * math.pi)) < 1e-9
    sx, sy = x + PLACEMENT.shoulder_x * math.cos(yaw), y + PLACEMENT.shoulder_x * math.sin(yaw)
    assert PLACEMENT.reach_min <= math.hypot(target[0] - sx, target[1] - sy) <= 1.0
    assert placement_now(sim).pose_ok(x, y, yaw)
    assert sim.set_base_pose(x, y, yaw)  # the sim accepts it
    assert in_ready_pose(sim, target, reach_max=1.0)


def test_in_ready_pose_is_false_facing_away(hab_env):
    sim = hab_env.sim
    obj = hab_env.episode.targets[0].obj_index
    target = sim.object_pos(obj)[:2]
    x, y, yaw = best_ready_pose(sim, target, _front(sim, obj))
    assert sim.set_base_pose(x, y, yaw + math.pi)
    assert not in_ready_pose(sim, target)


def test_holding_an_object_a_pose_is_still_found_for_every_goal(hab_env):
    """Over a 0.9 m counter no strict pose exists while holding; the relaxations find one."""
    sim = hab_env.sim
    for t in hab_env.episode.targets:
        rec = sim.layout.receptacle(t.goal_receptacle)
        yaw = sim.layout.furniture_named(rec.furniture).front_yaw
        pose = best_ready_pose(sim, np.asarray(t.goal_pos)[:2], yaw, held=t.obj_index)
        assert pose is not None, t.goal_receptacle
