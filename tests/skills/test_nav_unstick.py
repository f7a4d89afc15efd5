"""A stuck nav leg steps back and turns (skills/nav_unstick.py, driven by the HAB executor)."""

import math

import numpy as np
import pytest
from skills_testlib import backed_off, face_nearest_wall, one_target_hab_env

from rearrange.eval.executor import ExecutorConfig, TPSRLExecutor
from rearrange.planner import make_plan
from rearrange.skills import action_layout
from rearrange.skills.nav_unstick import (
    MAX_UNSTICKS,
    UNSTICK_CLEAR,
    UNSTICK_MAX,
    UNSTICK_MIN,
    UNSTICK_TURN,
    StuckWatch,
    _gap,
    turn_step_rad,
    unstick_steps,
    unstick_turn,
)
from rearrange.skills.reset_arm import reverse_step_m

# --- the watch -----------------------------------------------------------------------------


def test_watch_says_stuck_only_once_a_full_window_has_not_moved():
    watch = StuckWatch(window=3, move=0.02, turn=0.25, spin_window=50)
    # 4 poses (window + 1) within 2 cm and 0.25 rad of the last one: stuck on the 4th only
    poses = [(1.0, 2.0, 0.1), (1.01, 2.0, 0.2), (1.0, 2.01, 0.05), (1.005, 2.005, 0.1)]
    assert [watch.update(p) for p in poses] == [False, False, False, True]
    watch.clear()
    assert watch.update(poses[-1]) is False  # a cleared watch waits a full window again


def test_watch_counts_a_move_or_a_turn_as_progress():
    moving = StuckWatch(window=2, move=0.02, turn=0.25, spin_window=50)
    assert not any(moving.update((0.0, 0.011 * i, 0.0)) for i in range(4))  # 2.2 cm a window
    turning = StuckWatch(window=2, move=0.02, turn=0.25, spin_window=50)
    assert not any(turning.update((0.0, 0.0, 0.13 * i)) for i in range(4))  # 0.26 rad
    # headings either side of +-pi are close, not 2 pi apart
    wrapped = StuckWatch(window=2, move=0.02, turn=0.25, spin_window=50)
    flips = [(0.0, 0.0, math.pi - 0.01), (0.0, 0.0, -math.pi + 0.01)] * 2
    assert [wrapped.update(p) for p in flips][-1] is True


def test_watch_says_a_base_spinning_in_place_is_stuck_after_the_spin_window():
    watch = StuckWatch(window=2, move=0.02, turn=0.25, spin_window=5, spin_move=0.1)
    # turning 0.3 rad a step (never stuck by the short rule), within 5 cm of where it began
    poses = [(0.05 * (i % 2), 0.0, 0.3 * i) for i in range(7)]
    assert [watch.update(p) for p in poses] == [False] * 5 + [True, True]
    # ... but one that also drives 3 cm a step is making its way
    driving = StuckWatch(window=2, move=0.02, turn=0.25, spin_window=5, spin_move=0.1)
    assert not any(driving.update((0.03 * i, 0.0, 0.3 * i)) for i in range(7))


def test_watch_rejects_an_empty_window():
    with pytest.raises(ValueError, match="window"):
        StuckWatch(window=0)
    with pytest.raises(ValueError, match="window"):
        StuckWatch(spin_window=0)


# --- the step back and the turn, on a real scene ---------------------------------------------


@pytest.fixture()
def env():
    return one_target_hab_env()


def _back(sim, n: int) -> tuple[float, float, float]:
    return backed_off(sim, n, reverse_step_m(sim))


def test_steps_back_the_fewest_steps_from_the_least_after_which_the_robot_keeps_its_gap(env):
    sim = env.sim
    face_nearest_wall(sim, gap=0.01)
    assert _gap(sim, tuple(sim.base_pose())) < UNSTICK_CLEAR
    n = unstick_steps(sim)
    step = reverse_step_m(sim)
    least = math.ceil(UNSTICK_MIN / step - 1e-9)
    assert least <= n <= UNSTICK_MAX / step
    assert _gap(sim, _back(sim, n)) >= UNSTICK_CLEAR
    if n > least:
        assert _gap(sim, _back(sim, n - 1)) < UNSTICK_CLEAR


def test_step_back_falls_back_to_the_roomiest_pose_when_none_keeps_the_gap(env):
    sim = env.sim
    face_nearest_wall(sim, gap=0.01)
    step = reverse_step_m(sim)
    least = math.ceil(UNSTICK_MIN / step - 1e-9)
    # asked for more room than any pose has: the pose with the largest gap past the least
    n = unstick_steps(sim, clear=10.0)
    gaps = {k: _gap(sim, _back(sim, k)) for k in range(least, int(UNSTICK_MAX / step) + 1)}
    assert gaps[n] == max(gaps.values())


def test_turn_goes_to_the_side_with_more_room(env):
    sim = env.sim
    face_nearest_wall(sim, gap=0.01)
    back = unstick_steps(sim)
    n = unstick_turn(sim, back)
    steps = round(UNSTICK_TURN / turn_step_rad(sim))
    assert abs(n) == steps
    x, y, yaw = _back(sim, back)
    turn = steps * turn_step_rad(sim)
    left, right = _gap(sim, (x, y, yaw + turn)), _gap(sim, (x, y, yaw - turn))
    assert (n > 0) == (left >= right)


# --- in the executor -----------------------------------------------------------------------


class PushingNav:
    """Drives full forward, never turns, never stops: stuck at the first wall."""

    name = task = "nav"
    step_limit = 400

    def reset(self, target, sim=None):
        pass

    def act(self, obs, sim):
        return action_layout("nav").compose(base=np.array([1.0, 0.0]))

    def is_done(self, obs, sim):
        return False


def _nav_run(env, **config) -> dict:
    plan = make_plan(env.sim.layout, env.episode)[:1]
    assert plan[0].skill == "nav"
    cfg = ExecutorConfig(step_limits={"nav": 400}, **config)
    record = TPSRLExecutor(env, {"nav": PushingNav()}, cfg).run_episode(plan)
    return record.skill_runs[0]


def test_a_nav_pressed_against_a_wall_backs_off_and_turns(env):
    face_nearest_wall(env.sim, gap=0.01)
    start = np.array(env.sim.base_pose())
    run = _nav_run(env)
    assert run["steps"] == 400  # the reverse and turn steps count toward the leg's limit
    assert 1 <= run["unsticks"] <= MAX_UNSTICKS
    least = math.ceil(UNSTICK_MIN / reverse_step_m(env.sim) - 1e-9)
    assert run["unstick_steps"] >= run["unsticks"] * least
    assert abs(float(env.sim.base_pose()[2] - start[2])) > 0.1  # it turned away

    env.reset()
    face_nearest_wall(env.sim, gap=0.01)
    off = _nav_run(env, nav_unstick=False)
    assert off["steps"] == 400 and "unsticks" not in off
    assert np.allclose(env.sim.base_pose()[2], start[2], atol=1e-6)  # never turned


def test_a_nav_held_in_place_recovers_max_unsticks_times_then_runs_out(env, monkeypatch):
    """A world that swallows the skill's own steps (full forward, no turn): the watch
    fires after every STUCK_WINDOW of them, MAX_UNSTICKS times in all."""
    apply = env.apply_action
    forward = action_layout("nav").compose(base=np.array([1.0, 0.0]))
    monkeypatch.setattr(
        env, "apply_action", lambda name, a: None if np.array_equal(a, forward) else apply(name, a)
    )
    run = _nav_run(env, stuck_window=10)
    assert run["unsticks"] == MAX_UNSTICKS and run["steps"] == 400
    # each recovery: its reverse steps and its turn; the rest of the 400 are the skill's
    assert run["unstick_steps"] <= MAX_UNSTICKS * (
        UNSTICK_MAX / reverse_step_m(env.sim) + round(UNSTICK_TURN / turn_step_rad(env.sim))
    )


def test_the_video_caption_says_when_a_stuck_nav_steps_back(env):
    from rearrange.eval.executor import EpisodeProgress
    from rearrange.eval.overlays import caption

    plan = make_plan(env.sim.layout, env.episode)[:1]
    progress = EpisodeProgress(plan=plan, num_stages=1)
    assert "stuck" not in caption(env, progress)[1]
    progress.unsticking = True
    assert caption(env, progress)[1].endswith(", stuck: stepping back")


class SelfRecoveringPushingNav(PushingNav):
    recovers_itself = True  # as the scripted nav's path follower does


def test_a_nav_that_recovers_itself_is_left_to_it(env):
    face_nearest_wall(env.sim, gap=0.01)
    plan = make_plan(env.sim.layout, env.episode)[:1]
    cfg = ExecutorConfig(step_limits={"nav": 100})
    record = TPSRLExecutor(env, {"nav": SelfRecoveringPushingNav()}, cfg).run_episode(plan)
    assert "unsticks" not in record.skill_runs[0]


def test_the_scripted_nav_says_it_recovers_itself():
    from rearrange.skills import make_skill

    assert make_skill("nav", "oracle").recovers_itself is True


# --- the same recovery on a nav skill's own episodes (eval_skill nav --unstick) -------------


class ForwardNav:
    """Asks full speed forward every step; counts its calls."""

    step_limit = 400

    def __init__(self, layout):
        self.layout, self.calls = layout, 0

    def reset(self, target, sim):
        self.calls = 0

    def act(self, obs, sim):
        self.calls += 1
        return self.layout.compose(base=np.array([1.0, 0.0]))

    def is_done(self, obs, sim):
        return False


class StillSim:
    def base_pose(self):
        return (1.0, 2.0, 0.0)


def test_a_wrapped_nav_held_in_place_takes_the_recovery_moves_then_acts_again(monkeypatch):
    from rearrange.skills import nav_unstick

    layout = action_layout("nav", True)
    back = layout.compose(base=np.array([-1.0, 0.0]))
    monkeypatch.setattr(nav_unstick, "unstick_moves", lambda sim, lay: [back] * 3)
    inner = ForwardNav(layout)
    nav = nav_unstick.UnstickingNav(inner, layout, max_unsticks=2)
    sim = StillSim()
    nav.reset(None, sim)
    acts = [nav.act({}, sim) for _ in range(80)]
    # the watch is stuck once STUCK_WINDOW + 1 poses after the skill's steps have not moved:
    # the skill's 21 steps, 3 moves, 21 more, 3 moves, then the skill alone (the cap)
    reversed_at = [i for i, a in enumerate(acts) if a[layout.base][0] < 0]
    assert reversed_at == [21, 22, 23, 45, 46, 47]
    assert (nav.unsticks, inner.calls) == (2, 80 - 6)
    assert nav.step_limit == 400  # other attributes are the skill's
    nav.reset(None, sim)
    assert (nav.unsticks, inner.calls) == (0, 0) and nav.act({}, sim)[layout.base][0] == 1.0


def test_the_wrapper_needs_a_nav_layout():
    from rearrange.skills.nav_unstick import UnstickingNav

    with pytest.raises(ValueError, match="needs a nav layout"):
        UnstickingNav(ForwardNav(None), action_layout("pick", False))


def test_eval_skill_unstick_is_for_a_learned_nav_only():
    from rearrange.eval.one_skill import SkillEvalArgs, UsageError

    with pytest.raises(UsageError, match="pick is not a nav skill, drop --unstick"):
        SkillEvalArgs("pick", unstick=True)
    with pytest.raises(UsageError, match="scripted nav backs up and re-plans itself"):
        SkillEvalArgs("nav", skills="oracle", unstick=True)
    assert SkillEvalArgs("nav", unstick=True).command().endswith("--unstick")


def test_eval_skill_runs_a_nav_with_the_unstick_and_says_so():
    from rearrange.eval.one_skill import SkillEvalArgs, evaluate_skill

    out = evaluate_skill(SkillEvalArgs("nav", episodes=1, unstick=True))
    assert out.checkpoint.endswith("nav.pt + unstick") and len(out.results) == 1


def test_a_stuck_nav_leg_in_the_executor_and_the_wrapper_plan_the_same_moves(env):
    from rearrange.skills.nav_unstick import unstick_moves

    layout = action_layout("nav", True)
    face_nearest_wall(env.sim, gap=0.01)
    moves = unstick_moves(env.sim, layout)
    back, turn = unstick_steps(env.sim), unstick_turn(env.sim, unstick_steps(env.sim))
    assert len(moves) == back + abs(turn)
    assert all(m[layout.base][0] == -1.0 and m[layout.base][1] == 0.0 for m in moves[:back])
    assert all(m[layout.base][1] == np.sign(turn) for m in moves[back:])
