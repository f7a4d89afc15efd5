"""One trainer per run directory (runtime/run_lock.py): a second train_skill on a run that a
live trainer holds stops with a one-line error naming the holder; a dead holder's file does
not block."""

import os
import signal
import subprocess
import sys

import pytest

from rearrange.runtime.run_lock import LOCK_NAME, RunLock, RunLockError
from rearrange.train_skill import main

pytest.importorskip("fcntl")


def test_a_second_trainer_on_a_held_run_is_refused(tmp_path, capsys):
    run_dir = tmp_path / "synthetic" / "r"
    with RunLock(run_dir):
        code = main(["synthetic", "--serial", "--run-name", "r", f"runs_root={tmp_path}",
                     "run.num_envs=2", "ver.rollout_steps=8", "total_steps=16"])  # fmt: skip
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2
        assert err == [
            f"error: {run_dir} is being trained by another process (PID {os.getpid()}): wait "
            f"for it to end or stop it (kill -TERM {os.getpid()}: it checkpoints, then exits), "
            "or pass another --run-name"
        ]
        assert not (run_dir / "checkpoints").exists()  # nothing of the run was touched
    # Released: the same command trains, and leaves the lock free again.
    assert main(["synthetic", "--serial", "--run-name", "r", f"runs_root={tmp_path}",
                 "run.num_envs=2", "ver.rollout_steps=8", "total_steps=16"]) == 0  # fmt: skip
    assert (run_dir / "checkpoints" / "latest.pt").is_file()
    with RunLock(run_dir):
        pass


def test_a_killed_holder_leaves_no_lock(tmp_path):
    code = (
        "import sys, time; from rearrange.runtime.run_lock import RunLock; "
        f"RunLock({str(tmp_path)!r}).acquire(); print('held', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        with pytest.raises(RunLockError, match=f"PID {proc.pid}"):
            RunLock(tmp_path).acquire()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        proc.kill()
    assert (tmp_path / LOCK_NAME).read_text().strip() == str(proc.pid)  # the file stays
    lock = RunLock(tmp_path)
    lock.acquire()  # the kernel dropped the dead holder's lock
    assert (tmp_path / LOCK_NAME).read_text().strip() == str(os.getpid())
    lock.release()
