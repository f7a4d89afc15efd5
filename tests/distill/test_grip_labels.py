"""`distill.grip_near` / `distill.grip_clear`: the pick teacher's grip label stays open until the
gripper is within R of the target's surface, or while another object is within R of it and
nearer than the target (nothing held); otherwise, and in every other dimension, it is the
teacher's. The run records the radii and `--resume` keeps them."""

from types import SimpleNamespace

import numpy as np
import pytest
from distill_testlib import CountingTeacher, tiny_run

from rearrange.distill.config import DistillConfig
from rearrange.distill.grip_labels import FAR, GripLabelTeacher, nearest_other, wants_open
from rearrange.distill.teacher_labels import (
    TEACHER_KEY,
    CheckpointTeacher,
    TeacherError,
    TeacherLabelWrapper,
    resolve_teacher,
)
from rearrange.runtime.checkpoint import SkillCheckpoint
from rearrange.skill_spec import action_layout
from rearrange.train_skill import main

PICK_BM = action_layout("pick", True)  # arm 7, grip, base 2


def _counting(size: int = PICK_BM.size, grip: int = PICK_BM.grip) -> CountingTeacher:
    """A teacher whose labels are all 0.5 but the grip, which is its call count."""
    return CountingTeacher(size, grip)


def _fake_env(dist: float, held=None):
    sim = SimpleNamespace(dist=dist, held=held, asked=[])

    def gripper_object_dist(i, limit):
        sim.asked.append((i, limit))
        return min(sim.dist, limit)

    sim.gripper_object_dist = gripper_object_dist
    sim.held_object = lambda: sim.held
    env = SimpleNamespace(unwrapped=SimpleNamespace(sim=sim, target=SimpleNamespace(obj_index=3)))
    return env, sim


def test_the_grip_label_is_open_until_the_gripper_is_near_the_target():
    env, sim = _fake_env(0.40)
    inner = _counting()
    teacher = GripLabelTeacher(inner, PICK_BM, near=0.03)
    far = teacher.act(env, {}, None)
    want = np.full(PICK_BM.size, 0.5, np.float32)
    want[PICK_BM.grip] = -1.0
    np.testing.assert_array_equal(far, want)  # only the grip changed
    assert sim.asked == [(3, pytest.approx(0.031))]  # the target's index, capped past R
    sim.dist = 0.031  # just outside
    assert teacher.act(env, {}, far)[PICK_BM.grip] == -1.0
    sim.dist = 0.029  # within R: the teacher's
    assert teacher.act(env, {}, far)[PICK_BM.grip] == 3.0
    sim.dist, sim.held = 0.40, 3  # holding (the rule keeps it on): the teacher's
    assert teacher.act(env, {}, far)[PICK_BM.grip] == 4.0
    sim.held = 5  # holding a wrong one: the teacher's too (the episode has ended)
    assert teacher.act(env, {}, far)[PICK_BM.grip] == 5.0
    assert inner.calls == 5 and teacher.relabelled == 2
    teacher.reset()
    assert inner.calls == 0


def test_an_open_label_from_the_teacher_is_not_counted_as_relabelled():
    env, _ = _fake_env(0.40)

    class _Open(CountingTeacher):
        def act(self, env, obs, executed):
            out = super().act(env, obs, executed)
            out[PICK_BM.grip] = -2.0
            return out

    teacher = GripLabelTeacher(_Open(PICK_BM.size, PICK_BM.grip), PICK_BM, near=0.05)
    assert teacher.act(env, {}, None)[PICK_BM.grip] == -1.0
    assert teacher.relabelled == 0


def test_wants_open_reads_the_sim():
    env, sim = _fake_env(0.10)
    assert wants_open(sim, 3, near=0.05)
    assert not wants_open(sim, 3, near=0.2)
    sim.held = 0
    assert not wants_open(sim, 3, near=0.05)


class _Objects:
    """A sim with objects at given gripper distances (m) and centres along x."""

    def __init__(self, dists, centres, held=None):
        self.dists, self.centres, self.held, self.asked = dict(dists), centres, held, []
        self.num_objects = len(centres)

    def ee_pos(self):
        return np.zeros(3)

    def object_pos(self, i):
        return np.array([self.centres[i], 0.0, 0.0])

    def gripper_object_dist(self, i, limit):
        return min(self.dists[i], limit)

    def gripper_object_dists(self, limit, within):  # the sim's scan: centres within `within`
        self.asked.append(within)
        near = [np.linalg.norm(self.object_pos(i) - self.ee_pos()) <= within for i in self.dists]
        return [min(self.dists[i], limit) if near[i] else limit for i in self.dists]

    def held_object(self):
        return self.held


def test_the_grip_label_is_open_beside_a_neighbour_nearer_than_the_target():
    # target 0; object 1 beside the gripper; object 2's centre 2 m away (not measured)
    sim = _Objects({0: 0.40, 1: 0.05, 2: 0.0}, [0.4, 0.1, 2.0])
    assert wants_open(sim, 0, clear=0.1)
    assert sim.asked == [pytest.approx(FAR + 0.101)]  # the scan skips centres beyond FAR + R
    assert nearest_other(sim, 0, 0.101) == 0.05
    sim.dists[1] = 0.15  # the neighbour outside R: the teacher's label
    assert not wants_open(sim, 0, clear=0.1)
    sim.dists[0], sim.dists[1] = 0.02, 0.05  # the target nearer: the teacher's label
    assert not wants_open(sim, 0, clear=0.1)
    sim.dists[0] = 0.08  # the neighbour nearer again
    assert wants_open(sim, 0, clear=0.1)
    sim.held = 0
    assert not wants_open(sim, 0, clear=0.1)
    sim.held, sim.dists[0], sim.dists[1] = None, 0.40, 0.40  # nothing near: the teacher's "on"
    assert not wants_open(sim, 0, clear=0.1)
    assert wants_open(sim, 0, near=0.03, clear=0.1)  # ... unless grip_near waits for the target
    env = SimpleNamespace(unwrapped=SimpleNamespace(sim=sim, target=SimpleNamespace(obj_index=0)))
    teacher = GripLabelTeacher(_counting(), PICK_BM, clear=0.1)
    assert teacher.act(env, {}, None)[PICK_BM.grip] == 1.0
    sim.dists[1] = 0.01
    assert teacher.act(env, {}, None)[PICK_BM.grip] == -1.0 and teacher.relabelled == 1
    with pytest.raises(ValueError, match="give metres > 0 for one"):
        GripLabelTeacher(_counting(), PICK_BM)


@pytest.fixture(scope="module")
def pick_env():
    from rearrange.tasks import default_task_config, make_env

    cfg = default_task_config("pick", obs_preset="state", num_episodes=2)
    env = make_env("pick", cfg, "val", 0)
    yield env
    env.close()


def test_in_the_sim_the_label_opens_far_and_is_the_teachers_at_the_object(pick_env):
    spec = resolve_teacher("pick", False, None, grip_near=0.03)
    assert spec.grip_near == 0.03 and "the grip open until 0.03 m from the target" in spec.name
    built = spec.build()
    assert isinstance(built, GripLabelTeacher) and isinstance(built.inner, CheckpointTeacher)
    layout = action_layout("pick", False)
    inner = _counting(layout.size, layout.grip)
    wrapped = TeacherLabelWrapper(pick_env, GripLabelTeacher(inner, layout, near=0.03))
    obs, _ = wrapped.reset(options={"episode_index": 0})
    base = pick_env.unwrapped
    sim, target = base.sim, base.target.obj_index
    ee_to_centre = float(np.linalg.norm(sim.ee_pos() - sim.object_pos(target)))
    dist = sim.gripper_object_dist(target, 5.0)
    assert 0.03 < dist < ee_to_centre  # surface to surface: nearer than the centre
    assert sim.gripper_object_dist(target, 0.01) == pytest.approx(0.01)  # capped
    scan = sim.gripper_object_dists(5.0, 100.0)  # every object measured
    assert scan.shape == (sim.num_objects,) and scan[target] == pytest.approx(dist)
    np.testing.assert_array_equal(sim.gripper_object_dists(5.0, 0.0), 5.0)  # none measured
    assert obs[TEACHER_KEY][layout.grip] == -1.0  # the gripper starts far from the target
    sim.start_holding(target)  # the object against the gripper...
    sim.gripper.release()  # ... and let go where it is: within R, nothing held
    assert sim.held_object() is None and sim.gripper_object_dist(target, 1.0) < 0.03
    assert wrapped.teacher.act(pick_env, obs, None)[layout.grip] == 2.0  # the teacher's
    with pytest.raises(IndexError):
        sim.gripper_object_dist(sim.num_objects, 1.0)


def test_in_the_sim_a_gripper_against_a_neighbour_is_labelled_open(pick_env):
    base = pick_env.unwrapped
    pick_env.reset(options={"episode_index": 1})
    sim, target = base.sim, base.target.obj_index
    assert sim.num_objects > 1
    other = next(i for i in range(sim.num_objects) if i != target)
    assert not wants_open(sim, target, clear=0.1)  # the start: nothing within 0.1 m
    sim.start_holding(other)  # a neighbour at the gripper, let go where it is
    sim.gripper.release()
    near = nearest_other(sim, target, 1.0)
    assert near < 0.12 and near < sim.gripper_object_dist(target, 1.0)
    assert wants_open(sim, target, clear=near + 0.005)  # within R, nearer than the target
    assert not wants_open(sim, target, clear=near - 0.005)  # just outside R
    sim.start_holding(target)  # the target there instead: nearer than any neighbour
    sim.gripper.release()
    assert not wants_open(sim, target, clear=0.1)


def test_grip_near_for_a_skill_without_a_target_object_is_one_line(capsys):
    with pytest.raises(TeacherError, match=r"^distill.grip_near: nav grasps no target object"):
        resolve_teacher("nav", False, None, grip_near=0.05)
    with pytest.raises(TeacherError, match=r"^distill.grip_clear: place grasps no target object"):
        resolve_teacher("place", False, None, grip_clear=0.05)
    spec = resolve_teacher("pick", True, None, grip_clear=0.1)
    assert spec.grip_clear == 0.1 and "the grip open within 0.1 m of another object" in spec.name
    with pytest.raises(TeacherError, match=r"^distill.grip_near=1.5: give metres in \(0, 1\)"):
        resolve_teacher("pick", False, None, grip_near=1.5)
    with pytest.raises(ValueError, match="DistillConfig.grip_near must be >= 0"):
        DistillConfig(grip_near=-0.1)
    assert main(["nav", "--algo", "distill", "distill.grip_near=0.05"]) != 0
    assert "distill.grip_near: nav grasps no target object" in capsys.readouterr().err


def test_a_run_records_grip_near_and_resumes_with_it(tmp_path, caplog):
    argv, latest = tiny_run(tmp_path, "pick", "g")
    assert main([*argv, "distill.grip_near=0.04", "run.total_steps=32"]) == 0
    assert SkillCheckpoint.load(latest).training.learner["grip_near"] == 0.04
    with caplog.at_level("INFO"):
        assert main([*argv, "--resume", "run.total_steps=64"]) == 0  # no distill.grip_near
    assert "resuming with distill.grip_near=0.04, as the run recorded" in caplog.text
    assert SkillCheckpoint.load(latest).training.learner["grip_near"] == 0.04
    argv_off = [*argv, "--resume", "run.total_steps=96", "distill.grip_near=0"]
    assert main([*argv_off, "distill.grip_clear=0.1"]) == 0
    learner = SkillCheckpoint.load(latest).training.learner
    assert learner["grip_near"] == 0.0 and learner["grip_clear"] == 0.1


def test_teacher_success_acts_the_relabelled_teacher_on_val_episodes(capsys):
    from benchmarks.teacher_success import main as teacher_success
    from benchmarks.teacher_success import run

    out = run(
        SimpleNamespace(
            skill="pick",
            base_movement=False,
            teacher=None,
            grip_near=0.0,
            grip_clear=0.1,
            unjam=False,
            oracle_near=0.0,
            fixed_base_teacher=None,
            fixed_base_reach=0.85,
            drawer_teacher=None,
            fridge_teacher=None,
            set=None,
            episodes=2,
            split="val",
            seed=0,
            verbose=True,
        )  # fmt: skip
    )
    assert out["episodes"] == 2 and out["successes"] + sum(out["causes"].values()) == 2
    assert "the grip open within 0.1 m of another object" in out["teacher"]
    printed = capsys.readouterr().out
    assert "of 2 (" in printed
    failed = [line for line in printed.splitlines() if line.startswith("  pick-val-")]
    assert len(failed) == 2 - out["successes"]  # --verbose: one line per failed episode
    assert teacher_success(["nav", "--grip-near", "0.05", "--episodes", "1"]) == 2
    assert capsys.readouterr().err.startswith("error: distill.grip_near: nav grasps no target")


def test_only_student_closes_the_teacher_labels_open_are_vetoed():
    from rearrange.distill.collect import veto_grips

    g = PICK_BM.grip
    executed = np.zeros((4, PICK_BM.size), np.float32)
    executed[:, 0] = 0.3  # an arm joint: the student's, never changed
    executed[:, g] = [0.0, 0.5, -0.2, 0.9]  # closes (>= 0), closes, open, the teacher's close
    teacher = np.zeros((4, PICK_BM.size), np.float32)
    teacher[:, g] = [-1.0, 0.7, -1.0, 0.9]
    use_teacher = np.array([False, False, False, True])
    assert veto_grips(executed, teacher, use_teacher, g) == 1
    np.testing.assert_array_equal(executed[:, g], np.float32([-1.0, 0.5, -0.2, 0.9]))
    np.testing.assert_array_equal(executed[:, 0], np.float32([0.3] * 4))


def test_a_pick_run_with_the_grip_veto_logs_its_count(tmp_path, capsys):
    from distill_testlib import tb_scalars

    argv, _ = tiny_run(tmp_path, "pick", "v")
    veto = ["run.total_steps=64", "distill.beta_start=0", "distill.grip_clear=0.1",
            "distill.grip_veto=true"]  # fmt: skip
    assert main([*argv, *veto]) == 0
    counts = [v for _, v in tb_scalars(tmp_path / "pick" / "v", "distill/grip_vetoes")]
    assert len(counts) == 2 and all(c >= 0 and c == int(c) for c in counts)
    nav, _ = tiny_run(tmp_path, "nav", "n")
    assert main([*nav, "run.total_steps=32", "distill.grip_veto=true"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        err[-1]
        == "error: distill.grip_veto: the nav skill has no grip action: drop distill.grip_veto"
    )
