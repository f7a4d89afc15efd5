"""The `state_rays` obs preset (nav's CPU profile): spaces and observations on the real sim,
the same nav observation in the skill env and the HAB env, state plus the arm scan for the
other skills, the state-only policy, the eval runner's preset inference and the config choice."""

from __future__ import annotations

import os

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("LP_NUM_THREADS", "1")

from types import SimpleNamespace  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rearrange.config import compose_train_config  # noqa: E402
from rearrange.sim.world import RearrangeSim  # noqa: E402
from rearrange.skill_spec import skill_def  # noqa: E402
from rearrange.tasks import HabConfig, HabEnv, default_task_config, make_env  # noqa: E402
from rearrange.tasks.config import OBS_PRESETS  # noqa: E402
from rearrange.tasks.sensors import (  # noqa: E402
    RAY_COUNT,
    RAY_MAX_RANGE,
    task_observation_space,
)


@pytest.fixture(scope="module")
def sim():
    s = RearrangeSim()
    yield s
    s.close()


def _nav_env(sim, preset="state_rays"):
    config = default_task_config("nav", obs_preset=preset, num_episodes=2)
    return make_env("nav", config, "train", 0, sim=sim)


def test_state_rays_is_a_preset_of_tasks_and_hab():
    assert "state_rays" in OBS_PRESETS
    assert HabConfig(obs_preset="state_rays").obs_preset == "state_rays"
    with pytest.raises(ValueError, match="state_rays"):
        default_task_config("nav", obs_preset="rays")  # the message lists the presets


def test_nav_observations_match_the_space_while_driving(sim):
    env = _nav_env(sim)
    space = env.observation_space
    assert set(space.spaces) == {*skill_def("nav").sensors, "rays"}
    assert space["rays"].shape == (RAY_COUNT,) and (space["rays"].low == 0).all()
    assert (space["rays"].high == 1).all()
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    scans = []
    for _ in range(20):
        assert space.contains(obs) and obs["rays"].shape == (RAY_COUNT,)
        # The base (radius 0.3 m) never overlaps an obstacle: every range is beyond it.
        assert obs["rays"].min() * RAY_MAX_RANGE >= sim.config.robot_radius - 1e-6
        scans.append(obs["rays"])
        action = np.array([rng.uniform(0.3, 1.0), rng.uniform(-1, 1), -1.0])  # never stop
        obs, *_ = env.step(action)
    assert np.ptp(np.array(scans), axis=0).max() > 0.01  # the scan moves with the robot
    # The scan is the sim's obstacle_ranges, normalised, in the robot frame.
    from rearrange.tasks.sensors import RAY_ANGLES

    want = sim.obstacle_ranges(RAY_ANGLES, RAY_MAX_RANGE) / RAY_MAX_RANGE
    assert obs["rays"] == pytest.approx(want.astype(np.float32))


def test_state_rays_adds_only_the_arm_scan_for_the_other_skills(sim):
    for task in ("pick", "place", "open_fridge"):
        rays, state = (
            task_observation_space(task, "state_rays"),
            task_observation_space(task, "state"),
        )
        assert set(rays.spaces) - set(state.spaces) == {"arm_rays"}  # tests/test_arm_scan.py
        assert all(rays[k] == state[k] for k in state.spaces)
    config = default_task_config("pick", obs_preset="state_rays", num_episodes=1)
    env = make_env("pick", config, "train", 0, sim=sim)
    obs, _ = env.reset(seed=0)
    assert "rays" not in obs and env.observation_space.contains(obs)


def test_hab_env_builds_the_nav_skill_envs_observation(sim):
    hab = HabEnv("tidy_house", HabConfig(obs_preset="state_rays", num_episodes=1), "val", 0,
                 sim=sim)  # fmt: skip
    hab.reset(seed=0)
    nav = _nav_env(sim)  # same sim object: the same state, seen by both envs
    assert hab.observation_space("nav") == nav.observation_space
    x, y, _ = sim.base_pose()
    target = hab.nav_target(x + 3.0, y - 1.0, 0.7)
    nav.target = target
    for k in range(6):
        from_hab, from_skill = hab.observe("nav", target), nav.observe()
        assert from_hab.keys() == from_skill.keys()
        for key in from_hab:
            np.testing.assert_array_equal(from_hab[key], from_skill[key], err_msg=key)
        hab.apply_action("nav", np.array([1.0, 0.4 * (k % 3 - 1), -1.0]))
    # A state-trained manipulation skill reads exactly its state observation in that env
    # (its checkpoint's keys; the env also serves the arm scan of a state_rays one).
    pick = hab.pick_target(0)
    a, b = hab.observe("pick", pick), hab.observe("pick", pick, obs_preset="state")
    assert set(a) - set(b) == {"arm_rays"} and all(np.array_equal(a[k], b[k]) for k in b)


def test_state_policy_flattens_the_rays_into_its_vector():
    import torch

    from rearrange.models import build_policy

    cfg = compose_train_config("nav", ["profile=cpu"])
    space = task_observation_space("nav", cfg.task.obs_preset)
    from rearrange.tasks.actions import action_space

    policy = build_policy(space, action_space("nav", True), cfg.model)
    assert policy.layout.vector_keys == tuple(sorted(space.spaces))
    assert policy.layout.vector_size == 7 + 2 + 1 + 4 + RAY_COUNT  # joint, polar, heading, dir
    obs = {k: torch.as_tensor(v.sample())[None] for k, v in space.spaces.items()}
    _, action, _, _ = policy.act(
        obs, policy.initial_hidden(1), torch.zeros(1, 3), torch.zeros(1, dtype=torch.bool)
    )
    assert action.shape == (1, 3)


def _skill(space, base=None):
    return SimpleNamespace(observation_space=space, layout=SimpleNamespace(base=base))


def test_eval_runner_infers_state_rays_from_a_learned_nav():
    from rearrange.eval.runner import env_settings
    from rearrange.skills import SkillError

    nav = _skill(task_observation_space("nav", "state_rays"))
    pick = _skill(task_observation_space("pick", "state"))
    assert env_settings({"nav": nav, "pick": pick}, False) == ("state_rays", 128, False)
    assert env_settings({"nav": nav}, False)[0] == "state_rays"
    assert env_settings({"pick": pick}, False)[0] == "state"
    # A depth skill may join state ones (each observes its own preset); the depth image has
    # the depth skills' size, which must be one.
    depth_pick = _skill(task_observation_space("pick", "depth", 64))
    assert env_settings({"nav": nav, "pick": depth_pick}, False) == ("depth", 64, False)
    depth_place = _skill(task_observation_space("place", "depth", 128))
    with pytest.raises(SkillError, match=r"different depth sizes \(\[64, 128\]\)"):
        env_settings({"pick": depth_pick, "place": depth_place}, False)


def test_cpu_profile_gives_nav_the_rays_and_leaves_the_rest():
    assert compose_train_config("nav", ["profile=cpu"]).task.obs_preset == "state_rays"
    assert compose_train_config("nav").task.obs_preset == "depth"
    assert compose_train_config("nav", ["profile=paper"]).task.obs_preset == "depth"
    assert compose_train_config("pick", ["profile=cpu"]).task.obs_preset == "state"
    assert compose_train_config("place", ["profile=cpu"]).task.obs_preset == "state"
    # The CLI can still ask for plain state on the CPU profile.
    cfg = compose_train_config("nav", ["profile=cpu", "task.obs_preset=state"])
    assert cfg.task.obs_preset == "state" and cfg.model.backbone == "none"


def test_cpu_nav_defaults_reproduce_the_shipped_nav_settings():
    """`train_skill nav --profile cpu` with no overrides trains what the shipped nav was
    trained with (its checkpoint records the composed model and task configs)."""
    from rearrange.runtime.checkpoint import SkillCheckpoint
    from rearrange.skills.pretrained import pretrained_path

    cfg = compose_train_config("nav", ["profile=cpu"])
    assert cfg.task.obs_preset == "state_rays" and cfg.task.num_episodes == 300
    assert list(cfg.model.state_mlp_hidden) == [128, 128] and cfg.model.rnn_hidden_size == 128
    assert cfg.run.total_steps == 7_000_000
    ckpt = SkillCheckpoint.load(pretrained_path("nav"))
    assert ckpt.obs_preset == cfg.task.obs_preset
    for key in ("state_mlp_hidden", "rnn_hidden_size", "rnn_layers", "action_mean_init"):
        assert list(np.atleast_1d(getattr(cfg.model, key))) == list(
            np.atleast_1d(getattr(ckpt.model, key))
        ), key
    assert ckpt.config["task"]["num_episodes"] == cfg.task.num_episodes
    # trained to stop within 0.5 m (the HAB chain's pick needs it), judged at Habitat's 1.5 m
    assert ckpt.success_radius == cfg.task.thresholds.nav_dist == 0.5
    assert default_task_config("nav").thresholds.nav_dist == 1.5
    if ckpt.config.get("pretrained_weights"):  # fine-tuned from a run on this schedule
        assert 0 < ckpt.num_steps < cfg.run.total_steps
    else:
        assert ckpt.num_steps >= cfg.run.total_steps
