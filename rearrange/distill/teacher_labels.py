"""The teacher beside the simulator: every observation of the student's env carries the
teacher's action for that state, computed in the env worker from the same sim.

`TeacherLabelFactory` wraps the run's env factory; in each env worker it builds the task env
and wraps it in `TeacherLabelWrapper`, which adds one key to the observation,
`teacher_action` (the teacher's mean action in the task's action layout, unclipped), so the
label travels to the trainer in the worker's shared-memory observation row like any other
key: no change to the env workers, and no second copy of the sim. The trainer strips the key
before the student sees the observation (the student's checkpoint never has it).

The teacher (`CheckpointTeacher`) is a learned skill's network loaded by the checkpoint
loader of `skills/learned.py`; it observes its own preset (recorded in its checkpoint:
"state" or "state_rays"), built by `tasks/sensors.build_observation` from the env's sim and
target, and keeps its recurrent state and previous action per env, reset at episode start.
Its previous action is the action the env executed (the teacher's own when β chose it, the
student's otherwise): the teacher's memory follows what happened, and with β = 1 it is
exactly the deployed skill (`LearnedSkill`, deterministic). On the synthetic reach env the
teacher is scripted (`ReachTeacher`). `--teacher oracle` labels with the skill's scripted
oracle instead (`OracleTeacher`: nav's shortest-path follower, re-planned from wherever the
executed actions took the robot). `distill.oracle_near=R` (nav) mixes the two
(`NearGoalTeacher`): the checkpoint labels beyond R metres of the goal point, the oracle
within, so the student learns the oracle's exact stop at the goal pose and the learned
teacher's driving on the way there.

`resolve_teacher` finds and checks the teacher in the main process before any worker
starts; each problem is one line (`TeacherError`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import gymnasium as gym
import numpy as np

from rearrange.skill_spec import SUCCESS, action_layout, skill_def

TEACHER_KEY = "teacher_action"
"""The observation key holding the teacher's action (never a student input)."""
SYNTHETIC = "synthetic"
ORACLE = "oracle"
"""`--teacher oracle` (distill.teacher): the skill's scripted oracle labels the states."""


class TeacherError(ValueError):
    """The teacher checkpoint is missing, unreadable or does not fit the run (one line)."""


class Teacher(Protocol):
    def reset(self) -> None: ...

    def act(self, env: gym.Env, obs: dict, executed: np.ndarray | None) -> np.ndarray:
        """The teacher's action [A] (float32) for the env's current state; `executed` is the
        action the env just executed (None at an episode's first step)."""
        ...


@dataclass(frozen=True)
class TeacherSpec:
    """A picklable description of the teacher, built into a `Teacher` in each env worker."""

    skill: str
    path: str | None
    """The checkpoint (absolute); None: the scripted teacher of the synthetic env."""
    base_movement: bool = False
    obs_preset: str = "state"
    move_scale: float = 0.25
    """Synthetic env: metres per unit action (the scripted teacher's gain)."""
    oracle: bool = False
    """The skill's scripted oracle is the teacher (`--teacher oracle`; path None)."""
    oracle_near: float = 0.0
    """m: within this distance of the nav goal point the oracle labels instead of the
    checkpoint (`distill.oracle_near`, `NearGoalTeacher`); 0: off."""
    oracle_yaw_tol: float | None = None
    """degrees: nav's oracle stops within this of the goal heading (`distill.oracle_yaw_tol`);
    None: `OracleTeacher.NAV_YAW_TOL`."""
    unjam: bool = False
    """After a step the world jammed, the label backs away instead (`distill.unjam`,
    `distill/unjam.py`)."""
    grip_near: float = 0.0
    """m (pick): the grip label is open until the gripper is this close to the target
    (`distill.grip_near`, `distill/grip_labels.py`); 0: off."""
    grip_clear: float = 0.0
    """m (pick): the grip label is open while another object is this close to the gripper
    and nearer than the target (`distill.grip_clear`); 0: off."""
    fixed_base: str | None = None
    """The fixed-base checkpoint (absolute) that labels a base-moving pick or place once the
    target is within `fixed_base_reach` of the shoulder (`distill.fixed_base_teacher`,
    `distill/hand_off.py`); None: off."""
    fixed_base_reach: float = 0.0
    """m: the hand-off's shoulder-to-target distance (with `fixed_base`)."""
    drawer: str | None = None
    """With `fixed_base`: the base-moving checkpoint (absolute) that labels picks from a
    drawer, never handed off (`distill.drawer_teacher`); None: the teacher labels them."""
    fridge: str | None = None
    """With `fixed_base` (pick): 'oracle' (the scripted pick oracle) or a base-moving
    checkpoint (absolute) whose labels drive the picks from the fridge's shelves, handed off
    as the others (`distill.fridge_teacher`); None: the teacher drives them."""
    release_dist: float | None = None
    """m (place): the release distance the teacher's checkpoint was trained under
    (`task.thresholds.place_release`); None: the default, or not a place checkpoint."""

    @property
    def name(self) -> str:
        jam = ", backing away after a jammed step" if self.unjam else ""
        from rearrange.distill.grip_labels import describe

        hand = ""
        if self.fixed_base:
            hand = f", {self.fixed_base} within {self.fixed_base_reach:g} m of the target"
        if self.drawer:
            hand += f", {self.drawer} in drawers"
        if self.fridge:
            driver = f"the scripted {self.skill} oracle" if self.fridge == ORACLE else self.fridge
            hand += f", {driver} driving to the fridge"
        return self._name() + hand + jam + describe(self.grip_near, self.grip_clear)

    def _name(self) -> str:
        square = (
            "" if self.oracle_yaw_tol is None else f" (stop within {self.oracle_yaw_tol:g} deg)"
        )
        if self.oracle:
            return f"the scripted {self.skill} oracle{square}"
        if self.oracle_near > 0:
            near = f"the scripted oracle within {self.oracle_near:g} m of the goal{square}"
            return f"{self.path}, {near}"
        return self.path or "scripted reach teacher"

    @property
    def record(self) -> str | None:
        """What a checkpoint records as the run's teacher (`--resume` keeps it)."""
        return ORACLE if self.oracle else self.path

    def build(self) -> Teacher:
        teacher = self._build()
        if self.unjam:
            from rearrange.distill.unjam import UnjamTeacher

            teacher = UnjamTeacher(teacher, action_layout(self.skill, self.base_movement))
        if self.grip_near > 0 or self.grip_clear > 0:
            from rearrange.distill.grip_labels import GripLabelTeacher

            layout = action_layout(self.skill, self.base_movement)
            teacher = GripLabelTeacher(teacher, layout, self.grip_near, self.grip_clear)
        return teacher

    def _build(self) -> Teacher:
        if self.fixed_base:
            from rearrange.distill.hand_off import HandOffTeacher
            from rearrange.sim.placement.spawns import PlacementConfig

            far = dataclasses.replace(self, fixed_base=None)._build()
            near = CheckpointTeacher(dataclasses.replace(self, path=self.fixed_base), False)
            drawer = fridge = None
            if self.drawer:
                drawer = CheckpointTeacher(dataclasses.replace(self, path=self.drawer))
            if self.fridge == ORACLE:
                fridge = OracleTeacher(oracle_teacher(self.skill, self.base_movement))
            elif self.fridge:
                fridge = CheckpointTeacher(dataclasses.replace(self, path=self.fridge))
            shoulder = PlacementConfig().shoulder_x
            return HandOffTeacher(
                far, near, self.skill, self.fixed_base_reach, shoulder, drawer, fridge
            )
        if self.oracle:
            return OracleTeacher(self)
        if self.path is None:
            return ReachTeacher(self.move_scale)
        if self.oracle_near > 0:
            return NearGoalTeacher(CheckpointTeacher(self), OracleTeacher(self), self.oracle_near)
        return CheckpointTeacher(self)


class ReachTeacher:
    """The synthetic reach env's expert: move straight to the goal, at most one unit a step."""

    def __init__(self, move_scale: float):
        self.move_scale = move_scale

    def reset(self) -> None:
        pass

    def act(self, env: gym.Env, obs: dict, executed: np.ndarray | None) -> np.ndarray:
        delta = np.asarray(obs["delta"], np.float32)
        return np.clip(delta / self.move_scale, -1.0, 1.0).astype(np.float32)


class OracleTeacher:
    """A skill's scripted oracle as the teacher, acting on the env's own sim and target.

    The oracle keeps its plan between steps and re-plans from where the robot is (nav:
    `PathFollower` pops passed waypoints, skips to one in plain view and plans again every
    `NAV_REPLAN_EVERY` steps), so its action stays the expert's for the state the student
    drove into. Only nav has been trained from it (benchmarks/RESULTS.md, "Nav from the
    oracle"); the manipulation oracles plug in the same way, untried. Nav's follower here turns to the goal heading once
    within `NAV_POS_TOL` of the goal point and stops within `NAV_YAW_TOL` of it, not at its
    own 3 cm / 2 degrees: a student hovering a few centimetres off the point would otherwise
    get "turn 90 degrees, drive 16 cm, turn back" labels it cannot follow, and a stop label
    it never meets (traced: with 0.10 m / 5 degrees the student stopped calling stop within
    16k steps and timed out 30 of 30 val episodes 0.16 m from the goal). The region stays
    inside the 0.5 m / 15 degree success rule the student trains at; its stop is the label
    the veto (distill.stop_veto) compares with.

    The follower's recoveries are off here (`NAV_NO_RECOVERY`): they react to its own
    history (the base did not move for 10 steps: back up 6; guarded too long: back off;
    a turn sweeps the arm: reverse up to 24 steps), and under a student that stands still
    they fire again and again, so the same frame was labelled "back up" and "drive and turn"
    by turns and the student, regressing to their mean, froze (traced at 16k steps: 20 % of
    20 val episodes, 115 collision steps each). Without them the label is the path's command
    through `guard_base`, re-planned every `NAV_REPLAN_EVERY` steps."""

    NAV_POS_TOL = 0.20  # m
    NAV_YAW_TOL = math.radians(10.0)
    NAV_REPLAN_EVERY = 5  # steps (the follower alone: 60); the student strays from the plan
    NAV_NO_RECOVERY = dict(stuck_window=10**9, guard_patience=10**9, sweep_backup=0)

    def __init__(self, spec: TeacherSpec):
        from rearrange.skills.registry import make_oracle

        self.oracle = make_oracle(spec.skill, spec.base_movement)
        follower = getattr(self.oracle, "follower", None)
        if spec.skill == "nav" and follower is not None:
            follower.cfg = dataclasses.replace(
                follower.cfg,
                pos_tol=self.NAV_POS_TOL,
                yaw_tol=self.yaw_tol(spec),
                replan_every=self.NAV_REPLAN_EVERY,
                **self.NAV_NO_RECOVERY,
            )
        self._started = False

    @classmethod
    def yaw_tol(cls, spec: TeacherSpec) -> float:
        """rad: the run's stop tolerance on the goal heading."""
        if spec.oracle_yaw_tol is None:
            return cls.NAV_YAW_TOL
        return math.radians(spec.oracle_yaw_tol)

    def reset(self) -> None:
        self._started = False

    def act(self, env: gym.Env, obs: dict, executed: np.ndarray | None) -> np.ndarray:
        base = env.unwrapped
        if not self._started:  # the episode's target exists once the env has reset
            self.oracle.reset(base.target, base.sim)
            self._started = True
        return np.asarray(self.oracle.act(obs, base.sim), np.float32)


class CheckpointTeacher:
    """A learned skill's policy acting on its own observation preset of the env's sim."""

    def __init__(self, spec: TeacherSpec, base_movement: bool | None = None):
        """`base_movement`: the sensors it observes, with or without the base-movement ones;
        None: the env's (a fixed-base teacher of a base-moving run passes False)."""
        import torch

        from rearrange.skills.learned import build_policy_from_checkpoint

        self.base_movement = base_movement
        self._torch = torch
        self.policy, ckpt = build_policy_from_checkpoint(Path(spec.path), spec.skill, "cpu")
        self.keys = tuple(ckpt.observation_space.spaces)
        self.preset = ckpt.obs_preset
        self.action_dim = int(np.prod(ckpt.action_space.shape))
        self.reset()

    def reset(self) -> None:
        torch, p = self._torch, self.policy
        self._hidden = torch.zeros(1, p.num_recurrent_layers, p.hidden_size)
        self._prev = torch.zeros(1, self.action_dim)
        self._not_done = torch.zeros(1, dtype=torch.bool)

    def observation(self, env: gym.Env) -> dict[str, np.ndarray]:
        """The teacher's observation of the env's current state (its preset, same sim)."""
        from rearrange.tasks.sensors import build_observation

        base = env.unwrapped
        moving = base.config.base_movement if self.base_movement is None else self.base_movement
        obs = build_observation(base.task, self.preset, base.sim, base.target, moving)
        return {k: obs[k] for k in self.keys}

    def act(self, env: gym.Env, obs: dict, executed: np.ndarray | None) -> np.ndarray:
        torch = self._torch
        if executed is not None:
            self._prev = torch.as_tensor(np.asarray(executed, np.float32)).reshape(1, -1)
        tensors = {
            k: torch.as_tensor(v, dtype=torch.float32)[None]
            for k, v in self.observation(env).items()
        }
        with torch.no_grad():
            _, action, _, self._hidden = self.policy.act(
                tensors, self._hidden, self._prev, self._not_done, deterministic=True
            )
        self._not_done = torch.ones(1, dtype=torch.bool)
        return action[0].numpy().astype(np.float32)


class NearGoalTeacher:
    """The checkpoint's label beyond `radius` metres of the nav goal point, the oracle's
    within (`distill.oracle_near`). Both act on every step, so the checkpoint's recurrent
    state and the oracle's plan follow the whole episode whichever one labels it.

    Why: the depth nav distilled from the state nav stopped 0.3-0.5 m from the goal, inside
    the 0.5 m success radius the teacher stops within, but where the manipulation students
    that follow it in HAB cannot start (benchmarks/RESULTS.md, set_table on depth); the
    oracle stops within `OracleTeacher.NAV_POS_TOL` / `NAV_YAW_TOL`. Far from the goal the
    oracle's map-planned labels taught worse than the learned teacher's ("Nav from the
    oracle"), so they stay the checkpoint's there."""

    def __init__(self, far: Teacher, near: Teacher, radius: float):
        self.far, self.near, self.radius = far, near, float(radius)

    def reset(self) -> None:
        self.far.reset()
        self.near.reset()

    def act(self, env: gym.Env, obs: dict, executed: np.ndarray | None) -> np.ndarray:
        from rearrange.tasks.nav import goal_pose_error

        far = self.far.act(env, obs, executed)
        near = self.near.act(env, obs, executed)
        base = env.unwrapped
        dist, _ = goal_pose_error(base.sim, base.target.nav_goal)
        return near if dist <= self.radius else far


class TeacherLabelWrapper(gym.Wrapper):
    """Adds `teacher_action` to every observation: the teacher's action for that state. The
    final observation of an episode (the runner resets right after it) gets zeros: no
    student step is trained on it."""

    def __init__(self, env: gym.Env, teacher: Teacher):
        super().__init__(env)
        if TEACHER_KEY in env.observation_space.spaces:
            raise ValueError(f"the env already observes {TEACHER_KEY!r}")
        self.teacher = teacher
        shape = env.action_space.shape
        spaces = dict(env.observation_space.spaces)
        spaces[TEACHER_KEY] = gym.spaces.Box(-np.inf, np.inf, shape, np.float32)
        self.observation_space = gym.spaces.Dict(spaces)
        self._zeros = np.zeros(shape, np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self.teacher.reset()
        return self._labelled(obs, None), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            obs = {**obs, TEACHER_KEY: self._zeros}
        else:
            obs = self._labelled(obs, np.asarray(action, np.float32))
        return obs, reward, terminated, truncated, info

    def _labelled(self, obs: dict, executed: np.ndarray | None) -> dict:
        return {**obs, TEACHER_KEY: self.teacher.act(self.env, obs, executed)}


@dataclass
class TeacherLabelFactory:
    """Picklable env factory: the run's env `index`, labelled by the teacher of `spec`."""

    inner: Any
    spec: TeacherSpec

    def __call__(self, index: int) -> gym.Env:
        return TeacherLabelWrapper(self.inner(index), self.spec.build())


# ---------------------------------------------------------------- finding and checking
def resolve_teacher(
    skill: str,
    base_movement: bool,
    teacher: str | None,
    move_scale: float = 0.25,
    oracle_near: float = 0.0,
    oracle_yaw_tol: float | None = None,
    unjam: bool = False,
    grip_near: float = 0.0,
    grip_clear: float = 0.0,
    fixed_base: str | None = None,
    fixed_base_reach: float = 0.0,
    drawer: str | None = None,
    fridge: str | None = None,
) -> TeacherSpec:
    """The teacher of a run: `teacher` (a checkpoint or a run directory) or the shipped
    checkpoint of (skill, base movement), checked to fit, with the oracle near the goal when
    `oracle_near` > 0 (nav), backing away after jammed steps with `unjam` (a skill that
    drives), the grip open until `grip_near` m from the target and while another object is
    within `grip_clear` m (pick), and the fixed-base checkpoint `fixed_base` ('shipped': the
    shipped one) labelling once the target is within `fixed_base_reach` m of the shoulder
    (a base-moving pick or place), the base-moving checkpoint `drawer` labelling its drawer
    picks and `fridge` ('oracle' or a base-moving checkpoint) driving its fridge picks;
    TeacherError (one line) if not."""
    if oracle_near > 0:
        check_oracle_near(skill, base_movement, teacher)
    if unjam:
        check_unjam(skill, base_movement)
    for name, radius in (("grip_near", grip_near), ("grip_clear", grip_clear)):
        if radius:
            check_grip_label(skill, name, radius)
    spec = _resolve(skill, base_movement, teacher, move_scale, oracle_near, oracle_yaw_tol)
    if fixed_base is not None:
        spec = dataclasses.replace(
            spec,
            fixed_base=check_fixed_base(skill, base_movement, fixed_base, fixed_base_reach),
            fixed_base_reach=float(fixed_base_reach),
        )
    if drawer is not None:
        spec = dataclasses.replace(spec, drawer=check_drawer(skill, base_movement, drawer, spec))
    if fridge is not None:
        spec = dataclasses.replace(spec, fridge=check_fridge(skill, base_movement, fridge, spec))
    return dataclasses.replace(
        spec, unjam=unjam, grip_near=float(grip_near), grip_clear=float(grip_clear)
    )


FIXED_BASE_SHIPPED = "shipped"
"""`distill.fixed_base_teacher=shipped` (`drawer_teacher=shipped`): the shipped fixed-base
(base-moving) checkpoint of the skill."""


def check_drawer(
    skill: str, base_movement: bool, path: str, spec: TeacherSpec, where: str = "drawer"
) -> str:
    """The absolute path of `distill.drawer_teacher` (`where`="fridge":
    `distill.fridge_teacher`) if it can label the drawer (fridge) picks of a hand-off run;
    TeacherError (one line) if not."""
    name = _check_apart(skill, spec, where)
    found = teacher_path(skill, base_movement, None if path == FIXED_BASE_SHIPPED else path)
    try:
        check_teacher(found, skill, base_movement)
    except TeacherError as exc:
        raise TeacherError(f"{name}: {exc}") from None
    return str(found.resolve())


def check_fridge(skill: str, base_movement: bool, teacher: str, spec: TeacherSpec) -> str:
    """`distill.fridge_teacher`: 'oracle', or the absolute path of a base-moving checkpoint,
    if it can drive the fridge picks of a hand-off run; TeacherError (one line) if not."""
    if teacher != ORACLE:
        return check_drawer(skill, base_movement, teacher, spec, where="fridge")
    name = _check_apart(skill, spec, "fridge")
    try:
        oracle_teacher(skill, base_movement)
    except TeacherError as exc:
        raise TeacherError(f"{name}: {exc}") from None
    return ORACLE


def _check_apart(skill: str, spec: TeacherSpec, where: str) -> str:
    """The option's name, if the run can label its `where` picks apart: a pick handed off
    to a fixed-base teacher; TeacherError (one line) if not."""
    name = f"distill.{where}_teacher"
    if not spec.fixed_base or skill != "pick":
        raise TeacherError(
            f"{name}: only a pick handed off to a fixed-base teacher labels {where} picks "
            "apart: add distill.fixed_base_teacher or drop it"
        )
    return name


def check_fixed_base(
    skill: str,
    base_movement: bool,
    path: str,
    reach: float,
    name: str = "distill.fixed_base_teacher",
    reach_name: str = "distill.fixed_base_reach",
) -> str:
    """The absolute path of `distill.fixed_base_teacher` (`name`: the option that gave it,
    e.g. task.hand_off_to) if it can take a base-moving pick or place over within `reach` m;
    TeacherError (one line) if not."""
    from rearrange.distill.hand_off import HAND_OFF_SKILLS

    if skill not in HAND_OFF_SKILLS:
        raise TeacherError(
            f"{name}: {skill} has no fixed-base hand-off (pick and place do): drop it"
        )
    if not base_movement:
        raise TeacherError(
            f"{name}: the run does not move the base: add --base-movement or drop it"
        )
    if not 0 < reach <= 2:
        raise TeacherError(
            f"{reach_name}={reach:g}: give the hand-off distance in metres in (0, 2], "
            "e.g. 0.85 (the close spawns' reach)"
        )
    from rearrange.runtime.checkpoint import CheckpointError, SkillCheckpoint

    found = None
    try:
        found = teacher_path(skill, False, None if path == FIXED_BASE_SHIPPED else path)
        check_teacher(found, skill, False)
    except TeacherError as exc:
        message = str(exc)
        try:  # check_teacher's fix for a base-moving file is the run's flag, not this one
            moving = found is not None and SkillCheckpoint.load(found, skill=skill).base_movement
        except CheckpointError:
            moving = False
        if moving:
            message = (
                f"{found} was trained with base movement: pass a fixed-base {skill} checkpoint "
                f"(e.g. rearrange/skills/pretrained/{skill}.pt, or '{FIXED_BASE_SHIPPED}')"
            )
        raise TeacherError(f"{name}: {message}") from None
    return str(found.resolve())


def check_grip_label(skill: str, name: str, radius: float) -> None:
    """`distill.grip_near` / `grip_clear` need a skill that grasps a target object (pick)
    and metres in (0, 1)."""
    grasps = skill != SYNTHETIC and skill_def(skill).grip_rule == "keep_on_when_holding"
    if not grasps:
        raise TeacherError(
            f"distill.{name}: {skill} grasps no target object (only pick does): drop it"
        )
    if not 0 < radius < 1:
        raise TeacherError(f"distill.{name}={radius}: give metres in (0, 1), e.g. 0.05, or drop it")


def check_unjam(skill: str, base_movement: bool) -> None:
    """`distill.unjam` needs a skill whose actions drive the base."""
    drives = skill != SYNTHETIC and action_layout(skill, base_movement).base is not None
    if not drives:
        fix = " (add --base-movement)" if skill != SYNTHETIC else ""
        raise TeacherError(
            f"distill.unjam: {skill} does not drive the base{fix}; drop distill.unjam"
        )


def _resolve(skill, base_movement, teacher, move_scale, oracle_near, oracle_yaw_tol):
    """`resolve_teacher` less the unjam flag."""
    if skill == SYNTHETIC:
        if teacher is not None:
            raise TeacherError(
                "the synthetic env's teacher is scripted: drop --teacher (distill.teacher)"
            )
        return TeacherSpec(SYNTHETIC, None, move_scale=move_scale)
    if oracle_yaw_tol is not None and not 0 < oracle_yaw_tol < 180:
        raise TeacherError(
            f"distill.oracle_yaw_tol={oracle_yaw_tol}: give degrees in (0, 180), or drop it "
            f"for {math.degrees(OracleTeacher.NAV_YAW_TOL):g}"
        )
    if teacher == ORACLE:
        spec = oracle_teacher(skill, base_movement)
        return dataclasses.replace(spec, oracle_yaw_tol=oracle_yaw_tol)
    path = teacher_path(skill, base_movement, teacher)
    ckpt = check_teacher(path, skill, base_movement)
    return TeacherSpec(
        skill,
        str(path.resolve()),
        ckpt.base_movement,
        ckpt.obs_preset,
        oracle_near=oracle_near,
        oracle_yaw_tol=oracle_yaw_tol,
        release_dist=ckpt.release_dist,
    )


def release_mismatch(spec: TeacherSpec, run_release: float) -> str | None:
    """One line when a place teacher was trained to let go within another distance of the
    goal than the run's release mask (`task.thresholds.place_release`), else None: its labels
    then ask releases the mask refuses, or let go later than the student may."""
    if spec.skill != "place" or spec.path is None or spec.oracle:
        return None
    trained = SUCCESS.place_release if spec.release_dist is None else spec.release_dist
    if math.isclose(trained, run_release):
        return None
    return (
        f"distill: the teacher {spec.path} was trained to let go within {trained:g} m of the "
        f"goal and this run masks the release at {run_release:g} m: pass "
        f"task.thresholds.place_release={trained:g} to train under the teacher's"
    )


def check_oracle_near(skill: str, base_movement: bool, teacher: str | None) -> None:
    """`distill.oracle_near` needs a nav-goal skill with an oracle and a checkpoint teacher."""
    if skill == SYNTHETIC or skill_def(skill).target != "nav_goal":
        raise TeacherError(
            f"distill.oracle_near: {skill} has no nav goal to be near (only nav): drop it"
        )
    if teacher == ORACLE:
        raise TeacherError(
            "distill.oracle_near with --teacher oracle: the oracle labels everywhere already; "
            "drop one of them"
        )
    oracle_teacher(skill, base_movement)  # TeacherError if the skill has no oracle


def oracle_teacher(skill: str, base_movement: bool) -> TeacherSpec:
    """`--teacher oracle`: the skill's scripted oracle, if it has one (TeacherError if not)."""
    from rearrange.skills.base import SkillError
    from rearrange.skills.registry import make_oracle

    try:
        make_oracle(skill, base_movement)
    except SkillError as exc:
        raise TeacherError(f"--teacher oracle: {exc}") from None
    return TeacherSpec(skill, None, base_movement, obs_preset=ORACLE, oracle=True)


def teacher_path(skill: str, base_movement: bool, teacher: str | None) -> Path:
    """The checkpoint file `teacher` names (a file, a train_skill run), through the skills'
    checkpoint lookup; None: the shipped one."""
    from rearrange.skills.base import SkillError
    from rearrange.skills.checkpoint_lookup import find_skill_checkpoint

    if teacher is None:
        try:
            return find_skill_checkpoint(skill, base_movement)
        except SkillError as exc:
            raise TeacherError(f"no teacher: {exc}; or pass --teacher CKPT") from None
    path = Path(teacher).expanduser()
    if not path.exists():
        raise TeacherError(
            f"--teacher {teacher}: no such file or run directory; pass a state checkpoint of "
            f"{skill} (rearrange/skills/pretrained/{skill}.pt, runs/{skill}/RUN) or drop "
            "--teacher for the shipped one"
        )
    if path.is_file():
        return path
    try:
        return find_skill_checkpoint(skill, base_movement, checkpoints=path)
    except SkillError as exc:
        raise TeacherError(f"--teacher {teacher}: {exc}") from None


def check_teacher(path: Path, skill: str, base_movement: bool):
    """The teacher's `SkillCheckpoint` if it can label this run's states: readable, of the
    same skill and base movement, on state observations the task provides, with the task's
    action layout, and buildable; TeacherError (one line) naming what is wrong otherwise."""
    from rearrange.runtime.checkpoint import CheckpointError, SkillCheckpoint, checkpoint_stem
    from rearrange.skill_spec import action_layout
    from rearrange.skills.base import SkillError
    from rearrange.skills.learned import build_policy_from_checkpoint
    from rearrange.tasks.sensors import task_observation_space

    try:
        ckpt = SkillCheckpoint.load(path, skill=skill)
    except CheckpointError as exc:
        raise TeacherError(f"--teacher: {exc}") from None
    drop = "or drop --teacher for the shipped one"
    if ckpt.skill != skill:
        raise TeacherError(
            f"--teacher {path} is a {ckpt.skill!r} checkpoint, not one of {skill!r}: pass a "
            f"{skill} checkpoint {drop}"
        )
    if skill_def(skill).has_base_movement_variant and ckpt.base_movement != base_movement:
        trained = "with" if ckpt.base_movement else "without"
        fix = "add" if ckpt.base_movement else "drop"
        raise TeacherError(
            f"--teacher {path} was trained {trained} base movement: {fix} --base-movement, or "
            f"pass a {checkpoint_stem(skill, base_movement)} checkpoint {drop}"
        )
    if ckpt.obs_preset == "depth":
        raise TeacherError(
            f"--teacher {path} acts on depth: the teacher must be a privileged state policy "
            f"(obs preset state, state_rays or state_head_rays), e.g. the shipped {skill}.pt"
        )
    want = (action_layout(skill, base_movement).size,)
    if tuple(ckpt.action_space.shape) != want:
        raise TeacherError(
            f"--teacher {path} acts in {tuple(ckpt.action_space.shape)} but {skill}'s actions "
            f"are {want}: pass a checkpoint of this task {drop}"
        )
    provided = task_observation_space(skill, ckpt.obs_preset, base_movement=base_movement).spaces
    for key, space in ckpt.observation_space.spaces.items():
        if key not in provided or provided[key].shape != space.shape:
            raise TeacherError(
                f"--teacher {path} observes {key!r} {space.shape}, which {skill} does not "
                f"provide under preset {ckpt.obs_preset!r}: pass a checkpoint of this "
                f"rearrange {drop}"
            )
    try:
        build_policy_from_checkpoint(path, skill, "cpu")
    except SkillError as exc:
        raise TeacherError(f"--teacher: {exc}") from None
    return ckpt
