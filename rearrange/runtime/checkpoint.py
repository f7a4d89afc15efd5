"""Atomic checkpoints: weights, config, spaces, counters, learner/optimizer state, RNG states.

Written to a temp file in the same directory, fsync'ed, then `os.replace`d over the target,
so a crash (even SIGKILL) leaves either the old or the new checkpoint, never a torn one.
"""

from __future__ import annotations

import os
import pickle
import random
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import torch

LATEST = "latest.pt"
REQUIRED_KEYS = ("policy", "learner", "num_steps", "num_updates", "config")


class CheckpointError(RuntimeError):
    """A checkpoint is missing or unreadable (one line naming the file and the fix)."""


def rng_state() -> dict[str, Any]:
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> Path:
    """Write `state` atomically to `path` (temp file + fsync + os.replace)."""
    return write_atomically(path, lambda f: torch.save(state, f))


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read a checkpoint written by `save_checkpoint`; CheckpointError if missing/corrupt."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(
            f"checkpoint {path} not found: pass an existing checkpoint file or start without --resume"
        )
    try:
        state = torch.load(path, map_location=map_location, weights_only=False)
    except (RuntimeError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile, ValueError) as exc:
        raise CheckpointError(
            f"checkpoint {path} is corrupt ({type(exc).__name__}): delete it to start fresh "
            "or restore an earlier copy"
        ) from None
    missing = [k for k in REQUIRED_KEYS if not isinstance(state, dict) or k not in state]
    if missing:
        raise CheckpointError(
            f"checkpoint {path} lacks {missing}: it was not written by rearrange.train_skill; "
            "delete it or pass the right file"
        )
    return state


def find_latest(checkpoint_dir: str | Path) -> Path | None:
    path = Path(checkpoint_dir) / LATEST
    return path if path.exists() else None


def keep_snapshot(latest: Path, num_steps: int, keep: int) -> None:
    """Copy latest.pt to ckpt_<steps>.pt (hard link when possible) and keep the newest `keep`."""
    if keep <= 0:
        return
    snap = latest.with_name(f"ckpt_{num_steps:010d}.pt")
    if not snap.exists():
        try:
            os.link(latest, snap)
        except OSError:
            shutil.copyfile(latest, snap)
    for old in sorted(latest.parent.glob("ckpt_*.pt"))[:-keep]:
        old.unlink()


def write_atomically(path: str | Path, write: Callable[[BinaryIO], None]) -> Path:
    """Write a file atomically (temp file in the same directory, fsync, `os.replace`), with `write(f)` filling the open binary file: a SIGKILL mid-write leaves the
    previous file, never a torn one. Used for files saved beside a checkpoint (PQL's replay)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(path.parent)
    return path
