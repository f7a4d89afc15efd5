"""Success rates with binomial (Wilson) intervals, per-stage success (the VER paper's Fig. 6),
and a bootstrap interval for means of other quantities. The one home of these intervals:
`rearrange.eval`, `rearrange.eval_skill` and the benchmarks import them from here."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a success rate `successes`/`n` (two-sided, `level`).

    Why Wilson: a success rate is a binomial proportion, and ours are measured on few
    episodes (3 in the README's first command, 50 in the benchmarks). A percentile bootstrap
    of 0/1 outcomes, like the normal (Wald) interval, collapses to a point at 0/n and n/n:
    3 of 3 episodes gave [100 %, 100 %]. Wilson's interval inverts the score test, so it stays
    inside [0, 1], is not degenerate at 0/n or n/n (3/3: [43.8 %, 100 %]) and its coverage is
    close to the nominal level on average even for small n. Clopper-Pearson ("exact") would
    guarantee at least that coverage, at the price of wider intervals everywhere (3/3:
    [29.2 %, 100 %]); Wilson is the usual recommendation for reporting (Brown, Cai & DasGupta
    2001) and is closed-form, so no scipy is needed. n == 0 gives (0, 1): nothing is known.
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"wilson_interval: need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return 0.0, 1.0
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    p = successes / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n)) / (1.0 + z2n)
    # the exact ends at 0/n and n/n (rounding would leave 1e-17 off them)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def format_rate(successes: int, n: int, digits: int = 0) -> str:
    """A success rate with its Wilson 95 % interval, e.g. '67% [21, 94]' for 2/3."""
    if n == 0:
        return "- (0 episodes)"
    low, high = wilson_interval(successes, n)
    pct = 100.0 / n * successes
    return f"{pct:.{digits}f}% [{100 * low:.{digits}f}, {100 * high:.{digits}f}]"


def stage_success(stages_reached: list[int], num_stages: int) -> np.ndarray:
    """Fraction of episodes that completed at least k interactions, for k = 1..num_stages."""
    reached = np.asarray(stages_reached, dtype=np.int64)
    if reached.size == 0:
        return np.zeros(num_stages)
    ks = np.arange(1, num_stages + 1)
    return (reached[:, None] >= ks[None, :]).mean(axis=0)


def bootstrap_ci(
    values: np.ndarray, num_resamples: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `values`: for means of quantities that
    are not 0/1 outcomes (returns, episode lengths). Success rates take `wilson_interval`:
    the bootstrap of 0/1 outcomes is degenerate at 0/n and n/n."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return 0.0, 0.0
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, values.size, size=(num_resamples, values.size))
    means = values[idx].mean(axis=1)
    tail = (1.0 - level) / 2.0
    return float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail))


def stage_success_with_ci(
    stages_reached: list[int], num_stages: int
) -> list[tuple[float, float, float]]:
    """(rate, low, high) for each stage k: the episodes that completed at least k
    interactions, with the Wilson 95 % interval."""
    reached = np.asarray(stages_reached, dtype=np.int64)
    rows = []
    for k in range(1, num_stages + 1):
        hits, n = int((reached >= k).sum()), int(reached.size)
        low, high = wilson_interval(hits, n) if n else (0.0, 0.0)
        rows.append((hits / n if n else 0.0, low, high))
    return rows
