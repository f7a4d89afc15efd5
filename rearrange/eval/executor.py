"""TP-SRL executor: run a PDDL plan's skills in order on the HAB composite env.

For each plan step the executor builds the skill's target, runs the skill on
`HabEnv.observe` / `HabEnv.apply_action` until it ends by its own termination (nav: stop;
others: `is_done`; all: their step limit), then checks the step's PDDL postcondition with
the habitat-lab predicate thresholds (robot_at ≤ 2 m, object_at ≤ 0.3 m, opened / closed).
The first failed postcondition ends the episode; the number of interactions completed
before it is the episode's stage (VER Fig. 6). The whole episode is cut at 3000 steps.

HRL masks (VER Appendix B) are applied here, so every skill gets them whatever it does
internally: nav stop is ignored while the nav skill's own goal sensor reads more than the
stop-mask distance (`ExecutorConfig.stop_mask_dist`: the nav's training success radius +
0.5 m, the paper's 2 m when unknown; docs/DESIGN.md §8.4), and each skill's grip rule holds
(tasks/grip_rules.py): pick keeps its grip on once holding, place keeps it on until near its
goal and off once released, open/close hold the handle until the joint reaches its target
(nav has no grip dimension, so the sim keeps the current hold).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from rearrange.eval.episode_film import EpisodeFilm
from rearrange.eval.frame_layout import FrameLayout
from rearrange.eval.held_pose import held_pose
from rearrange.eval.report import EpisodeRecord, FailureCause
from rearrange.planner import PlanStep, plan_stages
from rearrange.sim.geometry import wrap_angle
from rearrange.sim.placement import COMFORT_REACH, PlacementConfig, nav_goal_pose, shoulder_reach
from rearrange.skill_spec import HAB_STEP_LIMITS, action_layout, skill_def
from rearrange.skills import Skill
from rearrange.skills.nav_unstick import (
    MAX_UNSTICKS,
    STUCK_WINDOW,
    StuckWatch,
    unstick_moves,
)
from rearrange.skills.reset_arm import (
    BACKOFF_LAYOUT_SKILL,
    RESET_ARM_LAYOUT_SKILL,
    RESET_ARM_STEPS,
    ResetArm,
    backoff_steps,
    reverse_action,
)
from rearrange.tasks import HabEnv
from rearrange.tasks.grip_rules import PLACE_RELEASE_DIST, GripTracker
from rearrange.tasks.nav import goal_pose_error
from rearrange.tasks.stop_rule import (
    HAB_STOP_MASK_HEADING,
    hab_stop_mask_dist,
    mask_nav_stop,
    nav_goal_distance,
    nav_goal_heading,
)

FLOOR_Z = 0.2  # m: an object centre below this has fallen off its receptacle
# m shoulder -> object at the nav goal before a pick: the middle of the pick skill's start
# distribution (close spawns, uniform over navmap cells, lie mostly 0.7-0.85 m out) and of
# the nav's goal distribution (the same spawns). Aimed at the placement's comfortable 0.6 m,
# a learned nav's stop error (~0.2 m, toward the furniture) leaves the object too close to
# the shoulder for the pick (docs/DESIGN.md §8.4).
PICK_STAND_REACH = 0.75
_SHOULDER_X = PlacementConfig().shoulder_x  # m: the arm's pan axis ahead of the base centre

FrameSink = Callable[[np.ndarray], None]


@dataclass
class ExecutorConfig:
    max_steps: int = 3000
    """Global step limit of a HAB episode (all skills together)."""
    mask_nav_stop: bool = True
    """Ignore nav stop while the nav goal sensor reads more than `stop_mask_dist`."""
    stop_mask_dist: float | None = None
    """m; None: the nav skill's training success radius + 0.5 m (`hab_stop_mask_dist`: 1 m
    for the shipped nav, the VER paper's 2 m for one trained at Habitat's 1.5 m or unknown)."""
    stop_mask_heading: float | None = HAB_STOP_MASK_HEADING
    """rad; also ignore nav stop while the goal-heading sensor reads more than this (the
    nav's 15 degree training success angle + 15, `stop_rule.HAB_STOP_MASK_HEADING`); None:
    distance only (the VER paper's rule)."""
    mask_grip: bool = True
    """Apply each skill's grip rule (tasks/grip_rules.py: pick keeps holding, place releases
    only at the goal, open/close hold the handle until the joint reaches its target)."""
    step_limits: dict[str, int] = field(default_factory=lambda: dict(HAB_STEP_LIMITS))
    """Per-skill step limits overriding the skill's own (see skill_spec.HAB_STEP_LIMITS)."""
    frame_every: int = 2
    """Record a video frame every this many env steps (when a frame sink is given)."""
    frame_size: tuple[int, int] = (480, 360)
    """Width, height of the third-person view in recorded frames (the arm-view panel, a
    square of the same height, is added on its right: 840x360 by default)."""
    arm_view: bool = True
    """Video: a side view of the gripper and its target while an arm skill runs."""
    depth_inset: bool = True
    """Video: the head depth camera in the bottom-left corner (64x64 upscaled 2x; with a depth
    policy in the chain, at that policy's input size)."""
    end_card_frames: int = 15
    """Video: frames the end card (outcome, stages k/n, failure cause) is held for; the
    runner sets one second at the video's frame rate."""
    reset_arm: bool = True
    """After every skill but nav and the last, a scripted arm reset (habitat-lab TP-SRL's
    `add_arm_rest`; skills/reset_arm.py): carry pose while holding, rest otherwise."""
    reset_arm_steps: int = RESET_ARM_STEPS
    pick_stand_reach: float = PICK_STAND_REACH
    """Shoulder-to-object reach (m) the nav goal of a pick leg aims at (`nav_goal`)."""
    nav_unstick: bool = True
    """A nav leg whose base has neither moved nor turned for `stuck_window` steps backs
    straight off and turns (skills/nav_unstick.py; at most MAX_UNSTICKS times a leg, the
    steps count toward its limit); not for a nav that recovers itself (`recovers_itself`:
    the scripted one). Not in the VER paper, whose world never holds the robot."""
    stuck_window: int = STUCK_WINDOW


@dataclass
class StepRun:
    """What happened while one plan step ran."""

    steps: int = 0
    ended_by: str = ""  # "stop" | "done" | "step_limit" | "episode_limit" | "force"
    blocked: int = 0  # of its steps, those the world cut short (RearrangeSim.blocked_steps)
    blocked_at_end: int = 0  # how many of its last steps in a row were cut short
    unsticks: int = 0  # times a stuck nav leg backed off (nav_unstick)
    unstick_steps: int = 0  # ... and the reverse steps they took


@dataclass
class EpisodeProgress:
    """Mutable state of one episode, read by the overlays."""

    plan: list[PlanStep]
    step_index: int = 0
    stages_done: int = 0
    num_stages: int = 0
    nav_goal: tuple[float, float, float] | None = None
    frames: int = 0
    done_steps: set[int] = field(default_factory=set)
    arm_reset: bool = False  # the scripted arm reset between skills is running
    unsticking: bool = False  # a stuck nav leg is backing off and turning (nav_unstick)
    ended: bool = False  # the plan has stopped (end card)


class ExecutorError(ValueError):
    """A skill or plan the executor cannot run (one line naming the problem and the fix)."""


class TPSRLExecutor:
    """Runs TP-SRL plans on a `HabEnv` with a fixed set of skills (one per skill name)."""

    def __init__(
        self, env: HabEnv, skills: Mapping[str, Skill], config: ExecutorConfig | None = None
    ):
        self.env = env
        self.skills = dict(skills)
        self.config = config or ExecutorConfig()

    # --- episode ------------------------------------------------------------------------
    def run_episode(
        self, plan: list[PlanStep], frame_sink: FrameSink | None = None
    ) -> EpisodeRecord:
        """Run `plan` on the env's current episode (call `env.reset` first)."""
        env = self.env
        missing = sorted({s.skill for s in plan} - set(self.skills))
        if missing:
            raise ExecutorError(
                f"the plan needs skills {missing} but the executor has {sorted(self.skills)}; "
                "load them (make_skill) before running"
            )
        stage_steps = {s.step_index for s in plan_stages(plan)}  # the interactions
        progress = EpisodeProgress(plan=plan, num_stages=len(stage_steps))
        self._progress, self._sink = progress, frame_sink
        self._film = self.film() if frame_sink is not None else None
        failed_skill, reason, cause = "", "", None
        skill_runs: list[dict] = []
        for i, step in enumerate(plan):
            progress.step_index = i
            spec = skill_def(step.skill)
            held = env.sim.held_object()
            start = self._reach_start(step) if spec.target == "object" else {}
            run = self._run_step(step)
            ok, why, cause = self.check(step)
            if env.force_exceeded:  # Habitat's force_terminate ends the episode
                ok, cause = False, FailureCause.EXCESSIVE_FORCE
                why = f"contact force limit exceeded ({env.force.accum:.0f} N accumulated)"
            # A skill without a grip part keeps what is held (PDDL nav does): a leg that
            # lost it fails here, not at the place.
            keeps_hold = action_layout(step.skill).grip is None
            if ok and keeps_hold and held is not None and env.sim.held_object() != held:
                ok, why = False, f"dropped obj_{held} during {step.skill} (lost its hold)"
                cause = FailureCause.DROPPED
            skill_runs.append(
                {
                    "skill": step.skill,
                    "ok": ok,
                    "steps": run.steps,
                    "ended_by": run.ended_by,
                    "blocked_steps": run.blocked,
                    "blocked_at_end": run.blocked_at_end,
                }
            )
            if run.unsticks:
                skill_runs[-1]["unsticks"] = run.unsticks
                skill_runs[-1]["unstick_steps"] = run.unstick_steps
            skill_runs[-1].update(start)
            if spec.target == "nav_goal" and progress.nav_goal is not None:
                skill_runs[-1].update(self._nav_end(progress.nav_goal))
            if not ok:
                failed_skill = str(step)
                reason = why
                if run.ended_by == "episode_limit":
                    limit = self._max_steps()
                    reason = f"episode step limit {limit} reached during {step.skill} ({why})"
                elif run.ended_by == "step_limit":
                    reason = f"{why} (skill step limit reached after {run.steps} steps)"
                limited = run.ended_by in ("episode_limit", "step_limit")
                kept = (
                    FailureCause.WRONG_GRASP,
                    FailureCause.DROPPED,
                    FailureCause.EXCESSIVE_FORCE,
                )
                if limited and cause not in kept:
                    cause = FailureCause.TIMED_OUT
                break
            progress.done_steps.add(i)
            if self.config.reset_arm and spec.uses_arm and i + 1 < len(plan):
                steps, back = self._reset_arm()
                skill_runs[-1]["reset_arm_steps"] = steps
                if back:
                    skill_runs[-1]["reset_backoff_steps"] = back
            if i in stage_steps:
                progress.stages_done += 1
        success = not failed_skill and env.all_targets_done()
        if not failed_skill and not success:
            failed_skill, reason = "plan", "plan finished but not every object is at its goal"
            cause = FailureCause.PLAN_INCOMPLETE
        record = EpisodeRecord(
            episode_id=env.episode.episode_id,
            stages_completed=progress.stages_done,
            success=success,
            steps=env.num_steps,
            failed_skill=failed_skill,
            failure_reason=reason,
            failure_cause=cause.value if cause is not None and not success else "",
            max_depth=round(env.max_depth, 4),
            skill_runs=skill_runs,
        )
        progress.ended = True
        if self._film is not None:  # the final state under the outcome card, ~1 s
            for frame in self._film.end_card(env, progress, record):
                self._sink(frame)
                progress.frames += 1
        record.video_frames = progress.frames
        return record

    def film(self) -> EpisodeFilm:
        """What renders this executor's video frames (the config's sizes and parts)."""
        cfg, env_cfg = self.config, self.env.config
        # With a depth policy in the chain the inset is its input, at the size it sees.
        size = env_cfg.depth_size if env_cfg.obs_preset == "depth" else None
        layout = FrameLayout.fit(tuple(cfg.frame_size), cfg.arm_view, cfg.depth_inset, size)
        return EpisodeFilm(layout, cfg.end_card_frames)

    def _nav_end(self, goal: tuple[float, float, float]) -> dict:
        """Where a nav leg left the base: Euclidean distance (m) to its goal pose and heading
        error (degrees), what the next manipulation skill starts from."""
        dist, heading = goal_pose_error(self.env.sim, goal)
        return {
            "end_dist_m": round(dist, 3),
            "end_heading_deg": round(math.degrees(heading), 1),
        }

    def _reach_start(self, step: PlanStep) -> dict:
        """Where a pick or place leg starts: the horizontal distance (m) from the arm's
        shoulder to its object (pick) or goal (place), and that point's bearing off the
        base's heading (degrees), the two numbers a fixed-base skill's start spread is drawn
        in (`PlacementConfig.reach_min` .. `reach_max`, ± `yaw_noise`); a place leg adds how
        the object is held (`held_pose`)."""
        sim = self.env.sim
        placing = skill_def(step.skill).starts_holding
        if placing:
            target_xy = self.env.place_target(step.target_index).goal_pos[:2]
        else:
            target_xy = sim.object_pos(step.obj_index)[:2]
        pose = [float(v) for v in sim.base_pose()]
        reach = shoulder_reach(pose, target_xy, _SHOULDER_X)
        bearing = math.atan2(float(target_xy[1]) - pose[1], float(target_xy[0]) - pose[0])
        off = wrap_angle(bearing - pose[2])
        start = {"start_reach_m": round(reach, 3), "start_bearing_deg": round(math.degrees(off), 1)}
        if placing:  # the grasp the pick before it left
            start.update(held_pose(sim))
        return start

    def _max_steps(self) -> int:
        return min(self.config.max_steps, self.env.max_steps)

    # --- one plan step ------------------------------------------------------------------
    def _run_step(self, step: PlanStep) -> StepRun:
        env, skill = self.env, self.skills[step.skill]
        task_target = self.task_target(step)
        self._progress.nav_goal = (
            tuple(float(v) for v in task_target.nav_goal)
            if skill_def(step.skill).target == "nav_goal"
            else None
        )
        skill.reset(replace(task_target, receptacle=step.receptacle), env.sim)
        layout = action_layout(step.skill, env.skill_base_movement(step.skill))
        limit = self.config.step_limits.get(step.skill) or int(skill.step_limit)
        masks = GripTracker(step.skill, release_dist=self.release_dist(step.skill))
        run = StepRun()
        preset = skill_preset(skill)
        watch = StuckWatch(self.config.stuck_window)
        # a nav with its own recovery (the scripted follower's) is left to it
        recovers = getattr(skill, "recovers_itself", False)
        unstick = self.config.nav_unstick and layout.stop is not None and not recovers
        obs = env.observe(step.skill, task_target, preset)
        while True:
            if env.num_steps >= self._max_steps():
                run.ended_by = "episode_limit"
                return run
            if env.force_exceeded:
                run.ended_by = "force"
                return run
            action = np.asarray(skill.act(obs, env.sim), dtype=np.float32)
            action = self._mask(step.skill, action, layout, obs, masks, task_target)
            blocked = env.sim.blocked_steps
            env.apply_action(step.skill, action)
            run.steps += 1
            if env.sim.blocked_steps > blocked:
                run.blocked += 1
                run.blocked_at_end += 1
            else:
                run.blocked_at_end = 0
            self._maybe_record()
            if unstick and watch.update(env.sim.base_pose()) and run.unsticks < MAX_UNSTICKS:
                self._unstick(step.skill, layout, run, limit)
                watch.clear()
            obs = env.observe(step.skill, task_target, preset)
            if layout.stop is not None:
                # A skill with a stop action (nav) ends only by its (masked) stop or its
                # step limit: one that said stop far from the goal keeps driving
                # (stop-masking).
                if action[layout.stop] > 0:
                    run.ended_by = "stop"
                    return run
            elif skill.is_done(obs, env.sim):
                run.ended_by = "done"
                return run
            if run.steps >= limit:
                run.ended_by = "step_limit"
                return run

    def _unstick(self, skill_name: str, layout, run: StepRun, limit: int) -> None:
        """Back a stuck nav leg's base straight off and turn it (`nav_unstick.unstick_steps`,
        `unstick_turn`), within the leg's step limit and the episode's; the skill then goes on
        from there."""
        env = self.env
        run.unsticks += 1
        moves = unstick_moves(env.sim, layout)
        self._progress.unsticking = True
        for action in moves:
            if run.steps >= limit or env.num_steps >= self._max_steps() or env.force_exceeded:
                break
            env.apply_action(skill_name, action)
            run.steps += 1
            run.unstick_steps += 1
            run.blocked_at_end = 0  # what the policy's own steps count from here
            self._maybe_record()
        self._progress.unsticking = False

    def _reset_arm(self) -> tuple[int, int]:
        """Run the scripted arm reset (ResetArm) until it is done, its step budget is spent
        or the episode's step limit is reached, after the base's step back where the
        canonical joints do not fit (`backoff_steps`); returns (steps in all, back-off
        steps taken)."""
        env = self.env
        name = RESET_ARM_LAYOUT_SKILL
        arm = ResetArm(action_layout(name, env.skill_base_movement(name)))
        self._progress.arm_reset = True
        back, wanted = 0, backoff_steps(env.sim)
        reverse = reverse_action(action_layout(BACKOFF_LAYOUT_SKILL))
        while back < wanted and env.num_steps < self._max_steps() and not env.force_exceeded:
            env.apply_action(BACKOFF_LAYOUT_SKILL, reverse)
            back += 1
            self._maybe_record()
        moved = 0  # the arm's own budget (a planned detour gets a larger one)
        while moved < arm.budget(self.config.reset_arm_steps) and env.num_steps < self._max_steps():
            if arm.is_done(env.sim) or env.force_exceeded:
                break
            env.apply_action(name, arm.act(env.sim))
            moved += 1
            self._maybe_record()
        self._progress.arm_reset = False
        return back + moved, back

    def _mask(self, skill_name, action, layout, obs, grip: GripTracker, target=None) -> np.ndarray:
        """The deployment masks, decided by the same functions the skill envs train with
        (tasks/stop_rule.py, tasks/grip_rules.py), for learned and scripted skills alike."""
        cfg = self.config
        if layout.stop is not None and cfg.mask_nav_stop:
            dist = nav_goal_distance(obs)
            action = mask_nav_stop(
                action,
                layout.stop,
                dist,
                self.stop_mask_dist(skill_name),
                nav_goal_heading(obs),
                cfg.stop_mask_heading,
            )
        if cfg.mask_grip and layout.grip is not None:
            action = grip.mask(action, layout.grip, self.env.sim, target)
        return action

    def stop_mask_dist(self, skill_name: str = "nav") -> float:
        """The config's stop-mask distance, else the one the skill's training radius gives."""
        if self.config.stop_mask_dist is not None:
            return float(self.config.stop_mask_dist)
        radius = getattr(self.skills.get(skill_name), "success_radius", None)
        return hab_stop_mask_dist(radius)

    def release_dist(self, skill_name: str) -> float:
        """The goal distance a place may let go within: the skill's training one (a learned
        place records it), else the success radius (tasks/grip_rules.py)."""
        trained = getattr(self.skills.get(skill_name), "release_dist", None)
        return PLACE_RELEASE_DIST if trained is None else float(trained)

    def _maybe_record(self) -> None:
        if self._sink is None or self.env.num_steps % self.config.frame_every:
            return
        self._sink(self._film.frame(self.env, self._progress))
        self._progress.frames += 1

    # --- targets and postconditions -----------------------------------------------------
    def task_target(self, step: PlanStep):
        """The `rearrange.tasks` SkillTarget a skill observes for this plan step."""
        env, spec = self.env, skill_def(step.skill)
        if spec.target == "nav_goal":
            return env.nav_target(*nav_goal(env, step, self.config.pick_stand_reach))
        if spec.target == "object":  # place starts holding it and takes it to its goal
            if spec.starts_holding:
                return env.place_target(step.target_index)
            return env.pick_target(step.target_index)
        return env.articulation_target(step.skill, step.articulation)

    def check(self, step: PlanStep) -> tuple[bool, str, FailureCause | None]:
        """(holds, reason, cause) of a step's postcondition with the PDDL predicate
        thresholds of the HAB env; cause None when it holds."""
        env, sim, spec = self.env, self.env.sim, skill_def(step.skill)
        if spec.target == "nav_goal":  # robot_at
            xy = nav_entity_xy(env, step)
            if env.robot_at(xy):
                return True, "", None
            d = math.dist(sim.base_pose()[:2], xy)
            why = f"robot_at failed: base {d:.2f} m from {step.args[0]} (> 2 m)"
            return False, why, FailureCause.NAV_SHORT
        if spec.target == "object" and not spec.starts_holding:  # pick: holding
            held = sim.held_object()
            if held == step.obj_index:
                return True, "", None
            what = "nothing" if held is None else f"object {held}"
            z = float(sim.object_pos(step.obj_index)[2])
            on_floor = z < FLOOR_Z
            where = f"; it lies on the floor (z {z:.2f} m)" if on_floor else ""
            why = f"not holding obj_{step.obj_index} (holding {what}){where}"
            if held is not None:
                return False, why, FailureCause.WRONG_GRASP
            return False, why, FailureCause.DROPPED if on_floor else FailureCause.NO_GRASP
        if spec.target == "object":  # place, which starts holding it: object_at
            if env.target_done(step.target_index):
                return True, "", None
            goal = env.episode.targets[step.target_index].goal_pos
            d = float(np.linalg.norm(sim.object_pos(step.obj_index) - np.asarray(goal)))
            held = " and still held" if sim.held_object() == step.obj_index else ""
            why = f"object_at failed: obj_{step.obj_index} {d:.2f} m from goal{held}"
            return False, why, FailureCause.PLACED_OFF_GOAL
        name = step.articulation
        want_open = spec.articulation.opens
        ok = env.opened(name) if want_open else env.closed(name)
        if ok:
            return True, "", None
        state = "opened" if want_open else "closed"
        why = f"{name} not {state} (joint {sim.articulation_pos(name):.3f})"
        return False, why, FailureCause.ARTICULATION_SHORT


# --- where navigation goes ---------------------------------------------------------------
def skill_preset(skill: Skill) -> str | None:
    """The obs preset a learned skill reads (its checkpoint's: depth, state or state_rays), so
    one HAB chain can mix depth and state skills; None (the env's default) for a scripted one."""
    return getattr(skill, "observation_preset", None)


def nav_entity_xy(env: HabEnv, step: PlanStep) -> tuple[float, float]:
    """The thing a nav step goes to (robot_at is measured to it), in world x, y."""
    sim, kind = env.sim, step.nav_kind
    if kind == "object":
        p = sim.object_pos(step.obj_index)
    elif kind == "goal":
        p = env.episode.targets[step.target_index].goal_pos
    elif kind == "articulation":
        p = _articulation(sim.layout, step.articulation).handle_closed_pos
    else:
        p = sim.layout.receptacle(step.args[0]).surface.center
    return float(p[0]), float(p[1])


def nav_goal(
    env: HabEnv, step: PlanStep, pick_reach: float = PICK_STAND_REACH
) -> tuple[float, float, float]:
    """(x, y, yaw) a nav step drives to: a pick-ready pose for what the next skill works on
    (`placement.nav_goal_pose`), holding what the robot holds when it carries an object to
    its goal; for a door or drawer, its work pose or a pose clear of the drawer's travel.
    Before a pick the pose aims at `pick_reach` from the shoulder, elsewhere at the
    placement's comfortable reach."""
    articulation = None
    if step.nav_kind == "articulation":
        articulation = _articulation(env.sim.layout, step.articulation)
    held = env.sim.held_object() if step.nav_kind == "goal" else None
    comfort = pick_reach if step.nav_kind == "object" else COMFORT_REACH
    return nav_goal_pose(
        env.sim, nav_entity_xy(env, step), _front_yaw(env, step), held, articulation, comfort
    )


def _front_yaw(env: HabEnv, step: PlanStep) -> float:
    layout, kind = env.sim.layout, step.nav_kind
    if kind == "object":
        rec = env.episode.objects[step.obj_index].receptacle
        furniture = layout.receptacle(rec).furniture
    elif kind == "goal":
        rec = env.episode.targets[step.target_index].goal_receptacle
        furniture = layout.receptacle(rec).furniture
    elif kind == "articulation":
        furniture = _articulation(layout, step.articulation).furniture
    else:
        furniture = layout.receptacle(step.args[0]).furniture
    return float(layout.furniture_named(furniture).front_yaw)


def _articulation(layout, name: str) -> Any:
    for a in layout.articulations:
        if a.name == name:
            return a
    raise ExecutorError(f"layout has no articulation {name!r}; the plan and layout disagree")


__all__ = [
    "EpisodeProgress",
    "ExecutorConfig",
    "ExecutorError",
    "TPSRLExecutor",
    "nav_entity_xy",
    "nav_goal",
]
