"""Root training config (`TrainConfig`) and its Hydra composition from `skill_configs/`.

Every field is declared (typed, documented) in a dataclass registered in Hydra's ConfigStore;
the yaml files in `skill_configs/` only override defaults: one file per skill plus the groups
ppo, ver, model, task and sim. `compose_train_config(skill, overrides)` is what the CLI uses.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.errors import MissingConfigException
from omegaconf import OmegaConf

from rearrange.models.config import ModelConfig
from rearrange.pql.config import ALGOS, PQLConfig
from rearrange.runtime.synthetic_env import SyntheticEnvConfig
from rearrange.sim.config import SimConfig
from rearrange.skill_spec import SKILL_NAMES
from rearrange.tasks.config import TaskConfig, default_task_config
from rearrange.ver_backend.config import PPOConfig, VERConfig

SKILLS = (*SKILL_NAMES, "synthetic")  # what train_skill trains
CONFIG_DIR_ENV = "REARRANGE_CONFIG_DIR"


def find_config_dir() -> Path:
    """The Hydra config directory: $REARRANGE_CONFIG_DIR if set; in a clone (or an editable
    install) the top-level skill_configs/, where users edit them; otherwise the copy the wheel
    carries inside the package (rearrange/skill_configs/, mapped from skill_configs/ by
    setup.py at build time)."""
    if os.environ.get(CONFIG_DIR_ENV):
        return Path(os.environ[CONFIG_DIR_ENV]).expanduser().resolve()
    package = Path(__file__).resolve().parent
    clone = package.parent / "skill_configs"
    if clone.is_dir() and (package.parent / "pyproject.toml").is_file():
        return clone
    return package / "skill_configs"


CONFIG_DIR = find_config_dir()
_REINSTALL = "reinstall rearrange (its wheel carries rearrange/skill_configs/)"


class ConfigError(ValueError):
    """A bad skill name, override or config value (one line naming it and the fix)."""


@dataclass
class CPUSchedule:
    """A skill's PQL schedule on the CPU profile (`--profile cpu` / `--algo pql` train
    `pql.total_steps` = this): each skill's yaml sets the steps that produced its shipped
    checkpoint (the manifests in rearrange/skills/pretrained/), so the ETA is that run's."""

    total_steps: int = 3_000_000
    """Environment steps of the fixed-base skill (3M: skills with no shipped PQL checkpoint)."""
    total_steps_bm: int | None = None
    """Environment steps of the base-movement variant (`--base-movement`); None: total_steps."""


@dataclass
class TrainConfig:
    """Everything `python -m rearrange.train_skill` needs."""

    skill: str = "synthetic"
    """Skill to train (see SKILLS); 'synthetic' is the 1-D reach test env."""
    algo: str = "ver"
    """Trainer: 'ver' (VER-PPO) or 'pql' (Parallel Q-Learning, state observations; set by
    `--algo pql`, i.e. the `+algo=pql` config group)."""
    base_movement: bool = False
    """Manipulation skills also control the base (copied into task.base_movement)."""
    total_steps: int | None = None
    """Shortcut for ver.total_steps and pql.total_steps (environment steps, all ranks
    together)."""
    cpu_schedule: CPUSchedule = field(default_factory=CPUSchedule)
    """The skill's PQL total steps on the CPU profile (skill_configs/algo/pql.yaml reads it)."""
    runs_root: str = "runs"
    """Outputs go to <runs_root>/<skill>/<run_name>/ (tb/, checkpoints/, config.yaml)."""
    run_name: str | None = None
    """Run directory name; None = a timestamp. An existing run with a checkpoint resumes."""
    torch_threads: int = 1
    """torch intra-op threads of the main process (env workers always use 1)."""
    worker_timeout_s: float = 120.0
    """An env that returns no step for this long is reported as stuck."""
    pretrained_weights: str | None = None
    """Start a new run from these policy weights (a train_skill checkpoint or a shipped one,
    e.g. rearrange/skills/pretrained/nav.pt) to fine-tune, say with a changed task config;
    the optimiser and step counters start fresh. --resume of the run ignores it. VER only."""
    ppo: PPOConfig = field(default_factory=PPOConfig)
    ver: VERConfig = field(default_factory=VERConfig)
    pql: PQLConfig = field(default_factory=PQLConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    task: TaskConfig = field(default_factory=TaskConfig)
    sim: SimConfig = field(default_factory=SimConfig)
    synthetic: SyntheticEnvConfig = field(default_factory=SyntheticEnvConfig)


def _task_node(task: str) -> TaskConfig:
    """The per-skill task defaults (step limit, rewards) from skill_spec.py, the one home of
    those numbers; `max_episode_steps` stays None so TaskConfig derives it when the final
    config is built, after `base_movement` is known."""
    node = default_task_config(task)
    node.max_episode_steps = None
    return node


def register_configs() -> None:
    """train_base (the schema) plus one `task/<skill>` node per skill task."""
    store = ConfigStore.instance()
    store.store(name="train_base", node=TrainConfig, replace=True)
    for task in SKILL_NAMES:
        store.store(group="task", name=task, node=_task_node(task), replace=True)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def compose_train_config(skill: str, overrides: list[str] | None = None) -> TrainConfig:
    """Compose skill_configs/<skill>.yaml + overrides into a validated TrainConfig."""
    if skill not in SKILLS:
        raise ConfigError(f"unknown skill {skill!r}; valid skills: {', '.join(SKILLS)}")
    _check_config_files(skill)
    register_configs()
    overrides = list(overrides or [])
    try:
        with initialize_config_dir(config_dir=str(CONFIG_DIR)):
            cfg = compose(config_name=skill, overrides=overrides)
    except MissingConfigException as exc:
        raise ConfigError(_missing_config_message(exc, skill, overrides)) from None
    except Exception as exc:  # hydra raises several types; all mean "bad override"
        raise ConfigError(f"bad override in {overrides}: {_one_line(exc)}") from None
    # base_movement must reach the task before TaskConfig is built: its step limit depends on
    # it (the base-movement open/close tasks get BASE_MOVEMENT_EXTRA_STEPS more steps).
    if cfg.base_movement:
        cfg.task.base_movement = True
        _select_base_movement_schedule(cfg)
    try:
        obj = OmegaConf.to_object(cfg)
    except Exception as exc:  # dataclass validation (ValueError) wrapped by OmegaConf
        raise ConfigError(f"invalid config: {_one_line(exc)}") from None
    if obj.algo not in ALGOS:
        raise ConfigError(f"algo={obj.algo!r}: use one of {', '.join(ALGOS)} (--algo pql)")
    if obj.total_steps is not None:
        obj.ver.total_steps = int(obj.total_steps)
        obj.pql.total_steps = int(obj.total_steps)
    obj.base_movement = obj.task.base_movement
    obj.task.sim_overrides = {**_changed_fields(obj.sim, SimConfig()), **obj.task.sim_overrides}
    return obj


def _select_base_movement_schedule(cfg) -> None:
    """The base-movement variant trains its own shipped schedule (pql.total_steps
    interpolates cpu_schedule.total_steps; an explicit pql.total_steps still wins)."""
    moving = cfg.cpu_schedule.total_steps_bm
    if moving is not None:
        cfg.cpu_schedule.total_steps = moving


# The config groups each trainer reads; the other trainer ignores them.
TRAINER_GROUPS = {"ver": ("ver", "ppo"), "pql": ("pql",)}
# ver.* keys the PQL trainer reads too (where its checkpoints go).
SHARED_KEYS = ("ver.checkpoint_dir",)
# Settings the two trainers name differently: the key(s) to use under the other one.
COUNTERPARTS = {
    "ppo.lr": ("pql.actor_lr", "pql.critic_lr"),
    "pql.actor_lr": ("ppo.lr",),
    "pql.critic_lr": ("ppo.lr",),
}
ALGO_FLAG = {"ver": "--algo ver", "pql": "--algo pql"}
TRAINER_NAME = {"ver": "VER-PPO", "pql": "PQL"}


def _override_key(override: str) -> str:
    """'+pql.seed=1' -> 'pql.seed'; '~ver' -> 'ver'."""
    return override.lstrip("+~").split("=", 1)[0].strip()


def _counterparts(key: str, algo: str) -> tuple[str, ...]:
    """Keys of `algo`'s config that mean what `key` means for the other trainer."""
    if key in COUNTERPARTS:
        return COUNTERPARTS[key]
    name = key.partition(".")[2]
    schemas = {"pql": (("pql", PQLConfig),), "ver": (("ver", VERConfig), ("ppo", PPOConfig))}
    return tuple(
        f"{group}.{name}"
        for group, schema in schemas[algo]
        if name and name in {f.name for f in fields(schema)}
    )[:1]


def foreign_trainer_override(algo: str, overrides: list[str]) -> str | None:
    """One line for the first override the `algo` trainer would silently ignore (a `ver.*` or
    `ppo.*` key under PQL, a `pql.*` key under VER-PPO), naming the key that applies; None if
    every override applies."""
    other = "ver" if algo == "pql" else "pql"
    for override in overrides:
        key = _override_key(override)
        if key.split(".")[0] not in TRAINER_GROUPS[other] or key in SHARED_KEYS:
            continue
        use = _counterparts(key, algo)
        if use:
            fix = f"use {' and '.join(use)}"
        else:
            fix = f"drop it, or use {ALGO_FLAG[other]}"
        what = key if "." in key else override.lstrip("+~")  # a group choice: ver=tiny
        unknown = "" if use else f" ({TRAINER_NAME[algo]} has no such setting)"
        return f"{what} does not apply to {ALGO_FLAG[algo]}{unknown}: {fix}"
    return None


def _check_config_files(skill: str) -> None:
    """A missing config directory or skill file is reported as that, not as an override."""
    if not CONFIG_DIR.is_dir():
        raise ConfigError(
            f"config directory not found: {CONFIG_DIR}: {_REINSTALL}, "
            f"or set {CONFIG_DIR_ENV} to a skill_configs directory"
        )
    path = CONFIG_DIR / f"{skill}.yaml"
    if not path.is_file():
        raise ConfigError(
            f"config file not found: {path}: restore it (git checkout -- skill_configs) "
            f"or {_REINSTALL}"
        )


def _missing_config_message(exc: MissingConfigException, skill: str, overrides: list[str]) -> str:
    """Hydra could not find `group/name`: an option the user chose that does not exist, or a
    file the skill's defaults list names that is missing from the config directory."""
    missing = exc.missing_cfg_file or ""
    group, _, name = missing.rpartition("/")
    options = ", ".join(exc.options or []) or "none"
    if group and any(o.lstrip("+~").split("=", 1)[0] == group for o in overrides):
        return (
            f"bad override in {overrides}: no {group} config {name!r} "
            f"({CONFIG_DIR / group / name}.yaml); available {group} options: {options}"
        )
    if group:
        return (
            f"config file not found: {CONFIG_DIR / group / name}.yaml (a defaults list of "
            f"{skill}.yaml names it): restore it (git checkout -- skill_configs) or {_REINSTALL}"
        )
    return f"config not found in {CONFIG_DIR}: {_one_line(exc)}"


def _changed_fields(value, default) -> dict:
    """Fields of a dataclass that differ from its defaults (sim.* overrides reach the task)."""
    return {
        f.name: getattr(value, f.name)
        for f in fields(value)
        if getattr(value, f.name) != getattr(default, f.name)
    }


def config_to_yaml(cfg: TrainConfig) -> str:
    return OmegaConf.to_yaml(OmegaConf.structured(cfg))
