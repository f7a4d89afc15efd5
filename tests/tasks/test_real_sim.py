"""The skill envs and HabEnv on the real MuJoCo RearrangeSim (small episode counts)."""

from __future__ import annotations

import os

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("LP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("rearrange.sim.world")

from rearrange.sim.world import RearrangeSim  # noqa: E402
from rearrange.skill_spec import SKILL_NAMES  # noqa: E402
from rearrange.tasks import HabConfig, HabEnv, default_task_config, make_env  # noqa: E402
from rearrange.tasks.rewards import ee_to_point  # noqa: E402


@pytest.fixture(scope="module")
def sim():
    s = RearrangeSim()
    yield s
    s.close()


def _env(sim, task, preset="state", base=False, **cfg):
    config = default_task_config(task, obs_preset=preset, base_movement=base, num_episodes=1, **cfg)
    env = make_env(task, config, "train", 0, sim=sim)
    obs, _ = env.reset(seed=0)
    return env, obs


@pytest.mark.parametrize("task", SKILL_NAMES)
def test_state_observations_match_spaces(sim, task):
    env, obs = _env(sim, task, base=task == "pick")
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    for _ in range(3):
        obs, reward, term, trunc, info = env.step(rng.uniform(-1, 1, env.action_space.shape))
        assert env.observation_space.contains(obs)
        assert reward == pytest.approx(sum(info["reward_terms"].values()))
        if term or trunc:
            break


@pytest.mark.parametrize("task, base", [("pick", False), ("pick", True), ("nav", True)])
def test_depth_observations_match_spaces(sim, task, base):
    env, obs = _env(sim, task, preset="depth", base=base)
    assert env.observation_space.contains(obs)
    assert obs["depth"].shape == (128, 128, 1) and obs["depth"].max() > 0
    obs, *_ = env.step(np.zeros(env.action_space.shape))
    assert env.observation_space.contains(obs)


def test_pick_dist_term_matches_ee_motion(sim):
    env, _ = _env(sim, "pick")
    obj = env.target.obj_index
    d0 = ee_to_point(sim, sim.object_pos(obj))
    action = np.zeros(8)
    action[1] = 1.0  # shoulder lift
    action[7] = -1.0  # suction off: no grasp
    _, _, _, _, info = env.step(action)
    d1 = ee_to_point(sim, sim.object_pos(obj))
    assert abs(d1 - d0) > 1e-4
    assert info["reward_terms"]["dist"] == pytest.approx(2.0 * (d0 - d1), abs=1e-9)


def test_place_starts_holding(sim):
    env, obs = _env(sim, "place")
    assert obs["is_holding"][0] == 1.0 and sim.held_object() == env.target.obj_index


def test_nav_teleport_to_goal_and_stop_succeeds(sim):
    env, _ = _env(sim, "nav")
    x, y, yaw = env.target.nav_goal
    # The goal is the first navigable grid cell in front of the furniture; the sim's exact
    # footprint check may still call it a collision, so back off along -yaw until it is free.
    backoffs = np.arange(0.0, 0.3, 0.01)
    assert any(sim.set_base_pose(x - d * np.cos(yaw), y - d * np.sin(yaw), yaw) for d in backoffs)
    _, reward, term, _, info = env.step(np.array([0.0, 0.0, 1.0]))
    assert term and info["success"] and info["reward_terms"]["success"] == 10.0


def test_nav_stop_far_away_fails_unmasked_and_is_ignored_masked(sim):
    env, obs = _env(sim, "nav", stop_mask=False)
    assert obs["goal_polar"][0] > 2.0  # nav episodes start >= 2 m (geodesic) from the goal
    _, _, term, _, info = env.step(np.array([0.0, 0.0, 1.0]))
    assert term and not info["success"]
    env, _ = _env(sim, "nav")  # training default: the deployment stop-mask
    _, _, term, _, info = env.step(np.array([0.0, 0.0, 1.0]))
    assert not term and not info["success"]


@pytest.mark.parametrize("task", ["open_fridge", "close_cab"])
def test_articulation_at_target_with_arm_at_rest_succeeds(sim, task):
    env, _ = _env(sim, task)
    name = env.target.articulation
    sim.set_articulation_pos(name, env.target.art_target)
    release = np.zeros(8)
    release[7] = -1.0
    _, _, term, _, info = env.step(release)
    assert info["success"] and term, (sim.articulation_pos(name), info)


def test_truncation_on_real_sim(sim):
    env, _ = _env(sim, "pick", max_episode_steps=3)
    hold_still = np.zeros(8)
    hold_still[7] = -1.0
    results = [env.step(hold_still)[2:4] for _ in range(3)]
    assert results == [(False, False), (False, False), (False, True)]


def test_hab_env_observes_like_skills(sim):
    hab = HabEnv("tidy_house", HabConfig(obs_preset="state", num_episodes=1), "val", 0, sim=sim)
    info = hab.reset(seed=0)
    assert info["num_targets"] == 5
    for skill, target in (
        ("pick", hab.pick_target(0)),
        ("place", hab.place_target(0)),
        ("nav", hab.nav_target(0.0, 0.0, 0.0)),
        ("open_fridge", hab.articulation_target("open_fridge", "fridge")),
    ):
        assert hab.observation_space(skill).contains(hab.observe(skill, target))
    assert not hab.all_targets_done()
    assert hab.closed("fridge") or hab.opened("fridge")
    hab.apply_action("pick", np.zeros(8))
    assert hab.num_steps == 1 and not hab.truncated


@pytest.mark.parametrize("task", ["pick", "place", "nav"])
def test_render_with_target_overlays(sim, task):
    env, _ = _env(sim, task)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert frame.std() > 0  # not a blank image


def _ik_action(sim, goal_base: np.ndarray, grip: float) -> np.ndarray:
    """Damped-least-squares step of the EE toward `goal_base` (a scripted arm)."""
    jac = sim.arm_jacobian("base")
    err = goal_base - sim.ee_pos("base")
    dq = jac.T @ np.linalg.solve(jac @ jac.T + 1e-3 * np.eye(3), err)
    action = np.zeros(8)
    action[:7] = np.clip(dq / 0.0125, -1.0, 1.0)
    action[7] = grip
    return action


def _clearest_episode(env) -> int:
    """The episode whose target has the most room around it (starts are all within reach),
    so a straight-line scripted arm does not brush a neighbour first."""

    def clearance(e):
        target = np.array(e.objects[e.targets[0].obj_index].pos[:2])
        others = [
            np.array(o.pos[:2]) for i, o in enumerate(e.objects) if i != e.targets[0].obj_index
        ]
        return min((float(np.linalg.norm(target - o)) for o in others), default=np.inf)

    return int(np.argmax([clearance(e) for e in env.episodes]))


def test_scripted_pick_earns_pick_bonus_then_success(sim):
    from rearrange.sim.objects import object_type

    # Every spawn is within reach; pick the target with the most room around it.
    config = default_task_config("pick", obs_preset="state", num_episodes=20)
    env = make_env("pick", config, "train", 0, sim=sim)
    env.reset(options={"episode_index": _clearest_episode(env)})
    obj = env.target.obj_index
    top = object_type(env.episode.objects[obj].obj_type).half_height + 0.01
    events = []
    for _ in range(300):
        if sim.held_object() is None:
            goal = sim.to_base_frame(sim.object_pos(obj) + [0.0, 0.0, top])
        else:
            goal = sim.rest_ee_pos_base
        _, _, term, trunc, info = env.step(_ik_action(sim, goal, 1.0))
        t = info["reward_terms"]
        events += [k for k in ("pick", "drop", "wrong_pick", "constraint", "success") if t[k]]
        if term or trunc:
            break
    assert events == ["pick", "success"] and info["success"] and term


def test_base_movement_spawns_far_and_arm_only_spawns_close(sim):
    for base_movement, key in ((True, "far"), (False, "close")):
        config = default_task_config("pick", obs_preset="state", num_episodes=2)
        config.base_movement = base_movement
        env = make_env("pick", config, "val", 0, sim=sim)
        env.reset(options={"episode_index": 0})
        start = (
            env.episodes[0].extras["robot_start_far"]
            if key == "far"
            else env.episodes[0].robot_start
        )
        np.testing.assert_allclose(sim.base_pose()[:2], start[:2], atol=1e-6)
