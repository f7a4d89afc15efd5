"""`distill.unjam`: after a step the world jammed (a commanded base move, blocked or a base
collision, the base where it was) the label backs away along the commanded line; otherwise it is the teacher's.
The run records the flag and `--resume` keeps it."""

from types import SimpleNamespace

import numpy as np
import pytest
from distill_testlib import CountingTeacher, tiny_run

from rearrange.distill.teacher_labels import (
    TEACHER_KEY,
    CheckpointTeacher,
    TeacherError,
    TeacherLabelWrapper,
    resolve_teacher,
)
from rearrange.distill.unjam import UnjamTeacher, jammed, unjam_label
from rearrange.runtime.checkpoint import SkillCheckpoint
from rearrange.skill_spec import action_layout
from rearrange.train_skill import main

NAV = action_layout("nav", False)  # [linear, angular, stop]


def test_a_jam_is_a_commanded_move_that_left_the_base_in_place():
    base = NAV.base
    assert jammed(np.array([1.0, 1.0, -1.0]), base, 0.0, 0.0)
    assert jammed(np.array([0.0, -0.5, -1.0]), base, 0.004, 0.004)  # a turn alone
    assert not jammed(np.array([0.1, -0.1, -1.0]), base, 0.0, 0.0)  # nothing was asked
    assert not jammed(np.array([1.0, 0.0, -1.0]), base, 0.02, 0.0)  # it moved 2 cm
    assert not jammed(np.array([0.0, 1.0, -1.0]), base, 0.0, 0.03)  # it turned


def test_the_label_backs_away_along_the_commanded_line():
    teacher = np.array([0.9, 1.0, 0.3], np.float32)
    np.testing.assert_array_equal(unjam_label(teacher, [1.0, 1.0, 0.0], NAV), [-1, 0, -1])
    np.testing.assert_array_equal(unjam_label(teacher, [-0.6, 0.2, 0.0], NAV), [1, 0, -1])
    np.testing.assert_array_equal(unjam_label(teacher, [0.1, 1.0, 0.0], NAV), [-1, 0, -1])
    np.testing.assert_array_equal(
        teacher, np.float32([0.9, 1.0, 0.3])
    )  # the teacher's label is kept
    pick_bm = action_layout("pick", True)  # arm, grip, base (no stop): only the base changes
    label = np.arange(pick_bm.size, dtype=np.float32) / 10
    out = unjam_label(label, label * 0 + 1.0, pick_bm)
    want = label.copy()
    want[pick_bm.base] = (-1.0, 0.0)
    np.testing.assert_array_equal(out, want)


def test_only_the_step_after_a_jam_is_relabelled_and_the_inner_teacher_acts_on_every_step():
    sim = SimpleNamespace(blocked_steps=0, collision_count=0, pose=np.zeros(3))
    sim.base_pose = lambda: sim.pose
    env = SimpleNamespace(unwrapped=SimpleNamespace(sim=sim))
    inner = CountingTeacher(3, 2)
    teacher = UnjamTeacher(inner, NAV)
    teacher.reset()
    forward = np.array([1.0, 0.0, -1.0], np.float32)
    assert teacher.act(env, {}, None)[2] == 1.0  # the episode's first step: the teacher's
    sim.pose = np.array([0.06, 0.0, 0.0])  # a free step
    assert teacher.act(env, {}, forward)[2] == 2.0
    sim.blocked_steps, sim.pose = 1, np.array([0.08, 0.0, 0.0])  # cut short, but it moved
    assert teacher.act(env, {}, forward)[2] == 3.0
    sim.blocked_steps = 2  # blocked where it stood: jammed
    np.testing.assert_array_equal(teacher.act(env, {}, forward), [-1, 0, -1])
    sim.pose = np.array([0.02, 0.0, 0.0])  # it backed away, not blocked
    assert teacher.act(env, {}, np.array([-1, 0, -1], np.float32))[2] == 5.0
    # a turn across -pi..pi that the world stopped dead is a jam too (the yaw wraps)
    sim.pose = np.array([0.02, 0.0, np.pi - 0.001])
    teacher.act(env, {}, forward)
    sim.blocked_steps, sim.pose = 3, np.array([0.02, 0.0, -np.pi + 0.001])
    np.testing.assert_array_equal(teacher.act(env, {}, [0.0, 1.0, -1.0]), [-1, 0, -1])
    # the base's disc against a footprint: a collision, no blocked step, no move: a jam
    sim.collision_count = 1
    np.testing.assert_array_equal(teacher.act(env, {}, [-0.5, 0.0, -1.0]), [1, 0, -1])
    assert inner.calls == 8 and teacher.relabelled == 3
    teacher.reset()  # a new episode: nothing carried over
    sim.blocked_steps = 9
    assert teacher.act(env, {}, None)[2] == 1.0 and inner.calls == 1


def test_in_the_sim_a_base_driven_into_a_wall_is_labelled_back_and_backing_frees_it(nav_env):
    spec = resolve_teacher("nav", False, None, unjam=True)
    assert "backing away after a jammed step" in spec.name
    teacher = spec.build()
    assert isinstance(teacher, UnjamTeacher) and isinstance(teacher.inner, CheckpointTeacher)
    wrapped = TeacherLabelWrapper(nav_env, teacher)
    obs, _ = wrapped.reset(options={"episode_index": 1})
    sim = nav_env.unwrapped.sim
    forward = np.array([1.0, 0.0, -1.0], np.float32)
    for _ in range(300):  # straight ahead until the world stops it dead
        before = np.array(sim.base_pose())
        obs, _, terminated, truncated, _ = wrapped.step(forward)
        assert not (terminated or truncated)
        if np.hypot(*(np.array(sim.base_pose()) - before)[:2]) < 1e-3:
            break
    else:
        pytest.fail("driving forward for 300 steps never met a wall")
    np.testing.assert_array_equal(obs[TEACHER_KEY], [-1, 0, -1])
    before = np.array(sim.base_pose())
    obs, *_ = wrapped.step(obs[TEACHER_KEY])  # the label, executed
    assert np.hypot(*(np.array(sim.base_pose()) - before)[:2]) > 0.03
    assert teacher.relabelled == 1  # the step after backing away got the teacher's label


def test_unjam_for_a_skill_that_does_not_drive_is_one_line(capsys):
    with pytest.raises(TeacherError, match=r"^distill.unjam: pick does not drive the base \(add"):
        resolve_teacher("pick", False, None, unjam=True)
    assert resolve_teacher("pick", True, None, unjam=True).unjam
    assert main(["pick", "--algo", "distill", "distill.unjam=true"]) != 0
    assert "distill.unjam: pick does not drive the base" in capsys.readouterr().err


def test_a_run_records_unjam_and_resumes_with_it(tmp_path, caplog):
    argv, latest = tiny_run(tmp_path, "nav", "u")
    assert main([*argv, "distill.unjam=true", "run.total_steps=32"]) == 0
    assert SkillCheckpoint.load(latest).training.learner["unjam"] is True
    with caplog.at_level("INFO"):
        assert main([*argv, "--resume", "run.total_steps=64"]) == 0  # no distill.unjam
    assert "backing away after jammed steps, as recorded" in caplog.text
    assert SkillCheckpoint.load(latest).training.learner["unjam"] is True
    assert main([*argv, "--resume", "run.total_steps=96", "distill.unjam=false"]) == 0
    assert SkillCheckpoint.load(latest).training.learner["unjam"] is False
