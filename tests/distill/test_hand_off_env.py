"""`task.hand_off_to`: a base-moving pick trained as the drive of a hand-off. The agent's step
that brings the target within reach ends its episode with the fixed-base checkpoint's rest of
it, the base still, as one terminal transition paid its discounted return; steps out of reach
and drawer picks pass through; the option's errors are one line; a PQL run trains with it and
records it."""

from __future__ import annotations

import dataclasses
import re

import gymnasium as gym
import numpy as np
import pytest

from rearrange.distill.hand_off_env import (
    APPROACH,
    HANDED_OFF_STEPS,
    HandOffEnvFactory,
    HandOffWrapper,
)
from rearrange.distill.teacher_labels import CheckpointTeacher, TeacherSpec, teacher_path
from rearrange.runtime.checkpoint import SkillCheckpoint
from rearrange.skill_spec import action_layout
from rearrange.tasks import default_task_config, make_env
from rearrange.tasks.pick import pick_receptacle
from rearrange.train_skill import main

MOVING = action_layout("pick", True)
GAMMA = 0.9


class _Recorder(gym.Wrapper):
    """Records every step's reward, terms and base pose, and whether it ended."""

    def __init__(self, env):
        super().__init__(env)
        self.rewards, self.terms, self.poses, self.ends = [], [], [], []

    def step(self, action):
        obs, reward, term, trunc, info = self.env.step(action)
        self.rewards.append(float(reward))
        self.terms.append(dict(info["reward_terms"]))
        self.poses.append(np.array(self.env.unwrapped.sim.base_pose()))
        self.ends.append((term, trunc))
        return obs, reward, term, trunc, info


def _wrapped(reach: float, approach: float = 0.0, **episodes):
    cfg = default_task_config("pick", obs_preset="state", num_episodes=2, base_movement=True)
    if episodes:
        cfg = dataclasses.replace(cfg, episodes=dataclasses.replace(cfg.episodes, **episodes))
    recorder = _Recorder(make_env("pick", cfg, "val", 0))
    near = CheckpointTeacher(TeacherSpec("pick", str(teacher_path("pick", False, None))), False)
    return HandOffWrapper(recorder, near, reach, 0.033, GAMMA, approach), recorder


def test_the_step_into_reach_returns_the_fixed_base_rest_as_one_transition():
    env, rec = _wrapped(reach=2.0)  # every val start is within 2 m: the first step hands off
    try:
        env.reset(seed=0, options={"episode_index": 0})
        action = np.zeros(MOVING.size, np.float32)
        action[MOVING.base] = (0.5, 0.0)  # the agent's own step drives forward
        obs, reward, term, trunc, info = env.step(action)
        n = len(rec.rewards) - 1  # the fixed-base part's steps
        assert n >= 1 and info[HANDED_OFF_STEPS] == n
        assert term and not trunc and any(rec.ends[-1])  # the env's episode did end
        assert not any(any(e) for e in rec.ends[:-1])
        want = sum(GAMMA**k * r for k, r in enumerate(rec.rewards))
        assert reward == pytest.approx(want, abs=1e-9)
        for key in rec.terms[0]:
            assert info["reward_terms"][key] == pytest.approx(sum(t[key] for t in rec.terms))
        # the agent's step moved the base; the fixed-base part kept it still
        moved = np.abs(rec.poses[1:] - rec.poses[0]).max()
        assert moved < 0.02, moved
        assert info["success"] == (rec.terms[-1]["success"] > 0)
    finally:
        env.close()


def test_steps_out_of_reach_and_drawer_picks_pass_through():
    env, rec = _wrapped(reach=0.05)  # never within reach
    try:
        env.reset(seed=0, options={"episode_index": 0})
        for _ in range(3):
            _, reward, term, trunc, info = env.step(np.zeros(MOVING.size, np.float32))
            assert reward == rec.rewards[-1] and (term, trunc) == rec.ends[-1]
            assert HANDED_OFF_STEPS not in info
        assert len(rec.rewards) == 3
    finally:
        env.close()
    env, rec = _wrapped(reach=2.0, drawer_pick_prob=1.0)  # within reach, but in a drawer
    try:
        env.reset(seed=0, options={"episode_index": 0})
        _, _, term, _, info = env.step(np.zeros(MOVING.size, np.float32))
        assert len(rec.rewards) == 1 and not term and HANDED_OFF_STEPS not in info
    finally:
        env.close()


def test_the_approach_pays_the_way_to_the_fridge_stand_round_the_door():
    from rearrange.skills.oracle_manip import container_stand

    env, rec = _wrapped(reach=0.05, approach=2.0, fridge_pick_prob=1.0)
    try:
        env.reset(seed=0, options={"episode_index": 0})
        sim = env.unwrapped.sim
        point = np.asarray(sim.object_pos(env.unwrapped.target.obj_index))
        shelf = pick_receptacle(env).furniture
        stand = container_stand(sim, point[:2], shelf)
        assert stand is not None

        def to_stand():
            x, y, _ = sim.base_pose()
            return sim.planning_navmap().geodesic_distance((x, y), stand[:2])

        before = to_stand()
        action = np.zeros(MOVING.size, np.float32)
        action[MOVING.base] = (1.0, 0.0)
        moved = 0.0
        for _ in range(3):
            _, reward, _, _, info = env.step(action)
            after = to_stand()
            moved += abs(before - after)
            assert info["reward_terms"][APPROACH] == pytest.approx(2.0 * (before - after))
            assert reward == pytest.approx(rec.rewards[-1] + 2.0 * (before - after))
            before = after
        assert moved > 0.01  # the base drove: the term was paid, not zero
    finally:
        env.close()
    env, rec = _wrapped(reach=0.05, approach=2.0)  # an open receptacle's pick: no approach
    try:
        env.reset(seed=0, options={"episode_index": 0})
        _, reward, _, _, info = env.step(np.zeros(MOVING.size, np.float32))
        assert APPROACH not in info["reward_terms"] and reward == rec.rewards[-1]
    finally:
        env.close()


def test_a_fixed_base_env_is_refused():
    cfg = default_task_config("pick", obs_preset="state", num_episodes=1)
    env = make_env("pick", cfg, "val", 0)
    try:
        with pytest.raises(ValueError, match="needs a base-moving env"):
            HandOffWrapper(env, None, 0.85, 0.033, GAMMA)
    finally:
        env.close()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["task.hand_off_to=nowhere.pt"], "task.hand_off_to: .*no such file"),
        (["task.hand_off_to=shipped", "task.hand_off_reach=0"], "hand_off_reach must be in"),
        (["task.hand_off_to=rearrange/skills/pretrained/pick_bm.pt"], "trained with base movement"),
    ],
)
def test_the_option_s_errors_are_one_line(tmp_path, capsys, extra, message):
    argv = ["pick", "--base-movement", "--algo", "pql", f"runs_root={tmp_path}", *extra]
    assert main(argv) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert any(re.search(message, line) for line in err), err
    assert "Traceback" not in "\n".join(err)


def test_without_base_movement_or_in_a_distill_run_it_is_refused(tmp_path, capsys):
    assert main(["pick", "--algo", "pql", f"runs_root={tmp_path}", "task.hand_off_to=shipped"])
    assert "does not move the base: add --base-movement" in capsys.readouterr().err
    argv = ["pick", "--base-movement", "--algo", "distill", "--profile", "paper",
            f"runs_root={tmp_path}", "task.hand_off_to=shipped"]  # fmt: skip
    assert main(argv)
    assert "a distill run hands its labels off with distill.fixed_base_teacher" in (
        capsys.readouterr().err
    )


def test_a_pql_run_trains_with_the_hand_off_and_records_it(tmp_path, capsys):
    argv = ["pick", "--base-movement", "--algo", "pql", "--serial", "--run-name", "h",
            f"runs_root={tmp_path}", "task.hand_off_to=shipped", "task.hand_off_reach=2.0",
            "task.num_episodes=2", "pql.num_envs=2", "pql.warmup_steps=4", "pql.batch_size=16",
            "model.state_mlp_hidden=[16]", "pql.critic_hidden=[16]", "total_steps=8"]  # fmt: skip
    assert main(argv) == 0
    banner = capsys.readouterr().err
    assert "the shipped fixed-base checkpoint finishes within 2 m of the target" in banner
    ckpt = SkillCheckpoint.load(tmp_path / "pick" / "h" / "checkpoints" / "latest.pt")
    assert ckpt.config["task"]["hand_off_to"] == "shipped"
    assert ckpt.config["task"]["hand_off_reach"] == 2.0


def test_the_factory_wraps_its_inner_envs():
    from rearrange.runtime.env_worker import TaskEnvFactory

    cfg = default_task_config("pick", obs_preset="state", num_episodes=1, base_movement=True)
    path = str(teacher_path("pick", False, None))
    env = HandOffEnvFactory(TaskEnvFactory("pick", cfg, "val", 0), path, 0.85, 0.99)(0)
    try:
        assert isinstance(env, HandOffWrapper) and env.reach == 0.85 and env.gamma == 0.99
        assert env.near.action_dim == action_layout("pick", False).size
    finally:
        env.close()
