"""What a training run returns, whichever trainer ran it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class TrainResult:
    num_steps: int
    num_updates: int
    sps: float
    collect_s: float
    learn_s: float
    checkpoint: Path | None
    last_scalars: dict[str, float]
