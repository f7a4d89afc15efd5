"""Per-stage success and bootstrap confidence intervals (the VER paper's Fig. 6)."""

from __future__ import annotations

import numpy as np


def stage_success(stages_reached: list[int], num_stages: int) -> np.ndarray:
    """Fraction of episodes that completed at least k interactions, for k = 1..num_stages."""
    reached = np.asarray(stages_reached, dtype=np.int64)
    if reached.size == 0:
        return np.zeros(num_stages)
    ks = np.arange(1, num_stages + 1)
    return (reached[:, None] >= ks[None, :]).mean(axis=0)


def bootstrap_ci(
    successes: np.ndarray, num_resamples: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of 0/1 outcomes."""
    values = np.asarray(successes, dtype=np.float64)
    if values.size == 0:
        return 0.0, 0.0
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, values.size, size=(num_resamples, values.size))
    means = values[idx].mean(axis=1)
    tail = (1.0 - level) / 2.0
    return float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail))


def stage_success_with_ci(
    stages_reached: list[int], num_stages: int, seed: int = 0
) -> list[tuple[float, float, float]]:
    """(mean, low, high) for each stage."""
    reached = np.asarray(stages_reached, dtype=np.int64)
    rows = []
    for k in range(1, num_stages + 1):
        outcome = (reached >= k).astype(np.float64)
        low, high = bootstrap_ci(outcome, seed=seed + k)
        rows.append((float(outcome.mean()) if outcome.size else 0.0, low, high))
    return rows
