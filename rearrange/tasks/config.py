"""Typed configuration of the skill tasks (DESIGN.md §4, the Habitat 2.0 skill definitions).

`TaskConfig` is what `make_env` takes. Per-skill defaults (step limits, reward coefficients,
success thresholds) come from `rearrange.skill_spec` through `default_task_config(task)`;
yaml files in `skill_configs/` only override fields. Each setting has one owner: the episode
generator's options are its `EpisodeGenConfig` (`task.episodes`), the simulator's its
`SimConfig` (`task.sim`), both held whole here rather than mirrored (docs/DESIGN.md §5).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from rearrange.sim.config import SimConfig
from rearrange.sim.episodes.config import EpisodeGenConfig
from rearrange.skill_spec import (
    RewardConfig,
    Thresholds,
    default_rewards,
    skill_names,
    task_step_limit,
)
from rearrange.tasks.force_limit import ForceLimit

# "depth": 128x128 head depth + state sensors (the paper); "state": state sensors only;
# "state_rays": state + a 64-ray obstacle range scan for nav (SkillDef.ray_scan;
# the nav CPU profile, skill_configs/sensing/nav_cpu.yaml), and + an 18-ray arm clearance
# scan ("arm_rays") for the manipulation skills (SkillDef.arm_scan; tasks/sensors.py);
# "state_head_rays": "state_rays" with nav's scan cut to the head camera's field of view (the
# rays outside it read as free), a teacher that sees what the depth student sees (§5.4).
OBS_PRESETS = ("depth", "state", "state_rays", "state_head_rays")


@dataclass
class TaskConfig:
    """Everything one skill env needs. Build with `default_task_config(task, **overrides)`."""

    task: str = "pick"  # a defined skill (skill_spec.skill_names())
    # Manipulation skills also get [linear, angular] base velocity actions (NoNav ablation).
    base_movement: bool = False
    # "depth": head depth image + state sensors; "state": state sensors only (fast CPU runs);
    # "state_rays": state + nav's obstacle range scan / the arm clearance scan;
    # "state_head_rays": the range scan cut to the head camera's view (OBS_PRESETS).
    obs_preset: str = "depth"
    depth_size: int = 128  # square depth image side (paper: 128)
    # None: the task's Habitat limit (`skill_spec.task_step_limit`: SkillDef.step_limit, plus
    # base_movement_extra_steps for the base-movement variants of the open/close tasks).
    max_episode_steps: int | None = None
    # Per-task coefficients differ (nav dist 1.0; close skills drop art/grasp/at-state): get
    # them from default_task_config(task) and merge yaml overrides onto that.
    reward: RewardConfig = field(default_factory=RewardConfig)
    thresholds: Thresholds = field(default_factory=Thresholds)
    # Episodes: read from `episodes_path` (JSON / JSON.gz from episodes.save_episodes) or,
    # when it is None, generate `num_episodes` on the fly with episodes.generate_episodes.
    episodes_path: str | None = None
    num_episodes: int = 50
    # How generated episodes are drawn (rearrange/sim/episodes/config.py, the one home of
    # these options): e.g. episodes.fridge_pick_prob (pick targets on the fridge shelf),
    # episodes.work_noise_scale (open/close start spread), episodes.nav_hold_prob (nav
    # starts carrying an object). The names without `episodes.` are accepted as aliases
    # (`task_field`), as they were TaskConfig fields before.
    episodes: EpisodeGenConfig = field(default_factory=EpisodeGenConfig)
    # "+ base movement" variants: the share of episodes that start at the fixed-base (close)
    # spawn instead of the far one (a start-distribution curriculum for training: the
    # finishing moves are learned from starts where they are in reach; 0 = the VER paper's
    # far starts only, as evaluation uses).
    near_start_prob: float = 0.0
    # Reverse curriculum from demonstration states (training only; applied by the trainers'
    # env factory, skills/start_curriculum.py, for any skill with a scripted oracle): with
    # this probability a reset is followed by a prefix of the skill's oracle solving that
    # episode, k ~ U{0..oracle_start_max_frac * max_episode_steps} steps through the env's
    # own step(), and the episode starts there (step count and force meter restart; bonuses
    # the oracle earned stay earned). A prefix whose episode ended is replayed shorter, k ~
    # U{0..j-1} for an end at step j. 0 = plain starts, as evaluation uses.
    oracle_start_prob: float = 0.0
    # The longest prefix as a fraction of max_episode_steps, in (0, 1].
    oracle_start_max_frac: float = 1.0
    # Training a base-moving pick or place as the drive of a hand-off (training only; applied
    # by the trainers' env factory, distill/hand_off_env.py): once the target stands within
    # `hand_off_reach` m of the shoulder and 30 degrees of the heading, this fixed-base
    # checkpoint ('shipped': the skill's shipped one) finishes the episode with the base
    # still, and the agent's step ends with the rest's discounted return. None = off.
    hand_off_to: str | None = None
    hand_off_reach: float = 0.85
    # With hand_off_to, on fridge picks: reward per metre the base comes nearer the scripted
    # pick's stand pose in front of the opening, round the open doors (0 = off).
    hand_off_approach: float = 0.0
    # Apply the skill's deployment grip rule while training (tasks/grip_rules.py,
    # docs/DESIGN.md §4.3): e.g. pick keeps the grip on once holding, place keeps it off once
    # released. A deviation from Habitat 2.0 skill training, which leaves the grip free and
    # masks it only in the HRL executor (§8.2).
    grip_mask: bool = True
    # Apply the deployment nav stop-mask while training (tasks/stop_rule.py): stop is ignored
    # while the goal is > 2 m away. A deviation from Habitat 2.0 nav training, which masks it
    # only in the HRL executor; without it a random policy stops within ~2 steps.
    stop_mask: bool = True
    # Habitat's force_terminate: the episode ends as a failure (excessive_force) once the
    # robot's contact force passes these limits (tasks/force_limit.py).
    force_limit: ForceLimit = field(default_factory=ForceLimit)
    # The simulator the env builds (e.g. sim.torso_lift=0.3); its depth camera size follows
    # depth_size (`_sim_with_depth`).
    sim: SimConfig = field(default_factory=SimConfig)

    def __post_init__(self) -> None:
        self.sim = _sim_with_depth(self.sim, self.depth_size, "task")
        if self.task not in skill_names():
            raise ValueError(f"unknown task {self.task!r}; valid tasks: {', '.join(skill_names())}")
        if self.obs_preset not in OBS_PRESETS:
            raise ValueError(
                f"unknown obs_preset {self.obs_preset!r}; use one of {', '.join(OBS_PRESETS)}"
            )
        if self.max_episode_steps is None:
            self.max_episode_steps = task_step_limit(self.task, self.base_movement)
        if self.max_episode_steps <= 0:
            raise ValueError(f"max_episode_steps must be > 0, got {self.max_episode_steps}")
        if self.hand_off_approach < 0:
            raise ValueError(f"hand_off_approach must be >= 0, got {self.hand_off_approach}")
        if not 0 < self.hand_off_reach <= 2:
            raise ValueError(
                f"hand_off_reach must be in (0, 2] m (e.g. 0.85), got {self.hand_off_reach}"
            )
        if self.thresholds.place_settle < 0.0:
            raise ValueError(
                f"thresholds.place_settle must be >= 0 m per step (0: off), got "
                f"{self.thresholds.place_settle}"
            )
        if not self.thresholds.place_release > 0.0:
            raise ValueError(
                f"thresholds.place_release must be > 0 m, got {self.thresholds.place_release}"
            )
        if not 0.0 <= self.near_start_prob <= 1.0:
            raise ValueError(f"near_start_prob must be in [0, 1], got {self.near_start_prob}")
        if not 0.0 <= self.oracle_start_prob <= 1.0:
            raise ValueError(f"oracle_start_prob must be in [0, 1], got {self.oracle_start_prob}")
        if not 0.0 < self.oracle_start_max_frac <= 1.0:
            raise ValueError(
                f"oracle_start_max_frac must be in (0, 1], got {self.oracle_start_max_frac}"
            )


def _sim_with_depth(sim: SimConfig, depth_size: int, owner: str) -> SimConfig:
    """`sim` with its head depth camera at depth_size × depth_size: the observation's size is
    the config's `depth_size`, so the sim's depth fields only follow it. ValueError for a
    sim depth set to another size."""
    default = SimConfig()
    for name in ("depth_width", "depth_height"):
        value = getattr(sim, name)
        if value not in (getattr(default, name), depth_size):
            raise ValueError(
                f"{owner}.sim.{name}={value} differs from {owner}.depth_size={depth_size}: the "
                f"depth image size is {owner}.depth_size; set that instead"
            )
    return dataclasses.replace(sim, depth_width=depth_size, depth_height=depth_size)


def task_field(name: str) -> str:
    """The TaskConfig field path of `name`: an episode generation option named without its
    sub-config (`fridge_pick_prob`, a TaskConfig field before it moved) is
    `episodes.fridge_pick_prob`; any other name is itself."""
    top = name.split(".", 1)[0]
    if top not in TaskConfig.__dataclass_fields__ and top in EpisodeGenConfig.__dataclass_fields__:
        return f"episodes.{name}"
    return name


def default_task_config(task: str, **overrides: Any) -> TaskConfig:
    """The DESIGN §4 defaults for `task` (step limit, reward coefficients), then `overrides`:
    TaskConfig fields, or episode generation options by name (`fridge_pick_prob=0.4` sets
    `episodes.fridge_pick_prob`, `task_field`)."""
    if task not in skill_names():
        raise ValueError(f"unknown task {task!r}; valid tasks: {', '.join(skill_names())}")
    options = {k: overrides.pop(k) for k in list(overrides) if task_field(k) != k}
    unknown = set(overrides) - set(TaskConfig.__dataclass_fields__)
    if unknown:
        raise ValueError(
            f"unknown TaskConfig field(s) {sorted(unknown)}; "
            f"valid: {', '.join(TaskConfig.__dataclass_fields__)}"
        )
    if options:
        base = overrides.get("episodes", EpisodeGenConfig())
        overrides["episodes"] = dataclasses.replace(base, **options)
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
    # force_terminate over the whole HAB episode, as in Habitat's composite tasks
    force_limit: ForceLimit = field(default_factory=ForceLimit)
    sim: SimConfig = field(default_factory=SimConfig)  # its depth size follows depth_size

    def __post_init__(self) -> None:
        self.sim = _sim_with_depth(self.sim, self.depth_size, "HabConfig")
        if self.obs_preset not in OBS_PRESETS:
            raise ValueError(
                f"unknown obs_preset {self.obs_preset!r}; use one of {', '.join(OBS_PRESETS)}"
            )
        if self.max_steps <= 0:
            raise ValueError(f"HabConfig.max_steps must be > 0, got {self.max_steps}")
