"""The seven skill tasks behind `gymnasium.make` ("rearrange/Pick-v0", ...).

`register_envs()` runs on `import rearrange`; it imports neither MuJoCo nor the task modules
(the entry point is a string, resolved when an env is made)::

    import gymnasium as gym
    import rearrange  # noqa: F401  (or gym.make("rearrange:rearrange/Pick-v0"))

    env = gym.make("rearrange/Pick-v0", base_movement=True, obs_preset="state", split="val")

`make_skill_env(task, base_movement, obs_preset, split, seed, **task_overrides)` builds exactly
`rearrange.tasks.make_env(task, default_task_config(task, base_movement=..., obs_preset=...,
**task_overrides), split, seed)`; any other TaskConfig field (num_episodes, depth_size,
max_episode_steps, episodes_path, ...) is a keyword too. The envs end their own episodes at
the task's step limit (`truncated`), so no TimeLimit wrapper is registered.
"""

from __future__ import annotations

from typing import Any

from rearrange.skill_spec import SKILL_NAMES

# gymnasium id (without the namespace) -> rearrange skill name: "open_fridge" is
# "OpenFridge-v0". skill_spec imports nothing of the simulator, so neither does registration.
GYM_IDS = {"".join(w.title() for w in name.split("_")) + "-v0": name for name in SKILL_NAMES}
NAMESPACE = "rearrange"
ENTRY_POINT = "rearrange.gym_envs:make_skill_env"
RENDER_MODES = ["rgb_array"]


def gym_id(task: str) -> str:
    """The gymnasium id of a rearrange task name, e.g. 'open_fridge' -> 'rearrange/OpenFridge-v0'."""
    for name, t in GYM_IDS.items():
        if t == task:
            return f"{NAMESPACE}/{name}"
    raise ValueError(f"unknown task {task!r}; valid tasks: {', '.join(GYM_IDS.values())}")


def make_skill_env(
    task: str,
    base_movement: bool = False,
    obs_preset: str = "depth",
    split: str = "train",
    seed: int = 0,
    render_mode: str | None = None,
    **task_overrides: Any,
):
    """The env `rearrange.tasks.make_env` builds for these arguments (gymnasium entry point).

    `seed` seeds the episode set and the episode choice (as in make_env); `reset(seed=...)`
    reseeds the choice. `render_mode` may be None or 'rgb_array' (the env always renders
    RGB frames).
    """
    if render_mode not in (None, *RENDER_MODES):
        raise ValueError(
            f"render_mode {render_mode!r} is not supported; use one of {RENDER_MODES} "
            "(gymnasium.make(..., render_mode='human') wraps 'rgb_array' for display)"
        )
    from rearrange.tasks import default_task_config, make_env

    config = default_task_config(
        task, base_movement=base_movement, obs_preset=obs_preset, **task_overrides
    )
    return make_env(task, config, split, seed)


# gymnasium.make reads the entry point's metadata to pick render wrappers ('human' ->
# HumanRendering over 'rgb_array'); the value matches SkillEnv.metadata.
make_skill_env.metadata = {"render_modes": RENDER_MODES, "render_fps": 30}


def register_envs() -> None:
    """Register the seven skill ids with gymnasium (idempotent; cheap)."""
    import gymnasium

    for name, task in GYM_IDS.items():
        env_id = f"{NAMESPACE}/{name}"
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(id=env_id, entry_point=ENTRY_POINT, kwargs={"task": task})
