"""`PathFollower._pre_goal` with the path's last point known: a goal whose last turn is
blocked the short way and clear only the long way round enters from a pre-goal point when
that way is longer than LONG_TURN_MAX (a 290-degree turn at the open fridge cost 60 of
close_fridge --base-movement's 300 steps), and turns the long way when it is not."""

from __future__ import annotations

import math

import pytest

from rearrange.skills import oracle_motion, oracle_nav
from rearrange.skills.oracle_nav import LONG_TURN_MAX, PRE_GOAL, PathFollower


class _Sim:
    model = object()  # the checks only ask that a MuJoCo model is there
    idx = object()

    def base_fits(self, x: float, y: float) -> bool:
        return True


@pytest.fixture
def short_way_blocked(monkeypatch):
    """Turns clear only in the positive (counter-clockwise) sense; every pose clear."""
    monkeypatch.setattr(oracle_nav, "static_turn_clear", lambda sim, delta, pose=None: delta > 0)
    monkeypatch.setattr(oracle_motion, "clearance_at", lambda *a, **k: 1.0)
    monkeypatch.setattr(PathFollower, "_arrival", lambda self, sim, x, y: "forward")


def _follower() -> PathFollower:
    f = PathFollower()
    f.reset((0.0, 0.0, 0.0))
    return f


def _last_point(arrival_heading: float) -> tuple[float, float]:
    """The path point 1 m before the goal (0, 0) that arrives with this heading."""
    return (-math.cos(arrival_heading), -math.sin(arrival_heading))


def test_long_way_beyond_the_limit_enters_from_a_pre_goal_point(short_way_blocked):
    # arriving at +90 deg, goal heading 0: the short way is -90 (blocked), the long +270
    pre = _follower()._pre_goal(_Sim(), _last_point(math.radians(90)))
    assert pre == pytest.approx((-PRE_GOAL[0], 0.0))


def test_long_way_within_the_limit_is_turned(short_way_blocked):
    # arriving at +170 deg: the short way is -170 (blocked), the long +190 <= LONG_TURN_MAX
    assert math.radians(190) <= LONG_TURN_MAX
    assert _follower()._pre_goal(_Sim(), _last_point(math.radians(170))) is None


def test_short_way_clear_needs_no_pre_goal(short_way_blocked):
    # arriving at -90 deg: the short way is +90, clear
    assert _follower()._pre_goal(_Sim(), _last_point(math.radians(-90))) is None
