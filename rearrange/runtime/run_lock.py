"""One trainer per run directory: `train_skill` holds an exclusive lock on RUN_DIR/run.lock
while it trains (rank 0 under torchrun), so a second `train_skill --resume` of the same run,
started while the first still writes its checkpoints, stops with a one-line error instead of
interleaving two runs' snapshots. The lock is the kernel's (`fcntl.flock`): it goes away with
the process that holds it, even a killed one, so a stale file never blocks a resume.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; runs are not guarded there
    fcntl = None

LOCK_NAME = "run.lock"


class RunLockError(RuntimeError):
    """The run directory is held by another live trainer."""


class RunLock:
    """`with RunLock(run_dir):` the body runs holding the run's lock; the file keeps the
    holder's PID so the error can name it."""

    def __init__(self, run_dir: Path):
        self.path = Path(run_dir) / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        if fcntl is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise RunLockError(
                f"{self.path.parent} is being trained by another process (PID {holder}): wait "
                f"for it to end or stop it (kill -TERM {holder}: it checkpoints, then exits), "
                "or pass another --run-name"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
