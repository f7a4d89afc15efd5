"""What a training run returns, whichever trainer ran it (`runtime.run.Trainer`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class TrainResult:
    num_steps: int
    """Environment steps done, all ranks together (resumed runs: since the run began)."""
    num_updates: int
    """The trainer's own unit of learning (`trainers.TRAINERS[algo].updates` names it):
    PPO updates for VER-PPO, V-learner updates for PQL."""
    sps: float
    """Environment steps per second of this session."""
    collect_s: float
    learn_s: float
    checkpoint: Path | None
    last_scalars: dict[str, float]
