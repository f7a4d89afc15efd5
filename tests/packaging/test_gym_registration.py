"""`gymnasium.make("rearrange/Pick-v0", ...)`: registered on `import rearrange` without the
simulator, the same env as `rearrange.tasks.make_env`, and passes gymnasium's env checker."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import rearrange  # noqa: F401  (registers the ids)
from rearrange.gym_envs import GYM_IDS, gym_id
from rearrange.skill_spec import SKILL_NAMES

os.environ.setdefault("MUJOCO_GL", "egl")
REPO = Path(__file__).resolve().parents[2]

IDS = [f"rearrange/{name}" for name in GYM_IDS]
# check_env warns about unbounded Box observations (positions, joint velocities); accepted.
ACCEPTED_WARNINGS = ("infinity",)


def test_every_skill_task_has_an_id():
    assert sorted(GYM_IDS.values()) == sorted(SKILL_NAMES)
    assert gym_id("open_fridge") == "rearrange/OpenFridge-v0"
    assert all(env_id in gymnasium.registry for env_id in IDS)


def test_import_registers_without_loading_the_simulator():
    code = (
        "import sys, gymnasium, rearrange\n"
        "ids = [i for i in gymnasium.registry if i.startswith('rearrange/')]\n"
        "loaded = [m for m in ('mujoco', 'rearrange.tasks', 'rearrange.sim.world', 'torch')"
        " if m in sys.modules]\n"
        "print(len(ids), loaded)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "7 []"
    assert proc.stderr == ""


def _make(env_id: str, **kwargs):
    return gymnasium.make(env_id, obs_preset="state", num_episodes=2, **kwargs)


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_passes(env_id):
    env = _make(env_id)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env.unwrapped)
    finally:
        env.close()
    other = [
        str(w.message) for w in caught if not any(a in str(w.message) for a in ACCEPTED_WARNINGS)
    ]
    assert not other, other


@pytest.mark.parametrize("env_id", IDS)
def test_kwargs_reach_the_task_config(env_id):
    from rearrange.tasks import default_task_config

    task = GYM_IDS[env_id.split("/")[1]]
    env = _make(env_id, base_movement=True, split="val", seed=3)
    try:
        inner = env.unwrapped
        expected = default_task_config(task, base_movement=True, obs_preset="state", num_episodes=2)
        assert inner.config == expected
        assert inner.split == "val"
        assert env.observation_space == inner.observation_space
        assert env.action_space == inner.action_space
    finally:
        env.close()


def test_same_env_as_make_env():
    from rearrange.tasks import default_task_config, make_env

    kwargs = dict(base_movement=True, obs_preset="state", num_episodes=2)
    ours = gymnasium.make("rearrange/Pick-v0", split="val", seed=5, **kwargs)
    theirs = make_env("pick", default_task_config("pick", **kwargs), "val", 5)
    try:
        assert type(ours.unwrapped) is type(theirs)
        assert ours.unwrapped.config == theirs.config
        assert ours.observation_space == theirs.observation_space
        assert ours.action_space == theirs.action_space
        obs_a, info_a = ours.reset(seed=11)
        obs_b, info_b = theirs.reset(seed=11)
        assert info_a["episode_id"] == info_b["episode_id"]
        action = np.zeros(theirs.action_space.shape, dtype=theirs.action_space.dtype)
        action[0] = 0.5
        for _ in range(3):
            obs_a, rew_a, *_ = ours.step(action)
            obs_b, rew_b, *_ = theirs.step(action)
            assert rew_a == rew_b
            for key in obs_b:
                np.testing.assert_array_equal(obs_a[key], obs_b[key])
    finally:
        ours.close()
        theirs.close()


def test_render_modes():
    env = _make("rearrange/Place-v0", render_mode="rgb_array")
    try:
        env.reset(seed=0)
        frame = env.render()
        assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8
    finally:
        env.close()
    # gymnasium warns about the unknown mode, then the entry point refuses it.
    with pytest.warns(UserWarning, match="render_mode"), pytest.raises(ValueError, match="ansi"):
        gymnasium.make("rearrange/Place-v0", render_mode="ansi", disable_env_checker=True)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", IDS)
def test_check_env_passes_with_depth(env_id):
    env = gymnasium.make(env_id, num_episodes=2)
    try:
        check_env(env.unwrapped)
    finally:
        env.close()
