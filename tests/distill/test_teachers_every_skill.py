"""Every shipped state skill can teach a depth student: for each skill and variant, the
teacher beside a depth env of that skill labels each step with exactly the action the shipped
skill computes from its own preset (plain state, or state with the arm-clearance rays) of the
same sim, for a few steps of teacher-driven play (β = 1). The next depth students (issue 29)
distil from these."""

import numpy as np
import pytest

from rearrange.distill.teacher_labels import (
    TEACHER_KEY,
    CheckpointTeacher,
    TeacherLabelWrapper,
    resolve_teacher,
)
from rearrange.distill.trainer import student_space
from rearrange.skills.learned import LearnedSkill
from rearrange.skills.pretrained import pretrained_path
from rearrange.tasks import build_observation, default_task_config, make_env

FIXED = ["nav", "place", "open_fridge", "close_fridge", "open_cab", "close_cab"]
MOVING = ["pick", "place", "open_fridge", "close_fridge", "open_cab", "close_cab"]
CASES = [(s, False) for s in FIXED] + [(s, True) for s in MOVING]


@pytest.mark.parametrize(("skill", "base_movement"), CASES)
def test_the_shipped_teacher_labels_a_depth_env(skill, base_movement):
    cfg = default_task_config(skill, obs_preset="depth", depth_size=32, num_episodes=2)
    cfg.base_movement = base_movement
    env = make_env(skill, cfg, "train", 0)
    try:
        path = pretrained_path(skill, base_movement)
        wrapped = TeacherLabelWrapper(
            env, CheckpointTeacher(resolve_teacher(skill, base_movement, None))
        )
        assert student_space(wrapped.observation_space) == env.observation_space
        assert "depth" in env.observation_space.spaces
        shipped = LearnedSkill(path, skill_name=skill)
        base = env.unwrapped
        obs, _ = wrapped.reset(seed=5)
        shipped.reset(base.target)
        labels = []
        for _ in range(6):
            own = build_observation(skill, shipped.observation_preset, base.sim, base.target,
                                    base.config.base_movement)  # fmt: skip
            expected = shipped.act(own, base.sim)
            assert np.array_equal(np.clip(obs[TEACHER_KEY], -1, 1), expected)
            labels.append(expected)
            obs, _, terminated, truncated, _ = wrapped.step(obs[TEACHER_KEY])
            if terminated or truncated:
                break
        assert len(labels) == 6 and np.abs(np.stack(labels)).max() > 0.05  # it acted
    finally:
        env.close()
