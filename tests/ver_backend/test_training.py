"""End-to-end: the synthetic reach is learned (serial); a 2-rank gloo torchrun run finishes."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rearrange.config import compose_train_config
from rearrange.runtime.checkpoint import SkillCheckpoint
from rearrange.trainers import TRAINERS

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("system", ["ver", "ddppo"])
def test_synthetic_reach_is_learned_serial(tmp_path, system):
    cfg = compose_train_config(
        "synthetic", ["run.serial=true", f"ver.system={system}", "run.total_steps=8000"]
    )
    trainer = TRAINERS["ver"].build(cfg, tmp_path)
    trainer.setup.progress = False
    result = trainer.train()
    # Random actions succeed ~25% of the time within 20 steps and return ~0.
    assert result.last_scalars["episode/success"] > 0.85
    assert result.last_scalars["episode/return"] > 2.0


def test_overlap_learning_runs(tmp_path):
    cfg = compose_train_config(
        "synthetic", ["run.serial=true", "ver.overlap_learning=true", "run.total_steps=512"]
    )
    trainer = TRAINERS["ver"].build(cfg, tmp_path)
    trainer.setup.progress = False
    result = trainer.train()
    assert result.num_steps == 512 and "learn/value_loss" in result.last_scalars


def test_torchrun_two_ranks_gloo(tmp_path):
    torchrun = Path(sys.executable).with_name("torchrun")
    cmd = [str(torchrun), "--nproc-per-node", "2", "--master-port", "29631", "-m",
           "rearrange.train_skill", "synthetic", "--serial", "--run-name", "dist",
           f"runs_root={tmp_path}", "run.num_envs=2", "ver.rollout_steps=8", "run.total_steps=96"]  # fmt: skip
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        OMP_NUM_THREADS="1",
    )
    out = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    state = SkillCheckpoint.load(tmp_path / "synthetic" / "dist" / "checkpoints" / "latest.pt")
    assert state.num_steps == 96  # 2 ranks x 16 steps per update x 3 updates
    assert state.num_updates == 3
