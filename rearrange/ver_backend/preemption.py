"""VER optimal straggler preemption for multi-GPU training (VER paper §2.3).

Choose the number of steps S to collect (summed over ranks) that maximises throughput
S / (Time(S) + LT), with S ≤ T·N·world_size, where LT is the learning time and Time(S) the
time to collect S steps. Time(S) is estimated from each env's mean step time τ_e (inference +
simulation): by time t, env e has delivered ⌊t/τ_e⌋ steps and rank r at most T·N. The search
runs over 5 ms time bins. The decider is active only once its windows (5·T step times per
env, 5 learning times) are full; every rank computes the same S* from all-gathered estimates.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

import numpy as np

BIN_S = 0.005


def best_steps(
    time_fn: Callable[[np.ndarray], np.ndarray], learn_time: float, max_steps: int
) -> int:
    """argmax over S in 1..max_steps of S / (time_fn(S) + learn_time)."""
    steps = np.arange(1, max_steps + 1)
    score = steps / (time_fn(steps) + learn_time)
    return int(steps[int(np.argmax(score))])


def steps_by_time(step_times: Sequence[np.ndarray], t: np.ndarray, cap_per_rank: int) -> np.ndarray:
    """S(t) = Σ_r min(cap, Σ_e ⌊t/τ_{r,e}⌋) for each time in `t`."""
    total = np.zeros(len(t), np.int64)
    for taus in step_times:
        per_env = np.floor(t[:, None] / np.maximum(np.asarray(taus)[None, :], 1e-9))
        total += np.minimum(per_env.sum(1).astype(np.int64), cap_per_rank)
    return total


def optimal_preemption(
    step_times: Sequence[np.ndarray], learn_time: float, cap_per_rank: int, bin_s: float = BIN_S
) -> tuple[int, float]:
    """(S*, Time(S*)) over 5 ms bins, from per-rank arrays of per-env mean step times."""
    # Every rank has filled its cap by cap·max(τ)/n (+ one step for the floor): no later bin
    # can collect more.
    horizon = max(
        (cap_per_rank / max(len(taus), 1) + 1) * float(np.max(taus)) for taus in step_times
    )
    t = np.arange(1, int(np.ceil(horizon / bin_s)) + 1) * bin_s
    s = steps_by_time(step_times, t, cap_per_rank)
    max_total = cap_per_rank * len(step_times)
    # The first bin reaching each S is the time to collect it.
    score = np.where(s > 0, s / (t + learn_time), -1.0)
    best = int(np.argmax(score))
    return int(min(s[best], max_total)), float(t[best])


class PreemptionDecider:
    """Windows of per-env step times and learning times; S* once they are full."""

    def __init__(self, num_envs: int, step_window: int, learn_window: int = 5):
        self.step_times = [deque(maxlen=step_window) for _ in range(num_envs)]
        self.learn_times: deque[float] = deque(maxlen=learn_window)

    def record_step(self, env_id: int, seconds: float) -> None:
        self.step_times[env_id].append(seconds)

    def record_learn(self, seconds: float) -> None:
        self.learn_times.append(seconds)

    @property
    def ready(self) -> bool:
        full = all(len(w) == w.maxlen for w in self.step_times)
        return full and len(self.learn_times) == self.learn_times.maxlen

    def mean_step_times(self) -> np.ndarray:
        return np.array([np.mean(w) if w else np.inf for w in self.step_times])

    def learn_time(self) -> float:
        return float(np.mean(self.learn_times)) if self.learn_times else 0.0
