"""Starts along the oracle's solution (`TaskConfig.oracle_start_prob`,
rearrange/skills/start_curriculum.py): off by default and then invisible; on, a training
episode starts partway along the scripted skill's run of it, rebased (step count 0, force
meter reset, reward trackers at the start state, one-time bonuses kept as earned); an
ended prefix is never handed over; bad values fail in one line; the trainers build it."""

from __future__ import annotations

import os

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("LP_NUM_THREADS", "1")

import math  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("rearrange.sim.world")

from rearrange.runtime.env_worker import TaskEnvFactory  # noqa: E402
from rearrange.skills.registry import make_oracle  # noqa: E402
from rearrange.skills.start_curriculum import (  # noqa: E402
    PREFIX_STEPS,
    OracleStartEnvFactory,
    OracleStartWrapper,
)
from rearrange.tasks import default_task_config, make_env  # noqa: E402

TASK = "open_cab"
DIST_TERMS = ("art_dist", "marker_dist", "ee_dist")


def _config(**over):
    return default_task_config(TASK, obs_preset="state", num_episodes=4, **over)


def _assert_obs_equal(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@pytest.fixture(scope="module")
def plain():
    env = make_env(TASK, _config(), "train", 0)
    yield env
    env.close()


@pytest.fixture(scope="module")
def curriculum():
    env = OracleStartWrapper(make_env(TASK, _config(oracle_start_prob=1.0), "train", 0))
    yield env
    env.close()


@pytest.fixture(scope="module")
def oracle_run(plain):
    """The oracle's own run of episode 0 on the plain env: the steps of its first grasp and
    of its success, and the summed distance terms of its first `grasp + 5` steps."""
    oracle = make_oracle(TASK)
    oracle.step_limit = plain.config.max_episode_steps
    obs, _ = plain.reset(seed=0, options={"episode_index": 0})
    oracle.reset(plain.target, plain.sim)
    grasp, sums, step = None, [], 0
    while True:
        obs, _, terminated, truncated, info = plain.step(oracle.act(obs, plain.sim))
        step += 1
        terms = info["reward_terms"]
        if grasp is None and terms["grasp"] > 0:
            grasp = step
        sums.append(sum(abs(terms[k]) for k in DIST_TERMS))
        if terminated or truncated:
            break
    assert info["success"] and grasp is not None, "the oracle solves episode 0"
    return {"grasp": grasp, "success": step, "dist_change": float(np.sum(sums[: grasp + 5]))}


def test_bad_values_fail_in_one_line():
    for field, value in [("oracle_start_prob", 1.5), ("oracle_start_prob", -0.1),
                         ("oracle_start_prob", math.nan), ("oracle_start_max_frac", 0.0),
                         ("oracle_start_max_frac", 1.2)]:  # fmt: skip
        with pytest.raises(ValueError, match=f"{field} must be in") as err:
            _config(**{field: value})
        assert "\n" not in str(err.value)


def test_off_by_default_and_p0_changes_no_reset(plain):
    assert _config().oracle_start_prob == 0.0 and _config().oracle_start_max_frac == 1.0
    wrapped = OracleStartWrapper(make_env(TASK, _config(), "train", 0))
    for seed in (0, 1, None, None, 5, None):  # unseeded resets: the RNG stream is unchanged too
        obs_a, info_a = plain.reset(seed=seed)
        obs_b, info_b = wrapped.reset(seed=seed)
        _assert_obs_equal(obs_a, obs_b)
        assert info_b.pop(PREFIX_STEPS) == 0 and info_a == info_b
    wrapped.close()


def test_restart_episode_is_the_reset_state(plain):
    obs, info = plain.reset(seed=3)
    for _ in range(5):
        plain.step(np.ones(plain.action_space.shape, np.float32))
    again, info_again = plain.restart_episode()
    _assert_obs_equal(obs, again)
    assert info == info_again and plain.num_steps == 0


def test_p1_starts_along_the_oracle_rebased(plain, curriculum):
    obs0, info0 = plain.reset(seed=7)
    obs, info = curriculum.reset(seed=7)
    base = curriculum.unwrapped
    assert info["episode_id"] == info0["episode_id"] and not info["success"]
    assert 0 < info[PREFIX_STEPS] <= base.config.max_episode_steps
    assert base.num_steps == 0 and base.force.accum == 0.0
    moved = [not np.allclose(obs[k], obs0[k]) for k in ("joint", "ee_pos")]
    drawer = base.sim.articulation_pos(base.target.articulation)
    assert any(moved) or drawer != plain.sim.articulation_pos(plain.target.articulation)
    _assert_obs_equal(obs, base.observe())
    again, info_again = curriculum.reset(seed=7)  # reproducible from the seed
    _assert_obs_equal(obs, again)
    assert info_again == info


def test_rebased_trackers_pay_only_the_next_step(curriculum, oracle_run):
    k = oracle_run["grasp"] + 5  # holding the handle, the drawer on its way
    _, info = curriculum.reset(seed=0, options={"episode_index": 0, PREFIX_STEPS: k})
    base = curriculum.unwrapped
    assert info[PREFIX_STEPS] == k and base.num_steps == 0
    assert base._grasped_once and base._handle_grasped()
    assert oracle_run["dist_change"] > 0.5  # what the prefix earned
    _, reward, terminated, truncated, info = curriculum.step(
        np.zeros(curriculum.action_space.shape, np.float32)
    )
    terms = info["reward_terms"]
    assert all(abs(terms[key]) < 0.02 for key in DIST_TERMS), terms
    assert terms["grasp"] == 0.0 and info["num_steps"] == 1
    assert not (terminated or truncated)


def test_the_oracle_finishes_from_its_start_without_the_grasp_bonus(curriculum, oracle_run):
    k = oracle_run["grasp"] + 5
    obs, _ = curriculum.reset(seed=0, options={"episode_index": 0, PREFIX_STEPS: k})
    base, oracle = curriculum.unwrapped, curriculum.oracle  # its state is at step k
    paid = {"grasp": 0.0, "at_state": 0.0}
    while True:
        obs, _, terminated, truncated, info = curriculum.step(oracle.act(obs, base.sim))
        for key in paid:
            paid[key] += info["reward_terms"][key]
        if terminated or truncated:
            break
    assert info["success"] and info["num_steps"] == oracle_run["success"] - k
    assert paid == {"grasp": 0.0, "at_state": base.config.reward.at_state}


def test_an_ended_prefix_is_replayed_shorter(curriculum, oracle_run):
    limit = curriculum.unwrapped.config.max_episode_steps  # past the oracle's success
    options = {"episode_index": 0, PREFIX_STEPS: limit}
    obs, info = curriculum.reset(seed=11, options=options)
    assert 0 <= info[PREFIX_STEPS] < oracle_run["success"]
    assert curriculum.unwrapped.num_steps == 0 and not info["success"]
    again, info_again = curriculum.reset(seed=11, options=options)
    _assert_obs_equal(obs, again)
    assert info_again == info


def test_the_trainers_build_the_curriculum_env_only_when_asked(tmp_path):
    from rearrange.config import ConfigError, compose_train_config
    from rearrange.trainers import run_setup

    off = compose_train_config("open_fridge", ["+algo=pql"])
    assert type(run_setup(off, tmp_path).env_factory) is TaskEnvFactory
    on = compose_train_config("open_fridge", ["+algo=pql", "task.oracle_start_prob=0.5",
                                              "task.oracle_start_max_frac=0.8"])  # fmt: skip
    assert (on.task.oracle_start_prob, on.task.oracle_start_max_frac) == (0.5, 0.8)
    factory = run_setup(on, tmp_path).env_factory
    assert isinstance(factory, OracleStartEnvFactory)
    with pytest.raises(ConfigError, match="oracle_start_prob must be in"):
        compose_train_config("open_fridge", ["+algo=pql", "task.oracle_start_prob=2"])


def test_pql_training_runs_with_oracle_starts(tmp_path):
    from rearrange.runtime.checkpoint import SkillCheckpoint
    from rearrange.train_skill import main

    argv = [TASK, "--algo", "pql", "--serial", "--run-name", "o", f"runs_root={tmp_path}"]
    tiny = ["task.num_episodes=4", "run.num_envs=2", "pql.warmup_steps=4", "pql.batch_size=32",
            "model.state_mlp_hidden=[32]", "pql.critic_hidden=[32]", "run.total_steps=300",
            "task.max_episode_steps=60", "task.oracle_start_prob=1.0"]  # fmt: skip
    assert main([*argv, *tiny]) == 0
    state = SkillCheckpoint.load(tmp_path / TASK / "o" / "checkpoints" / "latest.pt")
    assert state.num_steps == 300
