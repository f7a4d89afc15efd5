"""One session of a training run, as both trainers hold it (docs/DESIGN.md §9): the run's
checkpoints (latest.pt written atomically plus its step snapshot, found and loaded again to
resume, RNG state included), the training wall time summed over the run's sessions, the stop
flag and the shutdown. A trainer keeps only what is its own: the learner state it stores,
how it restores it, and the resources it closes (PQL's replay file is written beside
latest.pt by the PQL trainer).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import gymnasium as gym
import torch
from torch import nn

from rearrange.runtime.checkpoint import (
    LATEST,
    SkillCheckpoint,
    TrainingState,
    find_latest,
    keep_snapshot,
    load_for_resume,
    rng_state,
    set_rng_state,
)
from rearrange.runtime.logging_utils import TrainLogger, log
from rearrange.runtime.run import RunConfig, RunSetup
from rearrange.runtime.stop_flag import StopFlag

# Applies a run's checkpoint to the trainer (weights, learner state, counters) before the
# RNG state is restored; raises CheckpointError for one the trainer cannot continue.
Restore = Callable[[Path, SkillCheckpoint, TrainingState], None]


class Closable(Protocol):
    def close(self) -> None: ...


class RunSession:
    """What a trainer shares with the other trainer for one session of its run: `start()` at
    the top of `train()`, `resume()` once its networks exist, `save()` at each checkpoint,
    `shutdown()` in `train()`'s finally."""

    def __init__(self, run: RunConfig, setup: RunSetup, stop_unit: str = "update"):
        self.run, self.setup = run, setup
        self.checkpoint_dir = setup.run_dir / run.checkpoint_dir
        self.last_checkpoint: Path | None = None  # written, or resumed from
        self.earlier_wall_time_s = 0.0  # the run's sessions before this one
        self.stop = StopFlag(stop_unit)
        self.logger: TrainLogger | None = None
        self._started: float | None = None

    # ------------------------------------------------------------------ start and stop
    def start(self) -> StopFlag:
        """Install the stop flag (SIGINT/SIGTERM) and start this session's wall clock (env
        start-up included)."""
        self.stop.install()
        self._started = time.monotonic()
        return self.stop

    def open_logger(self, num_steps: int, enabled: bool = True) -> TrainLogger:
        """The session's TensorBoard writer and progress bar (`enabled`: this rank logs and
        the run shows progress); `shutdown` closes it."""
        setup = self.setup
        self.logger = TrainLogger(
            setup.run_dir / "tb" if setup.tensorboard else None,
            self.run.total_steps,
            num_steps,
            enabled=enabled and setup.progress,
        )
        return self.logger

    def shutdown(self, *resources: Closable | None) -> None:
        """Restore the signal handlers, close the logger, then each resource that exists, in
        the order given."""
        self.stop.restore()
        for resource in (self.logger, *resources):
            if resource is not None:
                resource.close()
        self.logger = None

    @property
    def wall_time_s(self) -> float:
        """Training wall time over all sessions of this run (a resume adds to it)."""
        elapsed = 0.0 if self._started is None else time.monotonic() - self._started
        return self.earlier_wall_time_s + elapsed

    # ------------------------------------------------------------------ checkpoints
    def save(
        self,
        policy: nn.Module,
        observation_space: gym.spaces.Dict,
        action_space: gym.spaces.Box,
        *,
        num_steps: int,
        num_updates: int,
        learner: dict[str, Any],
    ) -> Path:
        """Write the run's checkpoint atomically to latest.pt, keep its ckpt_<steps>.pt
        snapshot (`run.keep_checkpoints`); returns latest.pt."""
        ckpt = SkillCheckpoint.from_training(
            self.setup.config_dict,
            policy.state_dict(),
            observation_space,
            action_space,
            num_steps=num_steps,
            num_updates=num_updates,
            wall_time_s=self.wall_time_s,
            training=TrainingState(learner, rng_state()),
        )
        self.last_checkpoint = ckpt.save(self.checkpoint_dir / LATEST)
        keep_snapshot(self.last_checkpoint, num_steps, self.run.keep_checkpoints)
        return self.last_checkpoint

    def resume(
        self, restore: Restore, map_location: str | torch.device = "cpu"
    ) -> SkillCheckpoint | None:
        """Continue the run from its latest.pt (when the setup resumes and there is one):
        `restore` applies it to the trainer, then the wall time and every RNG state are
        restored. None when there is nothing to resume; CheckpointError for a checkpoint
        without training state or one `restore` refuses."""
        path = find_latest(self.checkpoint_dir) if self.setup.resume else None
        if path is None:
            return None
        ckpt, training = load_for_resume(path, map_location=map_location)
        restore(path, ckpt, training)
        self.earlier_wall_time_s = ckpt.wall_time_s
        set_rng_state(training.rng)
        self.last_checkpoint = path
        log.info("resumed from %s at step %d, update %d", path, ckpt.num_steps, ckpt.num_updates)
        return ckpt
