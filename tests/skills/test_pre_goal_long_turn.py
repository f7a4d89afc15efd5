"""`PathFollower._pre_goal` with the path's last point known: a goal whose last turn is
blocked the short way and clear only the long way round enters from a pre-goal point when
that way is longer than the follower's `long_turn_max` (LONG_TURN_MAX for the base-moving
skills' work poses: a 290-degree turn at the open fridge cost 60 of close_fridge
--base-movement's 300 steps), and turns the long way when it is not; plain nav (no limit)
turns any long way."""

from __future__ import annotations

import math

import pytest

from rearrange.skills import oracle_motion, oracle_nav
from rearrange.skills.oracle_nav import LONG_TURN_MAX, PRE_GOAL, FollowerConfig, PathFollower


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


def _follower(limit: float | None = LONG_TURN_MAX) -> PathFollower:
    f = PathFollower(config=FollowerConfig(long_turn_max=limit))
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


def test_plain_nav_turns_any_long_way(short_way_blocked):
    # the default follower (the nav skill's) has no limit: the +270 deg way is turned
    assert FollowerConfig().long_turn_max is None
    assert _follower(None)._pre_goal(_Sim(), _last_point(math.radians(90))) is None


@pytest.mark.parametrize(
    "task,base_movement,limits",
    [
        ("close_fridge", True, {LONG_TURN_MAX}),
        ("pick", True, {LONG_TURN_MAX}),
        ("nav", False, {None}),
    ],
)
def test_which_oracle_follows_with_the_limit(monkeypatch, task, base_movement, limits):
    """The followers the oracles make over one val episode of the real task env: the
    base-moving manipulation skills' carry the limit, the nav skill's none."""
    pytest.importorskip("mujoco")
    from rearrange.skills.registry import make_oracle
    from rearrange.skills.rollout import run_skill_episode
    from rearrange.tasks import default_task_config, make_env

    made: list[PathFollower] = []
    real = PathFollower.__init__

    def spy(self, *args, **kwargs):
        real(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(PathFollower, "__init__", spy)
    cfg = default_task_config(task, num_episodes=1, base_movement=base_movement)
    env = make_env(task, cfg, split="val", seed=0)
    skill = make_oracle(task, base_movement=base_movement)
    skill.step_limit = 40  # the follower is made on the first driving step
    try:
        run_skill_episode(env, skill, 0)
    finally:
        env.close()
    assert made and {f.cfg.long_turn_max for f in made} == limits
