"""Optimal preemption: S* = argmax S/(Time(S)+LT) on known Time(S)."""

import numpy as np

from rearrange.ver_backend.preemption import (
    PreemptionDecider,
    best_steps,
    optimal_preemption,
    steps_by_time,
)


def test_best_steps_on_synthetic_time():
    # 100 steps cost 10 ms each, after that stragglers cost 100 ms per step.
    def time_fn(s):
        return np.where(s <= 100, 0.01 * s, 1.0 + 0.1 * (s - 100))

    # S=100: 100/(1+1) = 50; S=101: 101/(1.1+1) = 48.1; S=50: 50/1.5 = 33.3
    assert best_steps(time_fn, learn_time=1.0, max_steps=200) == 100
    # A huge learning time favours collecting everything.
    assert best_steps(time_fn, learn_time=1000.0, max_steps=200) == 200


def test_steps_by_time_caps_each_rank():
    t = np.array([0.1, 1.0])
    s = steps_by_time([np.array([0.1, 0.5]), np.array([0.05])], t, cap_per_rank=8)
    # rank 0 at 1.0 s: 10 + 2 = 12 -> capped 8; rank 1: 20 -> capped 8
    assert s.tolist() == [1 + 0 + 2, 16]


def test_optimal_preemption_cuts_the_straggler():
    # Rank 0: two fast envs (10 ms); rank 1: one straggler env (1 s). Cap 10 per rank.
    taus = [np.array([0.01, 0.01]), np.array([1.0, 1.0])]
    s, t = optimal_preemption(taus, learn_time=0.1, cap_per_rank=10)
    # Rank 0 fills its 10 steps at 50 ms: 10/0.15 = 66.7 SPS beats waiting 5 s for 20.
    assert s == 10 and abs(t - 0.05) < 1e-9


def test_decider_active_only_with_full_windows():
    d = PreemptionDecider(num_envs=2, step_window=3, learn_window=2)
    for _ in range(3):
        d.record_step(0, 0.1)
        d.record_step(1, 0.3)
    d.record_learn(1.0)
    assert not d.ready
    d.record_learn(2.0)
    assert d.ready
    assert np.allclose(d.mean_step_times(), [0.1, 0.3]) and d.learn_time() == 1.5
