"""`ver.overlap_learning` with 2 ranks (issue 11, item 3): the learner thread's gradient
all-reduce must not race the main thread's collectives (which use their own gloo group)."""

import os
import subprocess
import sys
from pathlib import Path

from rearrange.runtime.checkpoint import SkillCheckpoint

REPO = Path(__file__).resolve().parents[2]


def test_torchrun_two_ranks_overlap_learning(tmp_path):
    torchrun = Path(sys.executable).with_name("torchrun")
    cmd = [str(torchrun), "--nproc-per-node", "2", "--master-port", "29637", "-m",
           "rearrange.train_skill", "synthetic", "--serial", "--run-name", "overlap",
           f"runs_root={tmp_path}", "ver.num_envs=2", "ver.rollout_steps=8",
           "ver.overlap_learning=true", "ver.preemption=false", "ppo.num_mini_batch=4",
           "total_steps=320"]  # fmt: skip
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        OMP_NUM_THREADS="1",
    )
    out = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    state = SkillCheckpoint.load(tmp_path / "synthetic" / "overlap" / "checkpoints" / "latest.pt")
    # preemption off (timing-dependent): every update brings exactly 2 ranks x 16 steps
    assert state.num_steps == 320
    assert state.num_updates == 10
