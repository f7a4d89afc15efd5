"""Atomic checkpoints, clear errors for missing/corrupt files, resume after SIGKILL."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from rearrange.runtime.checkpoint import CheckpointError, load_checkpoint, save_checkpoint

REPO = Path(__file__).resolve().parents[2]


def minimal_state(step=0):
    return {"policy": {"w": torch.ones(2)}, "learner": {}, "num_steps": step, "num_updates": 1,
            "config": {}}  # fmt: skip


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path):
    path = tmp_path / "ck" / "latest.pt"
    save_checkpoint(path, minimal_state(5))
    save_checkpoint(path, minimal_state(7))
    assert load_checkpoint(path)["num_steps"] == 7
    assert [p.name for p in path.parent.iterdir()] == ["latest.pt"]


def test_missing_and_corrupt_checkpoints_raise_one_line_errors(tmp_path):
    with pytest.raises(CheckpointError, match=r"not found"):
        load_checkpoint(tmp_path / "nope.pt")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match=r"bad.pt is corrupt") as info:
        load_checkpoint(bad)
    assert "\n" not in str(info.value)
    incomplete = tmp_path / "inc.pt"
    torch.save({"policy": {}}, incomplete)
    with pytest.raises(CheckpointError, match=r"lacks"):
        load_checkpoint(incomplete)


def run_cli(args, **kw):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "rearrange.train_skill", "synthetic", *args]
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kw)  # fmt: skip


def test_resume_after_sigkill_continues_step_count(tmp_path):
    common = ["--serial", "--run-name", "r", f"runs_root={tmp_path}", "ver.num_envs=2",
              "ver.rollout_steps=8", "ver.checkpoint_interval=1"]  # fmt: skip
    ckpt = tmp_path / "synthetic" / "r" / "checkpoints" / "latest.pt"
    proc = run_cli([*common, "total_steps=1000000", "synthetic.step_time_ms=2"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if ckpt.exists() and load_checkpoint(ckpt)["num_updates"] >= 2:
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    before = load_checkpoint(ckpt)
    assert before["num_steps"] == 16 * before["num_updates"]
    target = before["num_steps"] + 32
    out = run_cli([*common, "--resume", f"total_steps={target}"]).communicate(timeout=60)[0]
    after = load_checkpoint(ckpt)
    assert after["num_steps"] == target, out
    assert after["num_updates"] == before["num_updates"] + 2
    assert after["learner"]["num_updates"] == before["learner"]["num_updates"] + 2


def test_sigterm_stops_after_the_update_and_checkpoints(tmp_path):
    common = ["--serial", "--run-name", "s", f"runs_root={tmp_path}", "ver.num_envs=2",
              "ver.rollout_steps=8", "ver.checkpoint_interval=1000"]  # fmt: skip
    proc = run_cli([*common, "total_steps=1000000", "synthetic.step_time_ms=2"])
    tb = tmp_path / "synthetic" / "s" / "tb"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (tb.exists() and any(tb.iterdir())):
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    out = proc.communicate(timeout=60)[0]
    assert proc.returncode == 0, out
    state = load_checkpoint(tmp_path / "synthetic" / "s" / "checkpoints" / "latest.pt")
    assert state["num_updates"] >= 1 and state["num_steps"] == 16 * state["num_updates"]
