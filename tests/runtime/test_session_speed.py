"""`runtime.result.SessionSpeed`: the session's env steps/s, the first round left out once a
later one has run (a fake clock, hand-computed rates)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rearrange.runtime.result import SessionSpeed


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_the_first_round_counts_until_a_second_one_ends():
    clock = Clock()
    speed = SessionSpeed(1000, clock)  # a resumed run: 1000 steps before this session
    clock.t = 110.0  # round 1: 64 steps in 10 s (workers starting)
    assert speed.sps(1064) == pytest.approx(6.4)
    speed.round_done(1064)
    assert speed.sps(1064) == pytest.approx(6.4)  # nothing after it yet: the whole session
    clock.t = 112.0  # round 2: 64 steps in 2 s
    assert speed.sps(1128) == pytest.approx(32.0)
    speed.round_done(1128)
    clock.t = 114.0  # round 3: 64 more in 2 s; round 1 stays out
    assert speed.sps(1192) == pytest.approx(32.0)
    result = speed.result(1192, 3, 1.5, 2.5, Path("c.pt"), {"x": 1.0})
    assert (result.num_steps, result.num_updates, result.sps) == (1192, 3, pytest.approx(32.0))
    assert (result.collect_s, result.learn_s, result.checkpoint) == (1.5, 2.5, Path("c.pt"))


def test_one_round_sessions_and_empty_ones():
    clock = Clock()
    speed = SessionSpeed(0, clock)
    clock.t = 104.0
    speed.round_done(128)
    assert speed.result(128, 1, 0.0, 0.0, None, {}).sps == pytest.approx(32.0)
    empty = SessionSpeed(500, clock)  # stopped before a round
    clock.t = 105.0
    assert empty.sps(500) == 0.0
