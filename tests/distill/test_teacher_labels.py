"""The teacher beside the simulator: each observation of the student's env carries the
action the teacher skill computes for that state, from its own preset of the same sim."""

import pickle

import numpy as np
import pytest
import torch
from distill_testlib import recurrent_teacher

from rearrange.distill.teacher_labels import (
    TEACHER_KEY,
    CheckpointTeacher,
    TeacherLabelFactory,
    TeacherLabelWrapper,
    resolve_teacher,
)
from rearrange.distill.trainer import student_space
from rearrange.skills.learned import LearnedSkill
from rearrange.skills.pretrained import pretrained_path
from rearrange.tasks import build_observation, default_task_config, make_env


@pytest.fixture(scope="module")
def pick_env():
    cfg = default_task_config("pick", obs_preset="depth", depth_size=32, num_episodes=2)
    env = make_env("pick", cfg, "train", 0)
    yield env
    env.close()


def _labels_match_the_skill(env, path, steps=12):
    spec = resolve_teacher("pick", False, str(path))
    wrapped = TeacherLabelWrapper(env, CheckpointTeacher(spec))
    skill = LearnedSkill(path, skill_name="pick")
    base = env.unwrapped
    obs, _ = wrapped.reset(seed=3)
    skill.reset(base.target)
    for _ in range(steps):
        teacher_obs = build_observation("pick", skill.observation_preset, base.sim, base.target,
                                        base.config.base_movement)  # fmt: skip
        assert np.array_equal(np.clip(obs[TEACHER_KEY], -1, 1), skill.act(teacher_obs, base.sim))
        obs, _, terminated, truncated, _ = wrapped.step(obs[TEACHER_KEY])  # β = 1
        assert not (terminated or truncated)
    return wrapped


def test_labels_are_the_shipped_skills_actions(pick_env):
    wrapped = _labels_match_the_skill(pick_env, pretrained_path("pick"))
    assert TEACHER_KEY in wrapped.observation_space.spaces
    assert student_space(wrapped.observation_space) == pick_env.observation_space


def test_a_recurrent_teacher_keeps_its_state_per_episode(pick_env, tmp_path):
    path = recurrent_teacher(tmp_path / "teacher.pt")
    wrapped = _labels_match_the_skill(pick_env, path)
    # the student executes something else: the teacher's previous action is that one
    teacher = wrapped.teacher
    hidden = teacher._hidden.clone()
    executed = np.full(8, 0.3, np.float32)
    obs, *_ = wrapped.step(executed)
    tensors = {k: torch.as_tensor(v)[None] for k, v in teacher.observation(pick_env).items()}
    with torch.no_grad():
        _, expected, _, _ = teacher.policy.act(tensors, hidden, torch.as_tensor(executed)[None],
                                               torch.ones(1, dtype=torch.bool), deterministic=True)  # fmt: skip
    assert np.allclose(obs[TEACHER_KEY], expected[0].numpy())
    # a new episode starts the teacher afresh: the same first label as before
    first = wrapped.reset(seed=3)[0][TEACHER_KEY]
    wrapped.step(first)
    assert np.array_equal(wrapped.reset(seed=3)[0][TEACHER_KEY], first)


def test_the_last_observation_of_an_episode_gets_no_label():
    from rearrange.runtime.synthetic_env import SyntheticEnvConfig, SyntheticReachEnv

    env = SyntheticReachEnv(SyntheticEnvConfig(max_episode_steps=2, success_radius=0.0))
    wrapped = TeacherLabelWrapper(env, resolve_teacher("synthetic", False, None).build())
    obs, _ = wrapped.reset(seed=0)
    assert obs[TEACHER_KEY][0] == np.clip(obs["delta"][0] / 0.25, -1, 1)  # scripted reach
    wrapped.step(obs[TEACHER_KEY])
    last, _, _, truncated, _ = wrapped.step(obs[TEACHER_KEY])
    assert truncated and not last[TEACHER_KEY].any()


def test_the_factory_crosses_to_a_spawned_worker():
    from rearrange.runtime.env_worker import TaskEnvFactory

    cfg = default_task_config("pick", obs_preset="depth", depth_size=32, num_episodes=2)
    spec = resolve_teacher("pick", False, None)
    factory = pickle.loads(pickle.dumps(TeacherLabelFactory(TaskEnvFactory("pick", cfg), spec)))
    assert factory.spec == spec and spec.path == str(pretrained_path("pick").resolve())
