"""`pretrained_weights`: a new run starts from another checkpoint's policy weights."""

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from rearrange.runtime.checkpoint import CheckpointError, SkillCheckpoint
from rearrange.runtime.run import RunConfig, RunSetup
from rearrange.runtime.synthetic_env import SyntheticEnvConfig, SyntheticEnvFactory
from rearrange.ver_backend.config import PPOConfig, VERConfig
from rearrange.ver_backend.trainer import VERTrainer

from .tiny_policy import build_tiny_policy

REPO = Path(__file__).resolve().parents[2]


def _train(run_dir: Path, updates: int, lr: float = 2.5e-4, init: Path | None = None):
    run = RunConfig(num_envs=2, total_steps=10**6, serial=True, device="cpu",
                    checkpoint_every_steps=16)  # fmt: skip
    setup = RunSetup(
        env_factory=SyntheticEnvFactory(SyntheticEnvConfig(max_episode_steps=5), 2),
        run_dir=run_dir,
        tensorboard=False,
        progress=False,
    )
    trainer = VERTrainer(run, VERConfig(rollout_steps=8), PPOConfig(lr=lr), setup,
                         build_tiny_policy, max_updates=updates, init_weights=init)  # fmt: skip
    return trainer.train()


def test_new_run_starts_from_the_given_weights_with_fresh_counters(tmp_path):
    first = _train(tmp_path / "a", updates=3)
    src = SkillCheckpoint.load(first.checkpoint)
    assert src.num_updates == 3
    # lr 1e-12: the one Adam update of the new run moves each weight by ~1e-12
    second = _train(tmp_path / "b", updates=1, lr=1e-12, init=first.checkpoint)
    out = SkillCheckpoint.load(second.checkpoint)
    assert out.num_updates == 1 and out.num_steps == 16
    for name, value in src.weights.items():
        assert torch.allclose(out.weights[name], value, atol=1e-8), name
    # without it the same run starts from a fresh initialisation
    fresh = SkillCheckpoint.load(_train(tmp_path / "c", updates=1, lr=1e-12).checkpoint)
    assert any(not torch.allclose(fresh.weights[k], v, atol=1e-6) for k, v in src.weights.items())


def test_weights_of_other_spaces_are_refused_in_one_line(tmp_path):
    first = _train(tmp_path / "a", updates=1)
    state = SkillCheckpoint.load(first.checkpoint)
    state.observation_space = gym.spaces.Dict({"x": gym.spaces.Box(-1.0, 1.0, (7,), np.float32)})
    bad = state.save(tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="observation space .* differs") as info:
        _train(tmp_path / "b", updates=1, init=bad)
    assert "\n" not in str(info.value)


def test_cli_missing_pretrained_weights_is_a_one_line_error(tmp_path):
    cmd = [sys.executable, "-m", "rearrange.train_skill", "synthetic", "--serial",
           f"runs_root={tmp_path}", f"pretrained_weights={tmp_path / 'nope.pt'}"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "pretrained_weights=" in proc.stderr and "no such file" in proc.stderr
