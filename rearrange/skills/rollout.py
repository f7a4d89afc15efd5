"""Run a skill on its own skill-task env (oracle checks, learned-skill evaluation)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rearrange.skills.base import Skill
from rearrange.tasks.force_limit import EXCESSIVE_FORCE
from rearrange.tasks.nav import goal_pose_error
from rearrange.tasks.pick import pick_source

# Reward terms that end an episode without success, reported as the failure cause.
FAILURE_TERMS = ("drop", "wrong_pick", "wrong_grasp")


@dataclass
class EpisodeResult:
    episode_id: str
    success: bool
    steps: int
    end: str  # "success" | "terminated" | "truncated" | "skill_done"
    cause: str = ""  # why a failed episode ended: timeout, drop, wrong_pick, stop, ...
    ret: float = 0.0  # undiscounted return
    collisions: int = 0  # steps with a robot collision (blocked base or contact force)
    max_depth: float = 0.0  # deepest robot overlap with static geometry at any step (m)
    goal_dist: float | None = None  # nav goal: the base's distance to the goal point at the end (m)
    goal_yaw_deg: float | None = None  # nav goal: |goal yaw - base yaw| at the end (degrees)
    source: str = ""  # pick: where the target lay (tasks/pick.py PICK_SOURCES); else ""


def failure_cause(end: str, info: dict) -> str:
    """A failed episode's cause: the rule that ended it, else how it ended."""
    if end == "success":
        return ""
    if info.get("excessive_force"):
        return EXCESSIVE_FORCE
    terms = info.get("reward_terms", {})
    for name in FAILURE_TERMS:
        if terms.get(name, 0.0) < 0.0:
            return name
    return {"truncated": "timeout", "terminated": "stop", "skill_done": "skill_done"}[end]


def run_skill_episode(
    env, skill: Skill, episode_index: int, on_frame: Callable[[np.ndarray], None] | None = None
) -> EpisodeResult:
    """One episode of `env` (a SkillEnv) driven by `skill` until either says it is over.
    `on_frame` gets a third-person frame after the reset and after every step."""
    obs, info = env.reset(options={"episode_index": episode_index})
    base = env.unwrapped
    sim = base.sim
    source = pick_source(env)
    skill.reset(base.target, sim)
    if on_frame is not None:
        on_frame(env.render())
    steps, end, ret, depth = 0, "truncated", 0.0, float(sim.static_depth)
    while True:
        obs, reward, terminated, truncated, info = env.step(skill.act(obs, sim))
        steps += 1
        ret += float(reward)
        depth = max(depth, float(sim.static_depth))
        if on_frame is not None:
            on_frame(env.render())
        if info.get("success"):
            end = "success"
            break
        if terminated or truncated:
            end = "terminated" if terminated else "truncated"
            break
        if skill.is_done(obs, sim):
            end = "skill_done"
            break
    dist, yaw_err = end_goal_error(base.target, sim)
    return EpisodeResult(
        info.get("episode_id", str(episode_index)),
        bool(info["success"]),
        steps,
        end,
        failure_cause(end, info),
        ret,
        int(sim.collision_count),
        depth,
        dist,
        yaw_err,
        source,
    )


def end_goal_error(target, sim) -> tuple[float | None, float | None]:
    """(m, degrees) from the base to the target's nav goal pose; (None, None) without one."""
    goal = getattr(target, "nav_goal", None)
    if goal is None:
        return None, None
    dist, heading = goal_pose_error(sim, goal)
    return dist, math.degrees(heading)
