"""`distill.fixed_base_teacher`: a base-moving pick or place is labelled by its base-moving
teacher until the target first stands within reach and ahead of the base, then by the
fixed-base teacher with the base still, handed back beyond a margin; drawer picks are never
handed off (`distill.drawer_teacher` labels them), fridge picks may be driven by another
teacher (`distill.fridge_teacher`); the run records the hand-off and `--resume` keeps it."""

import math
from types import SimpleNamespace

import numpy as np
import pytest
from distill_testlib import CountingTeacher, tiny_run

from rearrange.distill.config import DistillConfig
from rearrange.distill.hand_off import HandOffTeacher, target_point, within_reach
from rearrange.distill.teacher_labels import (
    CheckpointTeacher,
    OracleTeacher,
    TeacherError,
    resolve_teacher,
)
from rearrange.runtime.checkpoint import SkillCheckpoint
from rearrange.sim.layout_types import Box, Receptacle
from rearrange.skill_spec import action_layout
from rearrange.train_skill import main

MOVING, FIXED = action_layout("pick", True), action_layout("pick", False)


def test_within_reach_measures_from_the_shoulder_and_the_heading():
    # the shoulder 0.033 m ahead of the base centre at the origin, facing +x
    assert within_reach((0, 0, 0), (0.88, 0.0), 0.85, 0.033)  # 0.847 m from the shoulder
    assert not within_reach((0, 0, 0), (0.89, 0.0), 0.85, 0.033)  # 0.857 m
    assert not within_reach((0, 0, 0), (0.0, 0.5), 0.85, 0.033)  # 0.5 m away but 94 deg off
    # 30 degrees off at 0.5 m from the shoulder: in at 31 degrees' tolerance, out at 29
    c = math.radians(30)
    point = (0.033 + 0.5 * math.cos(c), 0.5 * math.sin(c))
    assert within_reach((0, 0, 0), point, 0.85, 0.033, math.radians(31))
    assert not within_reach((0, 0, 0), point, 0.85, 0.033, math.radians(29))
    # a base facing -y at (1, 1): the point 0.6 m below its shoulder is ahead; above it is not
    assert within_reach((1, 1, -math.pi / 2), (1.0, 1 - 0.033 - 0.6), 0.85, 0.033)
    assert not within_reach((1, 1, -math.pi / 2), (1.0, 1.6), 0.85, 0.033)


class _Recording(CountingTeacher):
    """A counting teacher that also records the `executed` actions it is told."""

    def __init__(self, size, index):
        super().__init__(size, index)
        self.executed, self.resets = [], 0

    def reset(self):
        super().reset()
        self.resets += 1

    def act(self, env, obs, executed):
        self.executed.append(None if executed is None else np.array(executed))
        return super().act(env, obs, executed)


def _env(x: float, container: str | None = None):
    """A base at (x, 0) facing +x, the target object at (1, 0) on a receptacle of
    `container` (None: an open surface)."""
    sim = SimpleNamespace(base_pose=lambda: np.array([env.x, 0.0, 0.0]), held=None)
    sim.held_object = lambda: sim.held
    sim.object_pos = lambda i: np.array([1.0, 0.0, 0.5]) if i == 4 else None
    surface = Box((1.0, 0.0, 0.4), (0.3, 0.3, 0.01))
    recs = {"shelf": Receptacle("shelf", "cabinet_0", surface, container)}
    sim.layout = SimpleNamespace(receptacle=lambda name: recs[name])
    target = SimpleNamespace(obj_index=4, receptacle="shelf")
    base = SimpleNamespace(task="pick", sim=sim, target=target)
    env = SimpleNamespace(unwrapped=base, x=x)
    return env


def test_the_labels_hand_off_in_reach_and_back_beyond_the_margin():
    far, near = _Recording(MOVING.size, MOVING.grip), _Recording(FIXED.size, FIXED.grip)
    teacher = HandOffTeacher(far, near, "pick", reach=0.5, shoulder_x=0.0)
    env = _env(0.0)  # 1 m from the target
    teacher.reset()
    first = teacher.act(env, {}, None)
    assert first[MOVING.grip] == 1.0 and not teacher.handed  # the base-moving teacher's
    env.x = 0.4  # 0.6 m: still out
    executed = np.arange(MOVING.size, dtype=np.float32)
    assert teacher.act(env, {}, executed)[MOVING.grip] == 2.0
    resets = near.resets
    env.x = 0.55  # 0.45 m: the fixed-base teacher's, started afresh, the base still
    handed = teacher.act(env, {}, executed)
    assert teacher.handed and near.resets == resets + 1 and near.executed[-1] is None
    want = np.full(MOVING.size, 0.5, np.float32)
    want[MOVING.grip] = 1.0  # its first call since the reset
    want[MOVING.base] = 0.0
    np.testing.assert_array_equal(handed, want)
    assert far.calls == 3  # asked every step: its memory follows the episode
    env.x = 0.45  # 0.55 m: out of reach, inside the 0.10 m margin: the hand-off holds
    again = teacher.act(env, {}, executed)
    assert teacher.handed and again[MOVING.grip] == 2.0 and np.all(again[MOVING.base] == 0.0)
    # the fixed-base teacher is told the executed arm and grip, not the base
    np.testing.assert_array_equal(near.executed[-1], executed[:8])
    env.x = 0.35  # 0.65 m, past the margin: the base-moving teacher's again
    assert teacher.act(env, {}, executed)[MOVING.grip] == 5.0 and not teacher.handed
    env.x = 0.55  # back in reach: handed off again, the fixed-base teacher afresh
    assert teacher.act(env, {}, executed)[MOVING.grip] == 1.0 and near.resets == resets + 2
    env.unwrapped.sim.held = 4  # holding: the hand-off holds wherever the target is
    env.x = -1.0
    assert teacher.act(env, {}, executed)[MOVING.grip] == 2.0 and teacher.handed
    teacher.reset()  # a new episode starts with the base-moving teacher again
    env.unwrapped.sim.held = None
    assert not teacher.handed and teacher.act(env, {}, None)[MOVING.grip] == 1.0


def test_the_hand_back_turns_on_the_bearing_too():
    far, near = _Recording(MOVING.size, MOVING.grip), _Recording(FIXED.size, FIXED.grip)
    teacher = HandOffTeacher(far, near, "pick", reach=0.85, shoulder_x=0.0)
    env = _env(0.5)  # 0.5 m ahead
    teacher.reset()
    teacher.act(env, {}, None)
    assert teacher.handed
    pose = {"yaw": math.radians(40)}  # turned 40 degrees: inside the 45 degree hand-back
    env.unwrapped.sim.base_pose = lambda: np.array([0.5, 0.0, pose["yaw"]])
    teacher.act(env, {}, None)
    assert teacher.handed
    pose["yaw"] = math.radians(50)
    teacher.act(env, {}, None)
    assert not teacher.handed


def test_a_drawer_pick_is_never_handed_off():
    far, near = _Recording(MOVING.size, MOVING.grip), _Recording(FIXED.size, FIXED.grip)
    teacher = HandOffTeacher(far, near, "pick", reach=0.5, shoulder_x=0.0)
    env = _env(0.9, container="drawer_1")  # 0.1 m from the target, in a drawer
    teacher.reset()
    labels = [teacher.act(env, {}, None)[MOVING.grip] for _ in range(3)]
    assert labels == [1.0, 2.0, 3.0] and not teacher.handed and near.calls == 0
    drawer = _Recording(MOVING.size, MOVING.grip)  # a drawer teacher labels them instead
    teacher = HandOffTeacher(far, near, "pick", reach=0.5, shoulder_x=0.0, drawer=drawer)
    teacher.reset()
    assert teacher.act(env, {}, None)[MOVING.grip] == 1.0 and drawer.calls == 1
    assert far.calls == 0 and near.calls == 0  # reset with the episode, not asked since
    env = _env(0.9, container="fridge")  # a fridge shelf is handed off
    teacher.reset()
    assert teacher.act(env, {}, None)[MOVING.base].tolist() == [0.0, 0.0] and teacher.handed


def test_a_fridge_pick_is_driven_by_the_fridge_teacher_then_handed_off():
    far, near = _Recording(MOVING.size, MOVING.grip), _Recording(FIXED.size, FIXED.grip)
    fridge = _Recording(MOVING.size, MOVING.grip)
    teacher = HandOffTeacher(far, near, "pick", reach=0.5, shoulder_x=0.0, fridge=fridge)
    env = _env(0.0, container="fridge")  # 1 m from a target on a fridge shelf
    teacher.reset()
    labels = [teacher.act(env, {}, None)[MOVING.grip] for _ in range(2)]
    assert labels == [1.0, 2.0] and fridge.calls == 2 and far.calls == 0 and not teacher.handed
    env.x = 0.6  # 0.4 m: handed off to the fixed-base teacher, the base still
    label = teacher.act(env, {}, None)
    assert teacher.handed and near.calls == 1 and np.all(label[MOVING.base] == 0.0)
    assert fridge.calls == 3  # still asked: its memory follows the episode
    env = _env(0.0)  # the next episode, an open surface: the base-moving teacher drives
    teacher.reset()
    assert teacher.act(env, {}, None)[MOVING.grip] == 1.0 and far.calls == 1
    assert fridge.calls == 0  # reset with the episode, not asked since


def test_a_place_hands_off_at_its_goal():
    base = SimpleNamespace(task="place", target=SimpleNamespace(goal_pos=(2.0, 3.0, 0.8)))
    np.testing.assert_array_equal(target_point(SimpleNamespace(unwrapped=base)), [2, 3, 0.8])


def test_resolving_the_fixed_base_teacher_and_its_errors():
    spec = resolve_teacher("pick", True, None, fixed_base="shipped", fixed_base_reach=0.8)
    assert spec.fixed_base.endswith("pretrained/pick.pt") and spec.fixed_base_reach == 0.8
    assert spec.path.endswith("pick_bm.pt") and "pick.pt within 0.8 m of the target" in spec.name
    built = spec.build()
    assert isinstance(built, HandOffTeacher)
    assert isinstance(built.far, CheckpointTeacher) and built.near.base_movement is False
    assert built.near.action_dim == FIXED.size and built.far.action_dim == MOVING.size
    with pytest.raises(TeacherError, match=r"^distill.fixed_base_teacher: nav has no fixed-base"):
        resolve_teacher("nav", False, None, fixed_base="shipped", fixed_base_reach=0.85)
    with pytest.raises(TeacherError, match="does not move the base: add --base-movement"):
        resolve_teacher("pick", False, None, fixed_base="shipped", fixed_base_reach=0.85)
    with pytest.raises(TeacherError, match=r"^distill.fixed_base_reach=0: give the hand-off"):
        resolve_teacher("pick", True, None, fixed_base="shipped", fixed_base_reach=0.0)
    bm = "rearrange/skills/pretrained/pick_bm.pt"
    with pytest.raises(
        TeacherError, match=r"pick_bm.pt was trained with base movement: pass a fixed-base pick"
    ):
        resolve_teacher("pick", True, None, fixed_base=bm, fixed_base_reach=0.85)
    with pytest.raises(TeacherError, match="no such file or run directory"):
        resolve_teacher("pick", True, None, fixed_base="nowhere.pt", fixed_base_reach=0.85)
    oracle = resolve_teacher(
        "pick", True, "oracle", fixed_base="shipped", fixed_base_reach=0.85, drawer="shipped"
    )
    assert oracle.oracle and oracle.drawer.endswith("pretrained/pick_bm.pt")
    built = oracle.build()
    assert isinstance(built.far, OracleTeacher) and isinstance(
        built.drawer_teacher, CheckpointTeacher
    )
    assert built.drawer_teacher.action_dim == MOVING.size and "pick_bm.pt in drawers" in oracle.name
    with pytest.raises(TeacherError, match=r"^distill.drawer_teacher: only a pick handed off"):
        resolve_teacher("pick", True, "oracle", drawer="shipped")
    fixed = "rearrange/skills/pretrained/pick.pt"
    with pytest.raises(
        TeacherError, match=r"^distill.drawer_teacher: --teacher .*pick.pt was trained without"
    ):
        resolve_teacher(
            "pick", True, None, fixed_base="shipped", fixed_base_reach=0.85, drawer=fixed
        )
    fridge = resolve_teacher(
        "pick", True, None, fixed_base="shipped", fixed_base_reach=0.85, fridge="oracle"
    )
    assert fridge.fridge == "oracle" and isinstance(fridge.build().fridge_teacher, OracleTeacher)
    assert fridge.name.endswith("the scripted pick oracle driving to the fridge")
    with pytest.raises(TeacherError, match=r"^distill.fridge_teacher: only a pick handed off"):
        resolve_teacher("pick", True, None, fridge="oracle")
    with pytest.raises(
        TeacherError, match=r"^distill.fridge_teacher: --teacher .*pick.pt was trained without"
    ):
        resolve_teacher(
            "pick", True, None, fixed_base="shipped", fixed_base_reach=0.85, fridge=fixed
        )
    with pytest.raises(ValueError, match="DistillConfig.fixed_base_reach must be in"):
        DistillConfig(fixed_base_reach=3.0)


def test_in_the_sim_the_hand_off_labels_a_still_base(tmp_path):
    from rearrange.tasks import default_task_config, make_env

    spec = resolve_teacher("pick", True, None, fixed_base="shipped", fixed_base_reach=2.0)
    teacher = spec.build()
    cfg = default_task_config("pick", obs_preset="state", num_episodes=1, base_movement=True)
    env = make_env("pick", cfg, "val", 0)
    try:
        obs, _ = env.reset(options={"episode_index": 0})
        teacher.reset()
        label = teacher.act(env, obs, None)  # every val start is within 2 m: handed at once
        assert teacher.handed and label.shape == (MOVING.size,)
        assert np.all(label[MOVING.base] == 0.0) and np.any(label[MOVING.arm] != 0.0)
    finally:
        env.close()


def test_a_run_records_the_hand_off_and_resumes_with_it(tmp_path, caplog, capsys):
    argv, latest = tiny_run(tmp_path, "pick", "h")
    argv = [*argv, "--base-movement"]
    hand = ["distill.fixed_base_teacher=shipped", "distill.fixed_base_reach=0.7",
            "distill.drawer_teacher=shipped", "distill.fridge_teacher=oracle"]  # fmt: skip
    assert main([*argv, *hand, "run.total_steps=32"]) == 0
    banner = "then the shipped fixed-base checkpoint within 0.7 m of the target, the shipped "
    banner += "base-moving checkpoint in drawers, the scripted oracle driving to the fridge"
    assert banner in capsys.readouterr().err
    learner = SkillCheckpoint.load(latest).training.learner
    assert learner["fixed_base"].endswith("pick.pt") and learner["fixed_base_reach"] == 0.7
    assert learner["drawer"].endswith("pick_bm.pt") and learner["fridge"] == "oracle"
    with caplog.at_level("INFO"):
        assert main([*argv, "--resume", "run.total_steps=64"]) == 0
    assert "labelling within 0.7 m, as the run recorded" in caplog.text
    learner = SkillCheckpoint.load(latest).training.learner
    assert learner["fixed_base"].endswith("pick.pt") and learner["fixed_base_reach"] == 0.7
    assert learner["drawer"].endswith("pick_bm.pt") and learner["fridge"] == "oracle"
