"""Speed-ratio control: a process waits when it is ahead of its share, and the measured
ratios converge to β_a:v and β_p:v."""

import threading
import time

import numpy as np
import pytest

from rearrange.pql.ratio import Role, SpeedRatio, may_start


def _ratio(actor, v, p, beta_a_v=0.125, beta_p_v=0.5, enabled=True):
    counters = np.array([actor, v, p], np.int64)
    return SpeedRatio(counters, np.zeros(3), beta_a_v, beta_p_v, lead=1.0, enabled=enabled)


def test_may_start_by_hand():
    # Actor at β_a:v = 1/8 with lead 1: after k steps it needs k < v/8 + 1.
    assert may_start(0, 0, 0.125, 1.0)  # first step right away
    assert not may_start(1, 0, 0.125, 1.0)  # step 2 waits for the V-learner ...
    assert may_start(1, 1, 0.125, 1.0)  # ... until it has started on step 1
    assert not may_start(2, 8, 0.125, 1.0)  # 2 < 8/8 + 1 is false: at most one step ahead
    assert may_start(2, 9, 0.125, 1.0)
    # V-learner vs Actor (ratio 8): u < 8k + 1
    assert may_start(8, 1, 8.0, 1.0) and not may_start(9, 1, 8.0, 1.0)


def test_v_learner_waits_when_ahead_of_the_data():
    ratio = _ratio(actor=2, v=17, p=100)  # 17 >= 8*2 + 1: V used its share of 2 steps
    assert not ratio.may_run(Role.V_LEARNER)
    ratio.record(Role.ACTOR)  # a new step arrives
    assert ratio.may_run(Role.V_LEARNER)


def test_v_learner_waits_for_a_lagging_p_learner():
    ratio = _ratio(actor=100, v=11, p=5)  # v < 2·5 + 1 fails
    assert not ratio.may_run(Role.V_LEARNER)
    assert ratio.may_run(Role.P_LEARNER)  # the one behind runs


def test_p_learner_waits_when_ahead_of_the_critics():
    ratio = _ratio(actor=100, v=4, p=3)  # p < 4/2 + 1 fails
    assert not ratio.may_run(Role.P_LEARNER)
    assert ratio.may_run(Role.V_LEARNER)


def test_actor_waits_when_ahead_of_the_v_learner():
    ratio = _ratio(actor=3, v=16, p=8)  # 3 < 16/8 + 1 fails
    assert not ratio.may_run(Role.ACTOR)
    assert _ratio(actor=3, v=17, p=8).may_run(Role.ACTOR)


def test_disabled_control_never_waits():
    assert _ratio(actor=50, v=0, p=50, enabled=False).may_run(Role.ACTOR)


@pytest.mark.parametrize("beta_a_v, beta_p_v", [(0.125, 0.5), (0.5, 0.25), (2.0, 1.0)])
def test_serial_schedule_holds_the_ratios(beta_a_v, beta_p_v):
    ratio = _ratio(0, 0, 0, beta_a_v, beta_p_v)
    for _ in range(4000):
        ratio.record(ratio.next_in_serial())
    actor, v, p = ratio.counters.tolist()
    assert actor / v == pytest.approx(beta_a_v, rel=0.02)
    assert p / v == pytest.approx(beta_p_v, rel=0.02)


def test_wait_turn_blocks_until_the_partner_moves_and_clocks_the_wait():
    ratio = _ratio(actor=1, v=0, p=0)

    def v_learner_starts():
        time.sleep(0.2)
        ratio.record(Role.V_LEARNER)

    thread = threading.Thread(target=v_learner_starts)
    thread.start()
    start = time.perf_counter()
    assert ratio.wait_turn(Role.ACTOR, should_stop=lambda: False)
    thread.join()
    assert time.perf_counter() - start >= 0.15
    assert ratio.waited[Role.ACTOR] >= 0.15


def test_wait_turn_gives_up_on_stop():
    ratio = _ratio(actor=1, v=0, p=0)
    assert not ratio.wait_turn(Role.ACTOR, should_stop=lambda: True)
