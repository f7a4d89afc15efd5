"""SIGTERM stops a distillation run after the round in progress, with a checkpoint of that
round, also with its env workers in their own processes (how long runs train)."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rearrange.runtime.checkpoint import SkillCheckpoint

REPO = Path(__file__).resolve().parents[2]
ROUND = 2 * 16  # run.num_envs × distill.rollout_steps


def test_sigterm_stops_a_distill_run_after_its_round(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "rearrange.train_skill", "synthetic", "--algo", "distill",
           "--run-name", "s", f"runs_root={tmp_path}", "run.num_envs=2",
           "run.total_steps=100000000", "run.log_every_steps=32",
           "run.checkpoint_every_steps=100000000", "distill.rollout_steps=16",
           "distill.chunk_len=8", "distill.buffer_steps=256", "distill.minibatch_steps=64",
           "synthetic.step_time_ms=2"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)  # fmt: skip
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    deadline = time.monotonic() + 300  # generous: a loaded CI machine starts workers slowly
    while not any("distill: loss=" in x for x in lines):  # the first round is logged
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail("the run logged no round:\n" + "".join(lines))
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=300)
    finally:
        proc.kill()  # a run that ignored the signal must not outlive the test
    reader.join(timeout=10)
    out = "".join(lines)
    assert proc.returncode == 0, out
    assert "stopping after this round" in out
    state = SkillCheckpoint.load(tmp_path / "synthetic" / "s" / "checkpoints" / "latest.pt")
    assert state.num_steps >= ROUND and state.num_steps % ROUND == 0
    assert state.training.learner["algo"] == "distill"
