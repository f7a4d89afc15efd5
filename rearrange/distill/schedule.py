"""The DAgger mixing schedule: β, the probability that a step executes the teacher's action."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LinearSchedule:
    """β(step) = start + (end − start) · min(step / steps, 1), `step` in environment steps
    (all envs together), so a resumed run continues the schedule from its step count."""

    start: float
    end: float
    steps: int

    def __call__(self, step: int) -> float:
        if self.steps <= 0:
            return self.end
        frac = min(max(step / self.steps, 0.0), 1.0)
        return self.start + (self.end - self.start) * frac
