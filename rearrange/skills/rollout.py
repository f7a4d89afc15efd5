"""Run a skill on its own skill-task env (oracle checks, learned-skill evaluation)."""

from __future__ import annotations

from dataclasses import dataclass

from rearrange.skills.base import Skill, from_task_target


@dataclass
class EpisodeResult:
    episode_id: str
    success: bool
    steps: int
    end: str  # "success" | "terminated" | "truncated" | "skill_done"


def run_skill_episode(env, skill: Skill, episode_index: int) -> EpisodeResult:
    """One episode of `env` (a SkillEnv) driven by `skill` until either says it is over."""
    obs, info = env.reset(options={"episode_index": episode_index})
    base = env.unwrapped
    sim = base.sim
    skill.reset(from_task_target(base.target), sim)
    steps, end = 0, "truncated"
    while True:
        obs, _, terminated, truncated, info = env.step(skill.act(obs, sim))
        steps += 1
        if info.get("success"):
            end = "success"
            break
        if terminated or truncated:
            end = "terminated" if terminated else "truncated"
            break
        if skill.is_done(obs, sim):
            end = "skill_done"
            break
    return EpisodeResult(
        info.get("episode_id", str(episode_index)), bool(info["success"]), steps, end
    )
