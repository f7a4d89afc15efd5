"""What a training run returns, whichever trainer ran it (`runtime.run.Trainer`)."""

from __future__ import annotations

import time
from collections.abc import Callable
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


class SessionSpeed:
    """Env steps/s of a training session, the first round (rollout) left out once a later one
    has run: it pays the env workers' start-up and first resets. With one round, the whole
    session counts."""

    def __init__(self, num_steps: int, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._run_start = (num_steps, clock())
        self._start = self._run_start
        self.rounds = 0

    def round_done(self, num_steps: int) -> None:
        """Call at the end of each round; the first one restarts the clock."""
        self.rounds += 1
        if self.rounds == 1:
            self._start = (num_steps, self._clock())

    def sps(self, num_steps: int) -> float:
        steps, t0 = self._start if num_steps > self._start[0] else self._run_start
        return (num_steps - steps) / max(self._clock() - t0, 1e-9)

    def result(self, num_steps: int, num_updates: int, collect_s: float, learn_s: float,
               checkpoint: Path | None, last_scalars: dict[str, float]) -> TrainResult:  # fmt: skip
        return TrainResult(
            num_steps, num_updates, self.sps(num_steps), collect_s, learn_s, checkpoint,
            last_scalars,
        )  # fmt: skip
