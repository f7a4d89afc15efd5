"""HRL masks (DESIGN §6): nav stop-masking and grip masking on hand-built action arrays."""

import numpy as np
import pytest

from rearrange.skill_spec import skill_def
from rearrange.tasks import grip_rules, stop_rule


def test_stop_masked_while_goal_far():
    a = np.array([0.3, -0.2, 0.9], dtype=np.float32)  # nav: [lin, ang, stop]
    out = stop_rule.mask_nav_stop(a, stop_index=2, goal_dist=2.5)
    np.testing.assert_allclose(out, [0.3, -0.2, -1.0])
    assert a[2] == pytest.approx(0.9)  # input untouched


def test_stop_kept_when_goal_near_or_at_threshold():
    a = np.array([0.0, 0.0, 0.7], dtype=np.float32)
    assert stop_rule.mask_nav_stop(a, 2, goal_dist=1.2)[2] == pytest.approx(0.7)
    assert stop_rule.mask_nav_stop(a, 2, goal_dist=2.0)[2] == pytest.approx(0.7)  # not > 2 m


def test_stop_mask_reads_goal_polar_distance():
    obs = {"goal_polar": np.array([3.1, 0.4])}
    assert stop_rule.nav_goal_distance(obs) == pytest.approx(3.1)
    with pytest.raises(KeyError, match="goal_polar"):
        stop_rule.nav_goal_distance({})


def test_stop_masked_while_the_heading_is_off_either_side():
    a = np.array([0.0, 0.0, 0.7], dtype=np.float32)
    lim = stop_rule.HAB_STOP_MASK_HEADING
    assert lim == pytest.approx(np.radians(30.0))  # 15 degree success angle + 15
    for err in (lim + 0.01, -(lim + 0.01), np.pi):
        out = stop_rule.mask_nav_stop(a, 2, 0.2, 1.0, heading_err=err, heading_threshold=lim)
        assert out[2] == -1.0
    for err in (0.0, lim, -lim):  # not > the threshold
        out = stop_rule.mask_nav_stop(a, 2, 0.2, 1.0, heading_err=err, heading_threshold=lim)
        assert out[2] == pytest.approx(0.7)
    # either one missing: the distance alone decides
    assert stop_rule.mask_nav_stop(a, 2, 0.2, 1.0, heading_err=np.pi)[2] == pytest.approx(0.7)
    assert stop_rule.mask_nav_stop(a, 2, 0.2, 1.0, heading_threshold=lim)[2] == pytest.approx(0.7)
    assert stop_rule.mask_nav_stop(a, 2, 1.5, 1.0, heading_err=0.0, heading_threshold=lim)[2] == -1


def test_stop_mask_reads_the_goal_heading_sensor():
    assert stop_rule.nav_goal_heading({"goal_heading": np.array([-0.6])}) == pytest.approx(-0.6)
    assert stop_rule.nav_goal_heading({"goal_polar": np.array([1.0, 0.0])}) is None


def test_pick_keeps_grip_on_once_holding():
    a = np.zeros(8, dtype=np.float32)
    a[7] = -0.6
    rule = skill_def("pick").grip_rule
    assert grip_rules.mask_grip(a, 7, rule, is_holding=True)[7] == 1.0
    assert grip_rules.mask_grip(a, 7, rule, is_holding=False)[7] == pytest.approx(-0.6)


def test_place_keeps_grip_off_once_released():
    a = np.zeros(8, dtype=np.float32)
    a[7] = 0.8
    rule = skill_def("place").grip_rule
    assert grip_rules.mask_grip(a, 7, rule, is_holding=False, has_released=True)[7] == -1.0
    assert grip_rules.mask_grip(a, 7, rule, is_holding=True, has_released=False)[
        7
    ] == pytest.approx(0.8)


def test_nav_keeps_current_hold():
    a = np.array([0.1, 0.2, 0.0, -0.5], dtype=np.float32)  # a layout with a grip at 3
    rule = skill_def("nav").grip_rule
    assert grip_rules.mask_grip(a, 3, rule, is_holding=True)[3] == 1.0
    assert grip_rules.mask_grip(a, 3, rule, is_holding=False)[3] == -1.0
    assert grip_rules.grip_for_hold(True) == 1.0 and grip_rules.grip_for_hold(False) == -1.0


def test_grip_mask_without_grip_dim_is_noop_and_bad_rule_raises():
    a = np.array([0.5, 0.5, 0.5], dtype=np.float32)
    np.testing.assert_allclose(grip_rules.mask_grip(a, None, "keep_current", True), a)
    with pytest.raises(ValueError, match="unknown grip rule"):
        grip_rules.mask_grip(a, 0, "sometimes", True)


def test_place_may_release_only_near_its_goal_and_never_regrasps():
    from rearrange.tasks.grip_rules import mask_grip

    rule = skill_def("place").grip_rule
    a = np.array([0.0] * 7 + [-0.8], dtype=np.float32)  # the policy asks to release
    assert mask_grip(a, 7, rule, True, False, near_goal=False)[7] == 1.0  # far: keep holding
    assert mask_grip(a, 7, rule, True, False, near_goal=True)[7] == -0.8  # near: its choice
    grab = a.copy()
    grab[7] = 0.9
    assert mask_grip(grab, 7, rule, False, True, near_goal=True)[7] == -1.0  # released: stays off


def test_object_near_goal_uses_the_place_threshold():
    from rearrange.tasks.grip_rules import PLACE_RELEASE_DIST, object_near_goal

    class Sim:
        def object_pos(self, i):
            return (1.0, 2.0, 0.9)

    assert object_near_goal(Sim(), 0, (1.0, 2.0 + PLACE_RELEASE_DIST - 0.01, 0.9))
    assert not object_near_goal(Sim(), 0, (1.0, 2.0 + PLACE_RELEASE_DIST + 0.01, 0.9))
    assert object_near_goal(None, 0, (0, 0, 0))  # nothing known: the policy decides
