"""Typed configuration of the skill tasks (DESIGN.md §4, the Habitat 2.0 skill definitions).

`TaskConfig` is what `make_env` takes. Per-skill defaults (step limits, reward coefficients,
success thresholds) come from `rearrange.skill_spec` through `default_task_config(task)`;
yaml files in `skill_configs/` only override fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rearrange.skill_spec import (
    SKILL_NAMES,
    RewardConfig,
    Thresholds,
    default_rewards,
    task_step_limit,
)

# "depth": 128x128 head depth + state sensors (the paper); "state": state sensors only;
# "state_rays": state + a 64-ray obstacle range scan for nav (tasks/sensors.py RAY_SKILLS;
# the nav CPU profile, skill_configs/sensing/nav_cpu.yaml), plain "state" for other skills.
OBS_PRESETS = ("depth", "state", "state_rays")


@dataclass
class TaskConfig:
    """Everything one skill env needs. Build with `default_task_config(task, **overrides)`."""

    task: str = "pick"  # one of skill_spec.SKILL_NAMES
    # Manipulation skills also get [linear, angular] base velocity actions (NoNav ablation).
    base_movement: bool = False
    # "depth": head depth image + state sensors; "state": state sensors only (fast CPU runs);
    # "state_rays": state + obstacle range scan for nav (see OBS_PRESETS).
    obs_preset: str = "depth"
    depth_size: int = 128  # square depth image side (paper: 128)
    # None: the task's Habitat limit (`skill_spec.task_step_limit`: MAX_EPISODE_STEPS, plus
    # BASE_MOVEMENT_EXTRA_STEPS for the base-movement variants of the open/close tasks).
    max_episode_steps: int | None = None
    # Per-task coefficients differ (nav dist 1.0; close skills drop art/grasp/at-state): get
    # them from default_task_config(task) and merge yaml overrides onto that.
    reward: RewardConfig = field(default_factory=RewardConfig)
    thresholds: Thresholds = field(default_factory=Thresholds)
    # Episodes: read from `episodes_path` (JSON / JSON.gz from episodes.save_episodes) or,
    # when it is None, generate `num_episodes` on the fly with episodes.generate_episodes.
    episodes_path: str | None = None
    num_episodes: int = 50
    # Episode generation options: fields named as in EpisodeGenConfig reach the generator
    # (`episode_gen_overrides`); None keeps EpisodeGenConfig's default.
    # Pick: the share of generated episodes whose object lies on the open fridge's shelf
    # (None: the generator's default, EpisodeGenConfig.fridge_pick_prob = 0.2).
    fridge_pick_prob: float | None = None
    # Pick on the fridge shelf: up to this many other objects beside the target there
    # (None: the generator's default, EpisodeGenConfig.fridge_pick_others = 0).
    fridge_pick_others: int | None = None
    # Place: the share of generated episodes whose goal is on the open fridge's shelf
    # (None: the generator's default, EpisodeGenConfig.fridge_place_prob = 0).
    fridge_place_prob: float | None = None
    # Nav: the share of generated episodes starting in front of another object, where HAB
    # nav legs start (None: the generator's default, EpisodeGenConfig.nav_stand_start_prob
    # = 0: anywhere).
    nav_stand_start_prob: float | None = None
    # Nav: the share of generated episodes whose target lies on the open fridge's shelf
    # (None: the generator's default, EpisodeGenConfig.nav_fridge_prob = 0).
    nav_fridge_prob: float | None = None
    # Nav: the share of generated episodes starting closer than nav_min_dist (2 m) to the
    # goal, as HAB nav legs to the next object or goal on the same furniture do (None: the
    # generator's default, EpisodeGenConfig.nav_near_start_prob = 0).
    nav_near_start_prob: float | None = None
    # Nav: the share of generated episodes starting with another object held at the carry
    # pose, as HAB nav legs to a place goal do (None: the generator's default,
    # EpisodeGenConfig.nav_hold_prob = 0).
    nav_hold_prob: float | None = None
    # Open/close: the work spawn's position noise times this (None: the generator's
    # default, PlacementConfig.work_noise_scale = 1).
    work_noise_scale: float | None = None
    # "+ base movement" variants: the share of episodes that start at the fixed-base (close)
    # spawn instead of the far one (a start-distribution curriculum for training: the
    # finishing moves are learned from starts where they are in reach; 0 = the VER paper's
    # far starts only, as evaluation uses).
    near_start_prob: float = 0.0
    # Apply the skill's deployment grip rule while training (tasks/grip_rules.py,
    # docs/DESIGN.md §4.3): e.g. pick keeps the grip on once holding, place keeps it off once
    # released. A deviation from Habitat 2.0 skill training, which leaves the grip free and
    # masks it only in the HRL executor (§8.2).
    grip_mask: bool = True
    # Apply the deployment nav stop-mask while training (tasks/stop_rule.py): stop is ignored
    # while the goal is > 2 m away. A deviation from Habitat 2.0 nav training, which masks it
    # only in the HRL executor; without it a random policy stops within ~2 steps.
    stop_mask: bool = True
    # Overrides for rearrange.sim.config.SimConfig fields (e.g. {"torso_lift": 0.3}).
    sim_overrides: dict[str, Any] = field(default_factory=dict)

    def episode_gen_overrides(self) -> dict[str, Any]:
        """The `EpisodeGenConfig` fields this config sets (the fields both configs name, where
        not None), for `load_task_episodes`: a new generation option is one field here."""
        from rearrange.sim.episodes import EpisodeGenConfig

        shared = [
            n for n in EpisodeGenConfig.__dataclass_fields__ if n in self.__dataclass_fields__
        ]
        values = {name: getattr(self, name) for name in shared}
        return {k: v for k, v in values.items() if v is not None}

    def __post_init__(self) -> None:
        if self.task not in SKILL_NAMES:
            raise ValueError(f"unknown task {self.task!r}; valid tasks: {', '.join(SKILL_NAMES)}")
        if self.obs_preset not in OBS_PRESETS:
            raise ValueError(
                f"unknown obs_preset {self.obs_preset!r}; use one of {', '.join(OBS_PRESETS)}"
            )
        if self.max_episode_steps is None:
            self.max_episode_steps = task_step_limit(self.task, self.base_movement)
        if self.max_episode_steps <= 0:
            raise ValueError(f"max_episode_steps must be > 0, got {self.max_episode_steps}")
        if not 0.0 <= self.near_start_prob <= 1.0:
            raise ValueError(f"near_start_prob must be in [0, 1], got {self.near_start_prob}")


def default_task_config(task: str, **overrides: Any) -> TaskConfig:
    """The DESIGN §4 defaults for `task` (step limit, reward coefficients), then `overrides`."""
    if task not in SKILL_NAMES:
        raise ValueError(f"unknown task {task!r}; valid tasks: {', '.join(SKILL_NAMES)}")
    unknown = set(overrides) - set(TaskConfig.__dataclass_fields__)
    if unknown:
        raise ValueError(
            f"unknown TaskConfig field(s) {sorted(unknown)}; "
            f"valid: {', '.join(TaskConfig.__dataclass_fields__)}"
        )
    # Built in one go (not `replace`): the default step limit depends on base_movement.
    return TaskConfig(**{"task": task, "reward": default_rewards(task), **overrides})


@dataclass
class HabThresholds:
    """PDDL predicate thresholds (habitat-lab values, DESIGN.md §6)."""

    object_at: float = 0.3  # m, object to its goal
    robot_at: float = 2.0  # m, base to a nav target (2-D)
    opened_fridge: float = 1.22  # rad
    opened_cab: float = 0.45  # m
    closed: float = 0.15  # |joint| at most this counts as closed
    # "opened" accepts joints this close below the threshold, so an open skill that succeeded
    # (joint within Thresholds.articulation of its target) also satisfies the predicate.
    open_tolerance: float = 0.05


@dataclass
class HabConfig:
    """The HAB composite env: one sim, one scenario episode, skills switched by the executor."""

    max_steps: int = 3000  # whole-task step limit
    obs_preset: str = "depth"  # must match the preset the learned skills were trained with
    depth_size: int = 128
    skill_base_movement: bool = False  # manipulation skills also drive the base (NoNav)
    skill_thresholds: Thresholds = field(default_factory=Thresholds)
    predicates: HabThresholds = field(default_factory=HabThresholds)
    episodes_path: str | None = None
    num_episodes: int = 20
    sim_overrides: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.obs_preset not in OBS_PRESETS:
            raise ValueError(
                f"unknown obs_preset {self.obs_preset!r}; use one of {', '.join(OBS_PRESETS)}"
            )
        if self.max_steps <= 0:
            raise ValueError(f"HabConfig.max_steps must be > 0, got {self.max_steps}")
