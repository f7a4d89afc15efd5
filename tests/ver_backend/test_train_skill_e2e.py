"""End to end: the real `python -m rearrange.train_skill pick` CLI (state preset, tiny sizes)
writes a checkpoint that the trainer's loader and the runtime LearnedSkill both read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
NUM_ENVS, ROLLOUT_STEPS, UPDATES = 2, 8, 2
TOTAL_STEPS = NUM_ENVS * ROLLOUT_STEPS * UPDATES


def _train_pick(runs_root: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    cmd = [
        sys.executable,
        "-m",
        "rearrange.train_skill",
        "pick",
        "--run-name",
        "e2e",
        f"runs_root={runs_root}",
        "task.obs_preset=state",
        "task.num_episodes=4",
        "model=state",
        "ver=tiny",
        f"ver.num_envs={NUM_ENVS}",
        f"ver.rollout_steps={ROLLOUT_STEPS}",
        f"total_steps={TOTAL_STEPS}",
        *extra,
    ]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=240)


@pytest.fixture(scope="module")
def pick_run(tmp_path_factory) -> Path:
    runs_root = tmp_path_factory.mktemp("runs")
    proc = _train_pick(runs_root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return runs_root / "pick" / "e2e"


def test_cli_writes_checkpoint_with_expected_step_count(pick_run):
    from rearrange.runtime.checkpoint import SkillCheckpoint

    state = SkillCheckpoint.load(pick_run / "checkpoints" / "latest.pt")
    # Every update collects exactly T·N = 16 steps (one rank, no preemption).
    assert state.num_steps == TOTAL_STEPS
    assert state.num_updates == UPDATES
    assert state.skill == "pick" and not state.base_movement
    assert state.obs_preset == "state"
    assert "depth" not in state.observation_space.spaces
    assert state.action_space.shape == (8,)  # 7 arm deltas + grip, no base
    assert (pick_run / "config.yaml").read_text().startswith("skill: pick")


def test_learned_skill_loads_checkpoint_and_acts_on_pick_env(pick_run):
    from rearrange.skills.learned import LearnedSkill
    from rearrange.tasks import make_env
    from rearrange.tasks.config import default_task_config

    skill = LearnedSkill(pick_run / "checkpoints" / "latest.pt", skill_name="pick")
    env = make_env(
        "pick", default_task_config("pick", obs_preset="state", num_episodes=2), "train", 3
    )
    try:
        obs, _ = env.reset(seed=3)
        skill.reset(env.target)
        for _ in range(3):
            action = skill.act(obs, env.sim)
            assert action.shape == (8,) and np.all(np.abs(action) <= 1.0)
            obs, reward, terminated, truncated, info = env.step(action)
            assert np.isfinite(reward) and "success" in info
        assert skill.steps == 3
    finally:
        env.close()


def test_train_curve_reads_the_run_and_writes_csv_and_png(pick_run, tmp_path):
    from rearrange.train_curve import main as curve_main

    assert curve_main([str(pick_run), "--name", "curve", "--out-dir", str(tmp_path)]) == 0
    rows = (tmp_path / "curve.csv").read_text().splitlines()
    header = rows[0].split(",")
    assert header[:2] == ["steps", "sps"] and "rollout_sps" in header
    # ver=tiny logs every update: one row per update at T·N = 16, 32 steps.
    assert [int(r.split(",")[0]) for r in rows[1:]] == [16, 32]
    assert (tmp_path / "curve.png").stat().st_size > 0


def test_train_curve_parses_the_line_log(tmp_path):
    from rearrange.train_curve import read_curve

    log = tmp_path / "train.log"
    log.write_text(
        "x 2026 update 2 steps 1024 sps=950 success=0.05 return=-1.2 entropy=10\n"
        "noise\r 2026 update 4 steps 2048 sps=1e+03 success=0.1 return=0.5 value_loss=0.1\n"
    )
    curve = read_curve(log)
    assert curve.series("success") == ([1024, 2048], [0.05, 0.1])
    assert curve.series("sps") == ([1024, 2048], [950.0, 1000.0])
    assert "entropy" not in curve.columns


@pytest.mark.slow  # the synthetic resume tests in test_checkpoint.py cover the default tier
def test_resume_continues_step_count(pick_run):
    """A second invocation with --resume and a larger budget continues from the checkpoint.

    Last in the file: it extends the shared run the tests above read."""
    from rearrange.runtime.checkpoint import SkillCheckpoint

    proc = _train_pick(pick_run.parent.parent, "--resume", f"total_steps={2 * TOTAL_STEPS}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "resumed from" in proc.stderr
    state = SkillCheckpoint.load(pick_run / "checkpoints" / "latest.pt")
    assert state.num_steps == 2 * TOTAL_STEPS
    assert state.num_updates == 2 * UPDATES
