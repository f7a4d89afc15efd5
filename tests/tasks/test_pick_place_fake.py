"""Pick / place reward terms and success rules on constructed FakeSim transitions."""

from __future__ import annotations

import numpy as np
import pytest
from tasks_fakes import FakeSim, make_episode

from rearrange.tasks import default_task_config, make_env

ZERO8 = np.zeros(8, dtype=np.float32)


def _env(task: str, **cfg):
    config = default_task_config(task, obs_preset="state", **cfg)
    sim = FakeSim()
    env = make_env(task, config, "train", 0, sim=sim, episodes=[make_episode(task)])
    env.reset(seed=0)
    return env, sim


def _step(env, sim, action=ZERO8, **state):
    """Set FakeSim state inside sim.step (as if physics moved there), then env.step."""

    def apply(s):
        for k, v in state.items():
            if k == "ee_world":
                s.set_ee_world(v)
            elif k == "ee_base":
                s.ee_base = np.asarray(v, dtype=float)
            else:
                setattr(s, k, v)

    sim.on_step = apply
    return env.step(action)


def test_pick_dist_term_is_two_times_approach():
    env, sim = _env("pick")
    obj = sim.object_pos(0)
    sim.on_reset = lambda s: s.set_ee_world(obj + [0.0, 0.0, 1.0])
    env.reset()  # starts 1.0 m above the object
    _, reward, term, trunc, info = _step(env, sim, ee_world=obj + [0.0, 0.0, 0.9])
    t = info["reward_terms"]
    assert t["dist"] == pytest.approx(0.2, abs=1e-12)
    assert t["slack"] == pytest.approx(-0.005)
    assert reward == pytest.approx(sum(t.values()))
    assert not term and not trunc and not info["success"]


def test_pick_grasp_bonus_then_rest_distance():
    env, sim = _env("pick")
    rest = sim.rest_ee_pos_base
    _, _, term, _, info = _step(env, sim, held=0, ee_base=rest + [0.5, 0, 0])
    assert info["reward_terms"]["pick"] == 2.0
    assert info["reward_terms"]["dist"] == 0.0  # tracked distance switched this step
    assert not term
    _, _, term, _, info = _step(env, sim, ee_base=rest + [0.3, 0, 0])
    assert info["reward_terms"]["dist"] == pytest.approx(0.4)
    assert info["reward_terms"]["pick"] == 0.0
    assert not term


@pytest.mark.parametrize("offset, success", [(0.149, True), (0.151, False)])
def test_pick_success_threshold(offset, success):
    env, sim = _env("pick")
    rest = sim.rest_ee_pos_base
    _, _, term, _, info = _step(env, sim, held=0, ee_base=rest + [0, offset, 0])
    assert info["success"] is success and term is success
    assert info["reward_terms"]["success"] == (10.0 if success else 0.0)


def test_pick_wrong_object_ends_with_penalty():
    env, sim = _env("pick")
    _, reward, term, _, info = _step(env, sim, held=1)
    assert info["reward_terms"]["wrong_pick"] == -0.5
    assert term and not info["success"]


def test_pick_drop_ends_with_penalty():
    env, sim = _env("pick")
    _step(env, sim, held=0, ee_base=sim.rest_ee_pos_base + [0.5, 0, 0])
    _, _, term, _, info = _step(env, sim, held=None)
    assert info["reward_terms"]["drop"] == -0.5 and term


@pytest.mark.parametrize("force, expected", [(50.0, -0.005), (1000.0, -0.01), (0.0, 0.0)])
def test_force_penalty_is_capped(force, expected):
    env, sim = _env("pick")
    _, _, _, _, info = _step(env, sim, force=force)
    assert info["reward_terms"]["force"] == pytest.approx(expected)


def test_constraint_violation_penalty():
    env, sim = _env("pick")
    _, _, _, _, info = _step(env, sim, violated=True)
    assert info["reward_terms"]["constraint"] == -1.0


def test_reward_terms_have_same_keys_every_step():
    env, sim = _env("pick")
    keys = None
    for state in ({}, {"force": 3.0}, {"held": 0}, {"ee_base": sim.rest_ee_pos_base}):
        _, reward, _, _, info = _step(env, sim, **state)
        assert keys is None or set(info["reward_terms"]) == keys
        keys = set(info["reward_terms"])
        assert reward == pytest.approx(sum(info["reward_terms"].values()))


def test_truncates_at_step_limit():
    env, sim = _env("pick", max_episode_steps=5)
    for i in range(5):
        _, _, term, trunc, _ = env.step(ZERO8)
        assert not term and trunc == (i == 4)


def test_place_starts_holding_and_dist_tracks_object_to_goal():
    env, sim = _env("place")
    assert env.observe()["is_holding"][0] == 1.0
    goal = np.array([1.0, 1.0, 1.0])
    sim.on_reset = lambda s: s.objects.__setitem__(0, goal + [0.0, 0.0, 0.5])
    env.reset()
    _, _, _, _, info = _step(env, sim, objects=[goal + [0, 0, 0.4], sim.objects[1]])
    assert info["reward_terms"]["dist"] == pytest.approx(0.2)


@pytest.mark.parametrize("offset, placed", [(0.149, True), (0.151, False)])
def test_place_release_at_threshold(offset, placed):
    env, sim = _env("place")
    goal = np.array([1.0, 1.0, 1.0])
    objs = [goal + [offset, 0, 0], sim.objects[1]]
    _, _, term, _, info = _step(env, sim, held=None, objects=objs)
    t = info["reward_terms"]
    # EE is at rest (FakeSim default), so a good release is also a success.
    assert info["success"] is placed and term
    assert t["place"] == (5.0 if placed else 0.0)
    assert t["drop"] == (0.0 if placed else -0.5)


def test_place_release_then_success_when_arm_returns():
    env, sim = _env("place")
    goal = np.array([1.0, 1.0, 1.0])
    objs = [goal, sim.objects[1]]
    away = sim.rest_ee_pos_base + [0.4, 0, 0]
    _, _, term, _, info = _step(env, sim, held=None, objects=objs, ee_base=away)
    assert info["reward_terms"]["place"] == 5.0 and not term
    _, _, term, _, info = _step(env, sim, ee_base=sim.rest_ee_pos_base + [0.1, 0, 0])
    assert info["reward_terms"]["dist"] == pytest.approx(0.6)
    assert info["success"] and term and info["reward_terms"]["success"] == 10.0


def test_place_regrasp_after_release_is_wrong_pick():
    env, sim = _env("place")
    away = sim.rest_ee_pos_base + [0.4, 0, 0]
    _step(env, sim, held=None, objects=[np.array([1.0, 1.0, 1.0]), sim.objects[1]], ee_base=away)
    _, _, term, _, info = _step(env, sim, held=0)
    assert info["reward_terms"]["wrong_pick"] == -0.5 and term and not info["success"]


def test_step_limits_default_per_task():
    from rearrange.tasks import TaskConfig

    limits = {t: TaskConfig(task=t).max_episode_steps for t in ("pick", "nav", "open_cab")}
    assert limits == {"pick": 300, "nav": 400, "open_cab": 200}
    assert default_task_config("nav").reward.dist == 1.0
    assert default_task_config("pick").reward.dist == 2.0
    assert default_task_config("close_fridge").reward.art_dist == 0.0


def _settle_env(settle: float):
    from dataclasses import replace

    from rearrange.skill_spec import SUCCESS

    return _env("place", thresholds=replace(SUCCESS, place_settle=settle))


def test_place_with_settle_succeeds_only_once_the_released_object_rests():
    env, sim = _settle_env(0.005)
    goal = np.array([1.0, 1.0, 1.0])
    moving = [goal + [0.05, 0, 0], sim.objects[1]]  # let go, still moving (from its start)
    _, _, term, _, info = _step(env, sim, held=None, objects=moving)
    assert info["reward_terms"]["place"] == 5.0 and not info["success"] and not term
    _, _, term, _, info = _step(env, sim, objects=[goal + [0.02, 0, 0], sim.objects[1]])
    assert not info["success"] and not term  # moved 0.03 m this step: not at rest yet
    _, _, term, _, info = _step(env, sim, objects=[goal + [0.018, 0, 0], sim.objects[1]])
    assert info["success"] and term  # 2 mm: at rest inside the radius, the arm at rest


def test_place_with_settle_fails_an_object_that_slides_out_after_the_release():
    env, sim = _settle_env(0.005)
    goal = np.array([1.0, 1.0, 1.0])
    away = sim.rest_ee_pos_base + [0.4, 0, 0]
    _step(env, sim, held=None, objects=[goal + [0.1, 0, 0], sim.objects[1]], ee_base=away)
    _, _, term, _, info = _step(env, sim, objects=[goal + [0.16, 0, 0], sim.objects[1]])
    assert info["reward_terms"]["drop"] == -0.5 and term and not info["success"]


def test_place_without_settle_is_habitats_success_at_once():
    env, sim = _settle_env(0.0)
    goal = np.array([1.0, 1.0, 1.0])
    _, _, term, _, info = _step(env, sim, held=None, objects=[goal + [0.05, 0, 0], sim.objects[1]])
    assert info["success"] and term  # moving or not


def test_a_negative_settle_is_refused():
    with pytest.raises(ValueError, match="place_settle must be >= 0"):
        _settle_env(-0.01)
