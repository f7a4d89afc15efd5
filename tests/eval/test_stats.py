"""Success-rate intervals: Wilson score intervals checked against values worked out by hand
(and cross-checked once with scipy.stats.binomtest(k, n).proportion_ci(method="wilson")),
the formatted rate, and the bootstrap kept for means."""

import numpy as np
import pytest

from rearrange.eval.stats import bootstrap_ci, format_rate, wilson_interval

# Wilson: centre = (p + z²/2n) / (1 + z²/n), half = z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n),
# z = 1.959964 (z² = 3.841459) for 95 %.
#  3/3:  low = n / (n + z²) = 3 / 6.841459 = 0.438503; high = 1.
#  0/10: low = 0; high = z² / (n + z²) = 3.841459 / 13.841459 = 0.277533.
#  5/10: centre = 0.5; half = 1.959964 · sqrt(0.025 + 0.009604) / 1.384146
#        = 1.959964 · 0.186022 / 1.384146 = 0.263407 → [0.236593, 0.763407].
#  40/50: p = 0.8, z²/n = 0.076829; centre = (0.8 + 0.038415) / 1.076829 = 0.778596;
#        half = 1.959964 · sqrt(0.0032 + 0.000384) / 1.076829 = 0.108967
#        → [0.669629, 0.887563].
#  2/3:  centre = (0.666667 + 0.640243) / 2.280486 = 0.573084; half = 1.959964 ·
#        sqrt(0.074074 + 0.106702) / 2.280486 = 0.365424 → [0.207660, 0.938508].
HAND = [
    (3, 3, 0.438503, 1.0),
    (0, 10, 0.0, 0.277533),
    (5, 10, 0.236593, 0.763407),
    (40, 50, 0.669629, 0.887563),
    (2, 3, 0.207660, 0.938508),
]


@pytest.mark.parametrize("k,n,low,high", HAND)
def test_wilson_matches_hand_computed_values(k, n, low, high):
    got = wilson_interval(k, n)
    assert got == pytest.approx((low, high), abs=2e-6)


def test_wilson_is_not_degenerate_where_the_bootstrap_was():
    # the bootstrap of 3 successes in 3 episodes collapses to [100 %, 100 %]
    assert bootstrap_ci(np.ones(3)) == (1.0, 1.0)
    low, high = wilson_interval(3, 3)
    assert low < 0.5 and high == 1.0
    assert wilson_interval(0, 3)[0] == 0.0 and wilson_interval(0, 3)[1] > 0.5


def test_wilson_narrows_with_more_episodes_and_widens_with_the_level():
    w10, w100 = wilson_interval(5, 10), wilson_interval(50, 100)
    assert w100[1] - w100[0] < w10[1] - w10[0]
    l90, l99 = wilson_interval(5, 10, level=0.90), wilson_interval(5, 10, level=0.99)
    assert l99[0] < w10[0] < l90[0] and l90[1] < w10[1] < l99[1]
    assert wilson_interval(0, 0) == (0.0, 1.0)  # nothing measured: nothing known


def test_wilson_rejects_impossible_counts():
    with pytest.raises(ValueError, match="0 <= successes <= n"):
        wilson_interval(4, 3)


def test_format_rate_shows_the_rate_and_its_interval_in_percent():
    assert format_rate(3, 3) == "100% [44, 100]"
    assert format_rate(2, 3) == "67% [21, 94]"
    assert format_rate(40, 50, digits=1) == "80.0% [67.0, 88.8]"
    assert format_rate(0, 0) == "- (0 episodes)"


def test_bootstrap_still_serves_means_of_continuous_values():
    rng = np.random.default_rng(0)
    returns = rng.normal(5.0, 1.0, size=200)
    low, high = bootstrap_ci(returns)
    assert low < returns.mean() < high and high - low < 0.5
