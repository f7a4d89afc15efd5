"""`distill.oracle_near=R` (nav): the teacher checkpoint labels beyond R metres of the goal
point, the scripted oracle within (`NearGoalTeacher`), each acting on every step; the run
records R (and `distill.oracle_yaw_tol`, the oracle's heading tolerance) and `--resume` keeps
them."""

import math

import numpy as np
import pytest
from distill_testlib import goal_error, tiny_run

from rearrange.distill.teacher_labels import (
    TEACHER_KEY,
    CheckpointTeacher,
    NearGoalTeacher,
    OracleTeacher,
    TeacherError,
    TeacherLabelWrapper,
    resolve_teacher,
)
from rearrange.runtime.checkpoint import SkillCheckpoint
from rearrange.train_skill import main

STOP = 2  # nav: [linear, angular, stop]
RADIUS = 1.0


def test_the_checkpoint_labels_far_from_the_goal_the_oracle_near_it(nav_env):
    spec = resolve_teacher("nav", False, None, oracle_near=RADIUS)
    teacher = spec.build()
    assert isinstance(teacher, NearGoalTeacher) and "within 1 m" in spec.name
    # Shadows fed the same states and executed actions: the labels must be one or the other's.
    far, near = CheckpointTeacher(spec), OracleTeacher(spec)
    wrapped = TeacherLabelWrapper(nav_env, teacher)
    obs, _ = wrapped.reset(options={"episode_index": 0})
    far.reset(), near.reset()
    executed, sides = None, []
    for _ in range(400):
        dist = goal_error(nav_env)[0]
        want_far, want_near = far.act(nav_env, obs, executed), near.act(nav_env, obs, executed)
        label = obs[TEACHER_KEY]
        np.testing.assert_allclose(label, want_near if dist <= RADIUS else want_far, atol=1e-6)
        sides.append(dist <= RADIUS)
        executed = label
        obs, _, terminated, truncated, info = wrapped.step(label)
        if terminated or truncated:
            break
    assert terminated and info["success"]
    assert not sides[0] and sides[-1]  # it started beyond the radius and ended within it
    # The episode ended on the oracle's stop, inside its tolerance (the state nav alone stops
    # anywhere within the 0.5 m success radius).
    dist, yaw_err = goal_error(nav_env)
    assert dist < OracleTeacher.NAV_POS_TOL + 0.05 and yaw_err < OracleTeacher.NAV_YAW_TOL


@pytest.mark.parametrize(
    ("skill", "teacher", "match"),
    [
        ("pick", None, r"^distill.oracle_near: pick has no nav goal to be near \(only nav\)"),
        ("nav", "oracle", r"^distill.oracle_near with --teacher oracle: the oracle labels"),
    ],
)
def test_oracle_near_where_it_cannot_apply_is_one_line(skill, teacher, match):
    with pytest.raises(TeacherError, match=match):
        resolve_teacher(skill, False, teacher, oracle_near=RADIUS)


def test_a_negative_radius_is_one_line(capsys):
    assert main(["nav", "--algo", "distill", "distill.oracle_near=-1"]) != 0
    assert "DistillConfig.oracle_near must be >= 0" in capsys.readouterr().err


def test_a_run_records_the_radius_and_resumes_with_it(tmp_path, caplog):
    argv, latest = tiny_run(tmp_path, "nav", "n")
    first = ["distill.oracle_near=1.0", "distill.oracle_yaw_tol=4", "run.total_steps=32"]
    assert main([*argv, *first]) == 0
    learner = SkillCheckpoint.load(latest).training.learner
    assert learner["oracle_near"] == 1.0 and learner["oracle_yaw_tol"] == 4.0
    with caplog.at_level("INFO"):
        assert main([*argv, "--resume", "run.total_steps=64"]) == 0  # no distill.oracle_near
    assert "resuming with the oracle within 1 m of the goal" in caplog.text
    resumed = SkillCheckpoint.load(latest)
    assert resumed.num_steps == 64 and resumed.training.learner["oracle_near"] == 1.0
    assert resumed.training.learner["oracle_yaw_tol"] == 4.0
    # An explicit 0 on resume turns the oracle off (the default, not given, keeps it).
    assert main([*argv, "--resume", "run.total_steps=96", "distill.oracle_near=0"]) == 0
    assert SkillCheckpoint.load(latest).training.learner["oracle_near"] == 0.0


def _stop_heading_error(env, spec, episode: int) -> float:
    """Follow the labels until the episode ends; the heading error where it stopped."""
    wrapped = TeacherLabelWrapper(env, spec.build())
    obs, _ = wrapped.reset(options={"episode_index": episode})
    for _ in range(400):
        obs, _, terminated, truncated, info = wrapped.step(obs[TEACHER_KEY])
        if terminated or truncated:
            assert terminated and info["success"]
            return goal_error(env)[1]
    raise AssertionError("the labels never stopped the episode")


def test_oracle_yaw_tol_sets_how_square_the_stop_label_comes(nav_env):
    loose = resolve_teacher("nav", False, None, oracle_near=RADIUS)
    tight = resolve_teacher("nav", False, None, oracle_near=RADIUS, oracle_yaw_tol=3.0)
    assert OracleTeacher.yaw_tol(loose) == pytest.approx(math.radians(10.0))
    assert _stop_heading_error(nav_env, tight, 0) < math.radians(3.0)
    # episode 0 under the default: the label says stop between 3 and 10 degrees off
    assert math.radians(3.0) < _stop_heading_error(nav_env, loose, 0) < math.radians(10.0)
    with pytest.raises(TeacherError, match=r"^distill.oracle_yaw_tol=0: give degrees in"):
        resolve_teacher("nav", False, None, oracle_near=RADIUS, oracle_yaw_tol=0)
