"""`--teacher oracle`: the skill's scripted oracle labels the student's states. For nav it is
the shortest-path follower, re-planned from wherever the executed actions took the robot,
stopping within OracleTeacher.NAV_POS_TOL / NAV_YAW_TOL of the goal pose; a run records it,
and `--resume` without --teacher keeps it."""

import numpy as np
import pytest
from distill_testlib import goal_error, tiny_run

from rearrange.distill.teacher_labels import (
    TEACHER_KEY,
    OracleTeacher,
    TeacherError,
    TeacherLabelWrapper,
    resolve_teacher,
)
from rearrange.runtime.checkpoint import SkillCheckpoint
from rearrange.train_skill import main

STOP = 2  # nav: [linear, angular, stop]


def _drive(wrapped, obs, steps: int, stray: np.ndarray | None = None):
    """Execute the oracle's labels (β = 1), or `stray` (the student's mistake) instead."""
    for _ in range(steps):
        action = obs[TEACHER_KEY] if stray is None else stray
        obs, _, terminated, truncated, info = wrapped.step(action)
        if terminated or truncated:
            return obs, info, True
        if obs[TEACHER_KEY][STOP] > 0:
            return obs, info, False
    return obs, info, False


def test_the_oracles_labels_drive_to_the_goal_and_stop_within_its_tolerance(nav_env):
    wrapped = TeacherLabelWrapper(nav_env, resolve_teacher("nav", False, "oracle").build())
    obs, _ = wrapped.reset(options={"episode_index": 0})
    assert obs[TEACHER_KEY].shape == (3,) and obs[TEACHER_KEY][STOP] == -1.0
    obs, _, ended = _drive(wrapped, obs, 400)
    assert not ended and obs[TEACHER_KEY][STOP] == 1.0  # the label says stop ...
    dist, yaw_err = goal_error(nav_env)  # ... only at the goal pose, within the tolerance
    assert dist < OracleTeacher.NAV_POS_TOL + 0.05 and yaw_err < OracleTeacher.NAV_YAW_TOL
    _, _, terminated, _, info = wrapped.step(obs[TEACHER_KEY])
    assert terminated and info["success"]


def test_after_the_student_strays_the_oracle_brings_it_back(nav_env):
    # 40 steps of the student reversing and turning (off the oracle's plan), then the
    # oracle's labels from there reach the goal within the task's limit.
    wrapped = TeacherLabelWrapper(nav_env, resolve_teacher("nav", False, "oracle").build())
    obs, _ = wrapped.reset(options={"episode_index": 2})
    obs, _, _ = _drive(wrapped, obs, 10)
    before = goal_error(nav_env)[0]
    obs, _, ended = _drive(wrapped, obs, 40, stray=np.float32([-0.6, 0.8, -1.0]))
    assert not ended and obs[TEACHER_KEY][STOP] == -1.0
    assert goal_error(nav_env)[0] != pytest.approx(before, abs=0.05)  # it did stray
    obs, _, ended = _drive(wrapped, obs, 340)
    assert not ended and obs[TEACHER_KEY][STOP] == 1.0
    assert goal_error(nav_env)[0] < OracleTeacher.NAV_POS_TOL + 0.05


def test_a_skill_without_an_oracle_is_one_line(monkeypatch):
    from rearrange.skills import registry

    monkeypatch.delitem(registry.ORACLES, "nav")
    with pytest.raises(TeacherError, match=r"^--teacher oracle: skill 'nav' has no scripted"):
        resolve_teacher("nav", False, "oracle")


def test_a_run_records_the_oracle_and_resumes_with_it(tmp_path, capsys):
    argv, latest = tiny_run(tmp_path, "nav", "o")
    assert main([*argv, "--teacher", "oracle", "run.total_steps=32"]) == 0
    assert "teacher: oracle" in capsys.readouterr().err  # the banner
    assert SkillCheckpoint.load(latest).training.learner["teacher"] == "oracle"
    assert main([*argv, "--resume", "run.total_steps=64"]) == 0  # no --teacher: the run's
    resumed = SkillCheckpoint.load(latest)
    assert resumed.num_steps == 64 and resumed.training.learner["teacher"] == "oracle"
    # a heading tolerance given on resume applies to the recorded oracle
    assert main([*argv, "--resume", "distill.oracle_yaw_tol=4", "run.total_steps=96"]) == 0
    learner = SkillCheckpoint.load(latest).training.learner
    assert learner["teacher"] == "oracle" and learner["oracle_yaw_tol"] == 4.0


def test_a_student_standing_still_gets_the_same_label_every_step(nav_env):
    # The follower's own recoveries (stuck: back up; guarded: back off) react to its history;
    # as a teacher they are off, so a state that does not change keeps its label.
    wrapped = TeacherLabelWrapper(nav_env, resolve_teacher("nav", False, "oracle").build())
    obs, _ = wrapped.reset(options={"episode_index": 1})
    for _ in range(200):  # follow the oracle until it drives straight on
        if obs[TEACHER_KEY][0] > 0.5:
            break
        obs, *_ = wrapped.step(obs[TEACHER_KEY])
    labels = []
    for _ in range(40):  # then stand still: the follower alone would call itself stuck
        labels.append(obs[TEACHER_KEY].copy())
        obs, *_ = wrapped.step(np.float32([0.0, 0.0, -1.0]))
    assert labels[0][0] > 0.5 and labels[0][STOP] == -1.0
    np.testing.assert_allclose(np.stack(labels), np.stack([labels[0]] * 40), atol=1e-6)
