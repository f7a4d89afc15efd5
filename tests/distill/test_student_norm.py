"""A new depth student with `model.vector_norm` reads its sensors on the teacher's scale: the
teacher's observation-normaliser statistics, key by key, end to end through train_skill."""

import gymnasium as gym
import numpy as np
import torch
from distill_testlib import TINY_DAGGER, TINY_STUDENT

from rearrange.distill.student_norm import set_student_norm, teacher_key_stats
from rearrange.distill.teacher_labels import TeacherSpec
from rearrange.models import ModelConfig, build_policy
from rearrange.runtime.checkpoint import SkillCheckpoint
from rearrange.skills.pretrained import pretrained_path
from rearrange.train_skill import main

OPEN_CAB = TeacherSpec("open_cab", str(pretrained_path("open_cab").resolve()))


def _teacher_norm():
    weights = SkillCheckpoint.load(pretrained_path("open_cab")).weights
    return weights["obs_norm.mean"].double(), weights["obs_norm.var"].double()


def test_teacher_stats_are_sliced_per_key_in_sorted_order():
    stats, count = teacher_key_stats(OPEN_CAB)
    assert count > 0
    assert list(stats) == ["ee_pos", "is_holding", "joint", "marker_rel_pos"]
    assert [stats[k][0].size for k in stats] == [3, 1, 7, 3]
    mean, var = _teacher_norm()
    assert np.allclose(stats["marker_rel_pos"][0], mean[11:14].numpy(), atol=1e-3)
    assert np.allclose(stats["is_holding"][1], var[3:4].numpy(), atol=1e-3)


def test_scripted_teacher_has_no_stats():
    assert teacher_key_stats(TeacherSpec("synthetic", None)) == ({}, 0)


def _student(vector_norm: bool):
    box = gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
    space = gym.spaces.Dict({
        "depth": gym.spaces.Box(0.0, 10.0, (32, 32, 1), np.float32),
        "ee_pos": box, "marker_rel_pos": box, "goal_extra": box,
    })  # fmt: skip
    model = ModelConfig(vector_norm=vector_norm, base_width=8, groupnorm_groups=8,
                        blocks_per_stage=[1, 1, 1, 1], rnn_hidden_size=16)  # fmt: skip
    return build_policy(space, gym.spaces.Box(-1, 1, (8,), np.float32), model), space


def test_keys_the_teacher_lacks_stay_unit_scaled():
    policy, space = _student(True)
    stats = {"ee_pos": (np.full(3, 0.5), np.full(3, 0.01)),
             "marker_rel_pos": (np.full(3, -0.1), np.full(3, 0.04))}  # fmt: skip
    line = set_student_norm(policy, space, stats, 7)
    assert "not observed by the teacher, left raw: goal_extra" in line
    norm = policy.encoder.vector_norm  # sorted keys: ee_pos, goal_extra, marker_rel_pos
    assert torch.allclose(norm.mean, torch.tensor([0.5] * 3 + [0.0] * 3 + [-0.1] * 3))
    assert torch.allclose(norm.var, torch.tensor([0.01] * 3 + [1.0] * 3 + [0.04] * 3))
    assert int(norm.count) == 7


def test_no_normaliser_or_no_teacher_stats():
    policy, space = _student(False)
    assert set_student_norm(policy, space, {"ee_pos": (np.zeros(3), np.ones(3))}, 5) == ""
    policy, space = _student(True)
    assert "teacher has no normaliser" in set_student_norm(policy, space, {}, 0)
    assert int(policy.encoder.vector_norm.count) == 0


def test_train_skill_student_starts_with_the_teachers_statistics(tmp_path, caplog):
    argv = ["open_cab", "--algo", "distill", "--serial", "--run-name", "n",
            f"runs_root={tmp_path}", *TINY_STUDENT, *TINY_DAGGER, "run.total_steps=32",
            "run.log_every_steps=32", "model.vector_norm=true"]  # fmt: skip
    caplog.set_level("INFO")
    assert main(argv) == 0  # buffers: the optimiser never moves them
    ckpt = SkillCheckpoint.load(tmp_path / "open_cab" / "n" / "checkpoints" / "latest.pt")
    mean, var = _teacher_norm()
    assert torch.allclose(ckpt.weights["encoder.vector_norm.mean"].double(), mean, atol=1e-3)
    assert torch.allclose(ckpt.weights["encoder.vector_norm.var"].double(), var, atol=1e-3)
    assert "normalised with the teacher's statistics" in caplog.text
