"""One training run, whichever trainer runs it (docs/DESIGN.md §5): its settings in explicit
units (`RunConfig`), what a trainer gets besides its algorithm's config (`RunSetup`), the
protocol every trainer implements (`Trainer`: `train() -> TrainResult`) and the error a failed
process of the run raises (`TrainProcessError`).

Every count here is in environment steps, summed over all ranks: both trainers log and
checkpoint when their step count reaches the next multiple of an interval, so the same
setting means the same thing under VER-PPO and PQL. Imports no torch (rearrange.config reads
this module).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from rearrange.runtime.result import TrainResult

DEVICES = ("auto", "cpu", "cuda")
MAX_ENVS_PER_WORKER = 256
"""An env's index within its worker process travels as one byte (runtime/env_worker.py)."""


@dataclass
class RunConfig:
    """The settings every trainer reads (`run.*` in skill_configs/ and on the command line)."""

    num_envs: int = 16
    """Environment worker processes N per rank (VER-PPO: per GPU; PQL: the Actor's)."""
    total_steps: int = 500_000_000
    """Environment steps to train for, all ranks together (PQL: warm-up included)."""
    seed: int = 0
    """Base seed: env i of rank r is seeded from (seed, r, i); networks and noise from seed."""
    device: str = "auto"
    """Where the networks train: 'auto' (cuda if available), 'cpu' or 'cuda[:i]'."""
    serial: bool = False
    """Step the envs (and PQL's learners) in the main process: debugging, fast tests."""
    envs_per_worker: int = 1
    """Envs hosted by each env worker process, stepped one after the other (1: VER's layout).
    k > 1 cuts the pipe messages and process switches per step, which pays where an env step
    is cheap next to them (zero-cost envs on two cores: 1.15-1.20x) and not where the step
    dominates (pick: no gain); benchmarks/RESULTS.md, "Envs per worker, update threads"."""
    log_every_steps: int = 20_480
    """Log scalars when the step count reaches the next multiple of this many environment
    steps (and at the end). 20,480 = 10 VER-PPO updates of the paper's 16 envs × 128 steps."""
    checkpoint_every_steps: int = 204_800
    """Write checkpoints/latest.pt when the step count reaches the next multiple of this many
    environment steps (and at the end). 204,800 = 100 updates of 16 × 128."""
    keep_checkpoints: int = 0
    """Also keep the newest this many checkpoints as ckpt_<steps>.pt beside latest.pt (0:
    only latest.pt), to choose the shipped checkpoint by success on val episodes."""
    checkpoint_dir: str = "checkpoints"
    """Checkpoint directory inside the run directory."""
    worker_timeout_s: float = 120.0
    """An env worker that returns no step for this long is reported as stuck."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        for name in ("num_envs", "total_steps", "log_every_steps", "checkpoint_every_steps"):
            value = getattr(self, name)
            if value < 1:
                raise ValueError(f"RunConfig.{name} must be >= 1, got {value}")
        if not 1 <= self.envs_per_worker <= MAX_ENVS_PER_WORKER:
            raise ValueError(
                f"RunConfig.envs_per_worker must be in [1, {MAX_ENVS_PER_WORKER}], "
                f"got {self.envs_per_worker}"
            )
        if self.keep_checkpoints < 0:
            raise ValueError(
                f"RunConfig.keep_checkpoints must be >= 0, got {self.keep_checkpoints}"
            )
        if self.device.split(":")[0] not in DEVICES:
            raise ValueError(f"RunConfig.device={self.device!r}: use 'auto', 'cpu' or 'cuda[:i]'")
        if self.worker_timeout_s <= 0:
            raise ValueError(f"RunConfig.worker_timeout_s must be > 0, got {self.worker_timeout_s}")

    def resolved_device(self) -> str:
        """`device` with 'auto' resolved: 'cuda' when torch sees a GPU, else 'cpu'."""
        if self.device != "auto":
            return self.device
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"


def next_multiple(steps: int, every: int) -> int:
    """The first multiple of `every` above `steps`: where the next log or checkpoint falls, so
    snapshots land on round step counts and a resumed run keeps the same grid."""
    return (steps // every + 1) * every


@dataclass
class RunSetup:
    """What every trainer gets besides the configs: where the envs come from and where the
    run writes."""

    env_factory: Callable[[int], Any]
    """Builds env i (a gymnasium env) inside its worker process."""
    run_dir: Path
    """tb/ and <checkpoint_dir>/ go here."""
    config_dict: dict[str, Any] = field(default_factory=dict)
    """The whole composed config, saved in every checkpoint."""
    resume: bool = True
    """Continue from run_dir's checkpoint if there is one."""
    tensorboard: bool = True
    progress: bool = True


class RunSettingError(ValueError):
    """A run setting that only the built run shows to be wrong (e.g. one weight per action
    dimension, once the env's action space is known); train_skill prints it in one line."""


class TrainProcessError(RuntimeError):
    """A process of the run (an env worker, a learner) raised or died; the message names it
    and the cause, its traceback (if it sent one) is in `worker_traceback`."""

    process = "process"  # what failed, for the line above the traceback

    def __init__(self, message: str, worker_traceback: str | None = None):
        super().__init__(message)
        self.worker_traceback = worker_traceback


@runtime_checkable
class Trainer(Protocol):
    """A trainer: built from its configs and a `RunSetup`, it trains until
    `RunConfig.total_steps` (or a stop signal), checkpoints, and returns what it did.

    `train()` raises `TrainProcessError` when a process of the run fails and
    `runtime.checkpoint.CheckpointError` for an unusable checkpoint; `train_skill` reports both
    in one line."""

    def train(self) -> TrainResult: ...
