"""distill.norm_warmup_steps: the student's vector normaliser measured on the run's first
steps (hand-computed statistics, the variance floor), and learning held back until then."""

import numpy as np
import pytest
import torch
from distill_testlib import TINY_DAGGER, TINY_STUDENT

from rearrange.distill.config import DistillConfig
from rearrange.distill.student_norm import WARMUP_VAR_FLOOR, WarmupStats
from rearrange.runtime.checkpoint import SkillCheckpoint
from rearrange.train_skill import main


def test_warmup_stats_are_the_mean_and_floored_variance_of_every_step_seen():
    w = WarmupStats(("ee_pos", "is_holding"), steps=4)
    # round 1: T=1 step, N=2 envs; round 2: T=1, N=2
    w.add({"ee_pos": np.array([[[0.0, 1.0], [2.0, 1.0]]]), "is_holding": np.zeros((1, 2, 1))})
    assert not w.done and w.count == 2
    w.add({"ee_pos": np.array([[[4.0, 1.0], [6.0, 1.0]]]), "is_holding": np.zeros((1, 2, 1))})
    assert w.done and w.count == 4
    stats = w.stats()
    mean, var = stats["ee_pos"]
    assert np.allclose(mean, [3.0, 1.0])  # (0 + 2 + 4 + 6) / 4
    assert np.allclose(var, [5.0, WARMUP_VAR_FLOOR])  # (9 + 1 + 1 + 9) / 4; constant: floor
    assert np.allclose(stats["is_holding"][1], [WARMUP_VAR_FLOOR])


def test_negative_warmup_is_refused():
    with pytest.raises(ValueError, match="norm_warmup_steps must be >= 0"):
        DistillConfig(norm_warmup_steps=-1)


def _run(tmp_path, name: str, *extra: str):
    argv = ["open_cab", "--algo", "distill", "--serial", "--run-name", name,
            f"runs_root={tmp_path}", *TINY_STUDENT, *TINY_DAGGER, "run.total_steps=64",
            "run.log_every_steps=32", "model.vector_norm=true", *extra]  # fmt: skip
    assert main(argv) == 0
    return SkillCheckpoint.load(tmp_path / "open_cab" / name / "checkpoints" / "latest.pt")


def test_first_round_measures_the_normaliser_and_learning_starts_after_it(tmp_path, caplog):
    caplog.set_level("INFO")
    ckpt = _run(tmp_path, "w", "distill.norm_warmup_steps=32")
    # rounds of 2 envs x 16 steps: the first (32 steps) measures, only the second learns
    assert ckpt.num_updates == DistillConfig().updates_per_round
    w = ckpt.weights
    assert int(w["encoder.vector_norm.count"]) == 32
    assert "statistics over its first 32 steps" in caplog.text
    # sorted keys ee_pos(3), is_holding(1), joint(7), marker_rel_pos(3): is_holding is a
    # 0/1 flag, so its measured mean lies in [0, 1]; every variance is at least the floor
    assert 0.0 <= float(w["encoder.vector_norm.mean"][3]) <= 1.0
    assert bool((w["encoder.vector_norm.var"] >= WARMUP_VAR_FLOOR - 1e-9).all())
    plain = _run(tmp_path, "p")  # the teacher's statistics, learning from the first round
    assert plain.num_updates == 2 * DistillConfig().updates_per_round
    assert not torch.allclose(
        w["encoder.vector_norm.var"], plain.weights["encoder.vector_norm.var"]
    )


def test_a_run_stopped_inside_its_warmup_measures_again_on_resume(tmp_path):
    first = _run(tmp_path, "r", "distill.norm_warmup_steps=64", "run.total_steps=32")
    assert first.num_updates == 0
    assert int(first.weights["encoder.vector_norm.count"]) == 0  # not measured yet
    argv = ["open_cab", "--algo", "distill", "--serial", "--run-name", "r", "--resume",
            f"runs_root={tmp_path}", *TINY_STUDENT, *TINY_DAGGER, "run.total_steps=96",
            "run.log_every_steps=32", "model.vector_norm=true", "distill.norm_warmup_steps=64"]  # fmt: skip
    assert main(argv) == 0
    ckpt = SkillCheckpoint.load(tmp_path / "open_cab" / "r" / "checkpoints" / "latest.pt")
    assert int(ckpt.weights["encoder.vector_norm.count"]) == 64  # the two resumed rounds
    assert ckpt.num_updates == 0
