"""Evaluation-video overlays (VER Appendix C): a white wireframe box around each object
still to pick, a ghost copy at each goal not yet reached, a grey sphere where the running
nav skill is heading, the current skill / stage written on the frame, and a yellow ring on
what the running arm skill works on (the object to pick, the place goal, the handle)."""

from __future__ import annotations

from typing import Any

from rearrange.sim.render import Overlays
from rearrange.skill_spec import skill_def


def _object_skill(skill: str, starts_holding: bool) -> bool:
    """Whether `skill` acts on an object and starts holding it (place) or not (pick)."""
    spec = skill_def(skill)
    return spec.target == "object" and spec.starts_holding == starts_holding


def objects_to_pick(progress: Any) -> list[int]:
    """Objects whose pick step in the plan has not completed yet."""
    return [
        s.obj_index
        for i, s in enumerate(progress.plan)
        if _object_skill(s.skill, False)
        and i not in progress.done_steps
        and s.obj_index is not None
    ]


def goals_left(env: Any, progress: Any) -> list[tuple[int, tuple[float, float, float]]]:
    """(object, goal position) of every target whose place step has not completed yet."""
    placed = {
        s.target_index
        for i, s in enumerate(progress.plan)
        if _object_skill(s.skill, True) and i in progress.done_steps
    }
    return [
        (t.obj_index, tuple(float(v) for v in t.goal_pos))
        for k, t in enumerate(env.episode.targets)
        if k not in placed
    ]


def caption(env: Any, progress: Any) -> list[str]:
    plan = progress.plan
    i = progress.step_index
    skill = str(plan[i]) if plan else "-"
    if getattr(progress, "unsticking", False):
        skill += ", stuck: stepping back"
    return [
        f"{env.scenario} {env.episode.episode_id}",
        f"skill {i + 1}/{len(plan)}: {skill}",
        f"stage {progress.stages_done}/{progress.num_stages}  step {env.num_steps}",
    ]


def arm_target(env: Any, progress: Any) -> tuple[str, tuple[float, float, float]] | None:
    """(marker label, world point) of what the running arm skill works on: the object for a
    pick, the goal position for a place, the handle for open / close; None while nav or the
    arm reset between skills runs, or once the episode has ended."""
    if progress.arm_reset or progress.ended or not progress.plan:
        return None
    step = progress.plan[progress.step_index]
    spec = skill_def(step.skill)
    if not spec.uses_arm:
        return None
    sim = env.sim
    if spec.target == "articulation":
        label, point = "handle", sim.handle_pos(step.articulation)
    elif spec.starts_holding:
        label, point = "place goal", env.episode.targets[step.target_index].goal_pos
    else:
        label, point = "pick", sim.object_pos(step.obj_index)
    return label, tuple(float(v) for v in point)


def episode_overlays(env: Any, progress: Any) -> Overlays:
    spheres = []
    if progress.nav_goal is not None:
        spheres.append((progress.nav_goal[0], progress.nav_goal[1]))
    target = arm_target(env, progress)
    return Overlays(
        boxes=objects_to_pick(progress),
        ghosts=goals_left(env, progress),
        spheres=spheres,
        text=caption(env, progress),
        markers=[(target[1], target[0])] if target else [],
    )
