"""Nav and open/close reward terms, success rules, spaces and the registry, on a FakeSim."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from tasks_fakes import FakeSim, make_episode

from rearrange.skill_spec import SKILL_NAMES
from rearrange.tasks import SkillTarget, default_task_config, make_env

NAV_GO = np.array([0.0, 0.0, -1.0], dtype=np.float32)
NAV_STOP = np.array([0.0, 0.0, 1.0], dtype=np.float32)


def _env(task: str, **cfg):
    config = default_task_config(task, obs_preset=cfg.pop("obs_preset", "state"), **cfg)
    # the fake floor has no fridge carcass to hinge a door on: EE->rest in a straight line
    config.reward = dataclasses.replace(config.reward, ee_round_door=False)
    sim = FakeSim()
    env = make_env(task, config, "train", 0, sim=sim, episodes=[make_episode(task)])
    env.reset(seed=0)
    return env, sim


def _nav_step(env, sim, pose, action=NAV_GO):
    def apply(s):
        s.base = np.array(pose, dtype=float)

    sim.on_step = apply
    return env.step(action)


def test_nav_dist_term_and_no_angle_term_far_away():
    env, sim = _env("nav")  # goal (5, 0, yaw 0); robot at the origin facing yaw 0
    _, reward, term, _, info = _nav_step(env, sim, (0.3, 0.0, 0.5))
    t = info["reward_terms"]
    assert t["dist"] == pytest.approx(0.3)
    assert t["angle"] == 0.0  # 4.7 m away: outside the 3 m angle radius
    assert not term and reward == pytest.approx(sum(t.values()))


def test_nav_angle_term_inside_three_metres():
    env, sim = _env("nav")
    _nav_step(env, sim, (3.0, 0.0, 0.5))
    _, _, _, _, info = _nav_step(env, sim, (3.0, 0.0, 0.2))
    assert info["reward_terms"]["angle"] == pytest.approx(0.3)
    assert info["reward_terms"]["dist"] == pytest.approx(0.0)


def test_nav_stop_ends_episode_without_success_when_far_unmasked():
    env, sim = _env("nav", stop_mask=False)
    _, _, term, trunc, info = _nav_step(env, sim, (1.0, 0.0, 0.0), NAV_STOP)
    assert term and not trunc and not info["success"]
    assert info["reward_terms"]["success"] == 0.0


def test_nav_stop_masked_in_training_beyond_two_metres():
    env, sim = _env("nav")  # stop_mask on by default; goal 5 m from the origin
    _, _, term, _, _ = _nav_step(env, sim, (2.9, 0.0, 0.0), NAV_STOP)  # decided at 5 m: masked
    assert not term
    _, _, term, _, _ = _nav_step(env, sim, (3.1, 0.0, 0.0), NAV_STOP)  # decided at 2.1 m
    assert not term
    _, _, term, _, info = _nav_step(env, sim, (3.1, 0.0, 0.0), NAV_STOP)  # at 1.9 m: stops
    assert term and not info["success"]  # 1.9 m > the 1.5 m success radius


@pytest.mark.parametrize(
    "dist, yaw_deg, success", [(1.49, 14.0, True), (1.51, 14.0, False), (1.49, 16.0, False)]
)
def test_nav_success_thresholds(dist, yaw_deg, success):
    env, sim = _env("nav")
    pose = (5.0 - dist, 0.0, math.radians(yaw_deg))
    _nav_step(env, sim, pose)  # arrive first: the stop-mask reads the pose before the step
    _, _, term, _, info = _nav_step(env, sim, pose, NAV_STOP)
    assert term and info["success"] is success


def test_nav_at_goal_without_stop_does_not_end():
    env, sim = _env("nav")
    _, _, term, _, info = _nav_step(env, sim, (5.0, 0.0, 0.0))
    assert not term and not info["success"]


def test_nav_that_starts_holding_fails_when_the_hold_is_lost():
    config = default_task_config("nav", obs_preset="state")
    sim = FakeSim()
    episode = make_episode("nav")
    episode.extras["holding"] = 1  # carrying the lemon (nav_hold_prob episodes)
    env = make_env("nav", config, "train", 0, sim=sim, episodes=[episode])
    env.reset(seed=0)
    _, _, term, _, info = _nav_step(env, sim, (0.3, 0.0, 0.0))
    assert not term and info["reward_terms"]["drop"] == 0.0
    sim.held = None  # knocked out of the gripper on the way
    _, reward, term, _, info = _nav_step(env, sim, (0.6, 0.0, 0.0))
    t = info["reward_terms"]
    assert term and not info["success"]
    assert t["drop"] == pytest.approx(-0.5) and t["dist"] == pytest.approx(0.3)
    assert reward == pytest.approx(sum(t.values()))
    # empty-handed episodes never fail that way
    env2, sim2 = _env("nav")
    sim2.held = None
    _, _, term, _, info = _nav_step(env2, sim2, (0.3, 0.0, 0.0))
    assert not term and info["reward_terms"]["drop"] == 0.0


def test_nav_force_penalty_can_be_disabled():
    env, sim = _env("nav")
    sim.force = 50.0
    _, _, _, _, info = _nav_step(env, sim, (0.0, 0.0, 0.0))
    assert info["reward_terms"]["force"] == pytest.approx(-0.005)
    cfg = default_task_config("nav", obs_preset="state")
    cfg.reward.use_force = False
    env2 = make_env("nav", cfg, sim=sim, episodes=[make_episode("nav")])
    env2.reset()
    sim.force = 50.0
    _, _, _, _, info = _nav_step(env2, sim, (0.0, 0.0, 0.0))
    assert info["reward_terms"]["force"] == 0.0


def _art_step(env, sim, joint=None, ee_world=None, grip=-1.0, held=None, handle_held=None):
    name = env.target.articulation

    def apply(s):
        if joint is not None:
            s.arts[name] = joint
        if ee_world is not None:
            s.set_ee_world(ee_world)
        s.held = held
        s.handle_held = handle_held

    sim.on_step = apply
    action = np.zeros(8, dtype=np.float32)
    action[7] = grip
    return env.step(action)


def test_open_fridge_grasp_articulation_and_at_state_terms():
    env, sim = _env("open_fridge")
    handle = sim.handle_pos("fridge")
    _, _, _, _, info = _art_step(env, sim, ee_world=handle, grip=1.0, handle_held="fridge")
    t = info["reward_terms"]
    assert t["grasp"] == 5.0 and t["art_dist"] == 0.0
    # Marker distance: EE moved from rest (world) onto the handle.
    assert t["marker_dist"] > 0
    _, _, _, _, info = _art_step(
        env, sim, joint=0.5, ee_world=handle, grip=1.0, handle_held="fridge"
    )
    assert info["reward_terms"]["art_dist"] == pytest.approx(5.0)
    assert info["reward_terms"]["grasp"] == 0.0  # only the first grasp pays
    _, _, term, _, info = _art_step(
        env, sim, joint=1.2, ee_world=handle, grip=1.0, handle_held="fridge"
    )
    assert info["reward_terms"]["at_state"] == 5.0
    assert info["reward_terms"]["art_dist"] == pytest.approx(7.0)
    assert not term  # still holding the handle, EE away from rest


@pytest.mark.parametrize("err, success", [(0.049, True), (0.051, False)])
def test_open_fridge_success_threshold(err, success):
    env, sim = _env("open_fridge")
    _, _, term, _, info = _art_step(env, sim, joint=1.2208 - err)
    assert info["success"] is success and term is success


def test_open_cab_targets_drawer():
    env, sim = _env("open_cab")
    assert env.target.articulation == "drawer_0" and env.target.art_target == 0.45
    _, _, term, _, info = _art_step(env, sim, joint=0.45)
    assert info["success"] and term


def test_close_fridge_success_and_wrong_grasp():
    env, sim = _env("close_fridge")
    _, _, term, _, info = _art_step(env, sim, joint=0.04)
    assert info["success"] and term and info["reward_terms"]["art_dist"] == 0.0
    env.reset()
    _, _, term, _, info = _art_step(env, sim, joint=0.6, held=0)
    assert info["reward_terms"]["wrong_grasp"] == -5.0 and term and not info["success"]


@pytest.mark.parametrize("task", SKILL_NAMES)
@pytest.mark.parametrize("preset", ["depth", "state"])
@pytest.mark.parametrize("base", [False, True])
def test_observations_match_spaces(task, preset, base):
    env, sim = _env(task, obs_preset=preset, base_movement=base)
    obs, _ = env.reset()
    assert env.observation_space.contains(obs), obs
    assert ("depth" in obs) == (preset == "depth")
    nav_or_base = task == "nav" or base
    n_expected = 3 if task == "nav" else (10 if nav_or_base else 8)
    assert env.action_space.shape == (n_expected,)
    obs, *_ = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs)


def test_actions_are_clipped_and_base_only_with_base_movement():
    env, sim = _env("pick", base_movement=True)
    env.step(np.array([5.0] * 7 + [-3.0, 2.0, -2.0]))
    arm, grip, base = sim.last_action
    assert np.all(arm == 1.0) and grip == -1.0 and list(base) == [1.0, -1.0]
    env, sim = _env("pick")
    env.step(np.zeros(8))
    assert sim.last_action[2] is None
    env, sim = _env("nav")
    env.step(np.array([0.5, 0.2, -1.0]))
    arm, grip, base = sim.last_action
    assert arm is None and grip is None and list(base) == pytest.approx([0.5, 0.2])


def test_wrong_action_size_is_a_clear_error():
    env, _ = _env("pick")
    with pytest.raises(ValueError, match="expected 8"):
        env.step(np.zeros(3))


def test_unknown_task_lists_valid_tasks():
    with pytest.raises(ValueError, match="valid tasks: nav, pick, place"):
        make_env("fly", None)
    with pytest.raises(ValueError, match="unknown TaskConfig field"):
        default_task_config("pick", max_steps=3)
    with pytest.raises(ValueError, match="obs_preset"):
        default_task_config("pick", obs_preset="rgb")


def test_episodes_of_another_task_are_rejected():
    with pytest.raises(ValueError, match="not a pick/train episode"):
        make_env("pick", None, sim=FakeSim(), episodes=[make_episode("place")])


def test_relative_sensors_are_in_base_frame():
    env, sim = _env("pick")
    sim.base = np.array([0.0, 0.0, math.pi / 2])  # robot faces +y
    sim.ee_base = np.zeros(3)
    obs = env.observe()
    # Object at world (1, 0, 1): for a robot at the origin facing +y it is on its right (-y).
    np.testing.assert_allclose(obs["obj_start_sensor"], [0.0, -1.0, 1.0], atol=1e-6)
    assert isinstance(env.target, SkillTarget) and env.target.obj_index == 0


def test_render_returns_rgb_frame():
    env, _ = _env("pick")
    frame = env.render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8


def test_handle_grasp_reported_by_sim():
    config = default_task_config("open_fridge", obs_preset="state")
    config.reward = dataclasses.replace(config.reward, ee_round_door=False)  # no carcass
    sim = FakeSim()
    env = make_env("open_fridge", config, sim=sim, episodes=[make_episode("open_fridge")])
    env.reset()
    sim.handle_held = "fridge"  # far from the handle, but the sim says it holds it
    obs, _, term, _, info = env.step(np.zeros(8))
    assert info["reward_terms"]["grasp"] == 5.0 and obs["is_holding"][0] == 1.0
    sim.arts["fridge"] = 1.2208
    _, _, term, _, info = env.step(np.zeros(8))
    assert not info["success"]  # still holding the handle
    sim.handle_held = None
    _, _, term, _, info = env.step(np.zeros(8))
    assert info["success"] and term


@pytest.mark.parametrize("prob, near", [(0.0, 0), (1.0, 30), (0.5, None)])
def test_near_start_prob_mixes_close_starts_into_base_movement_episodes(prob, near):
    config = default_task_config("open_cab", obs_preset="state", base_movement=True)
    config.near_start_prob = prob
    ep = make_episode("open_cab")
    ep.extras["robot_start_far"] = [1.5, 0.5, 0.2]
    sim = FakeSim()
    env = make_env("open_cab", config, "train", 0, sim=sim, episodes=[ep])
    starts = []
    for i in range(30):
        env.reset(seed=i)
        starts.append(tuple(sim.episode.robot_start))
    n_near = starts.count(tuple(ep.robot_start))
    assert n_near + starts.count((1.5, 0.5, 0.2)) == 30
    if near is None:
        assert 5 <= n_near <= 25  # both kinds (binomial 30 x 0.5: outside 5..25 has p < 1e-4)
    else:
        assert n_near == near


def test_near_start_prob_outside_0_1_is_refused():
    with pytest.raises(ValueError, match="near_start_prob must be in"):
        default_task_config("open_cab", near_start_prob=1.5)
