"""Root training config (`TrainConfig`) and its Hydra composition from `skill_configs/`.

Every field is declared (typed, documented) in a dataclass registered in Hydra's ConfigStore;
the yaml files in `skill_configs/` only override defaults: `skill.yaml`, what every skill
trains with, a short file per skill that includes it and adds that skill's own settings (a
skill defined outside the package may have none), and the groups ppo, ver, model, task,
profile, algo and sensing. Each setting has one owner (docs/DESIGN.md §5): what every
trainer reads is `run` (`RunConfig`, counts in env steps), each trainer's own settings its
group (`ver`/`ppo`, `pql`, `distill`), the task, episode generation and simulator settings `task`,
`task.episodes` and `task.sim`. Override keys from before that layout still work
(`RENAMED_KEYS`), or fail in one line naming the new key where their unit changed
(`RETIRED_KEYS`). `compose_train_config(skill, overrides)` is what the CLI uses.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.errors import MissingConfigException
from omegaconf import DictConfig, OmegaConf

from rearrange.distill.config import DistillConfig
from rearrange.models.config import ModelConfig
from rearrange.pql.config import PQLConfig
from rearrange.runtime.run import RunConfig
from rearrange.runtime.synthetic_env import SyntheticEnvConfig
from rearrange.skill_spec import SKILL_NAMES, skill_names
from rearrange.tasks.config import TaskConfig, default_task_config, task_field
from rearrange.trainers import TRAINERS
from rearrange.ver_backend.config import PPOConfig, VERConfig

SYNTHETIC = "synthetic"  # the 1-D reach test env (skill_configs/synthetic.yaml)
SKILLS = (*SKILL_NAMES, SYNTHETIC)  # what train_skill trains (`trainable_skills`: + registered)
SHARED_CONFIG = "skill"  # skill_configs/skill.yaml: what a skill without its own file uses
CONFIG_DIR_ENV = "REARRANGE_CONFIG_DIR"


def trainable_skills() -> tuple[str, ...]:
    """Every skill train_skill trains: the defined ones (skills registered from outside the
    package included, `skill_spec.register_skill`) and the synthetic env."""
    return (*skill_names(), SYNTHETIC)


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
    `run.total_steps` = this): each skill's yaml sets the steps that produced its shipped
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
    """Trainer: a key of `trainers.TRAINERS`, 'ver' (VER-PPO), 'pql' (Parallel Q-Learning,
    state observations; set by `--algo pql`, i.e. the `+algo=pql` config group) or 'distill'
    (DAgger distillation of a state teacher into the depth student, `--algo distill`)."""
    cpu_schedule: CPUSchedule = field(default_factory=CPUSchedule)
    """The skill's PQL total steps on the CPU profile (skill_configs/algo/pql.yaml reads it)."""
    runs_root: str = "runs"
    """Outputs go to <runs_root>/<skill>/<run_name>/ (tb/, checkpoints/, config.yaml)."""
    run_name: str | None = None
    """Run directory name; None = a timestamp. An existing run with a checkpoint resumes."""
    torch_threads: int = 1
    """torch intra-op threads of the main process (env workers always use 1)."""
    pretrained_weights: str | None = None
    """Start a new run from these policy weights (a train_skill checkpoint or a shipped one,
    e.g. rearrange/skills/pretrained/nav.pt) to fine-tune, say with a changed task config;
    the optimiser and step counters start fresh. --resume of the run ignores it. VER only."""
    run: RunConfig = field(default_factory=RunConfig)
    """What every trainer reads: envs, total steps, seed, device, log and checkpoint
    intervals (environment steps, all ranks together)."""
    ppo: PPOConfig = field(default_factory=PPOConfig)
    ver: VERConfig = field(default_factory=VERConfig)
    pql: PQLConfig = field(default_factory=PQLConfig)
    distill: DistillConfig = field(default_factory=DistillConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    task: TaskConfig = field(default_factory=TaskConfig)
    """The skill env: its task settings, `task.base_movement` (set by --base-movement),
    `task.episodes` (episode generation) and `task.sim` (the simulator)."""
    synthetic: SyntheticEnvConfig = field(default_factory=SyntheticEnvConfig)


def _task_node(task: str) -> TaskConfig:
    """The per-skill task defaults (step limit, rewards) from skill_spec.py, the one home of
    those numbers; `max_episode_steps` stays None so TaskConfig derives it when the final
    config is built, after `base_movement` is known."""
    node = default_task_config(task)
    node.max_episode_steps = None
    return node


def _writable(node) -> DictConfig:
    """`node` as a structured config every sub-config of which takes overrides: OmegaConf
    makes a frozen dataclass's node read-only (`task.episodes`, the generator's frozen
    `EpisodeGenConfig`), and Hydra merges yaml files and the command line into it. The
    composed config still builds the frozen dataclass."""
    cfg = OmegaConf.structured(node)
    pending = [cfg]
    while pending:
        sub = pending.pop()
        OmegaConf.set_readonly(sub, None)
        pending += [sub[k] for k in sub if isinstance(sub[k], DictConfig)]
    return cfg


def register_configs(skill: str = SYNTHETIC) -> None:
    """train_base: the schema, holding `skill`'s task defaults (step limit, rewards) from
    skill_spec.py, so one shared yaml (skill.yaml) serves every skill."""
    node = TrainConfig() if skill == SYNTHETIC else TrainConfig(skill=skill, task=_task_node(skill))
    ConfigStore.instance().store(name="train_base", node=_writable(node), replace=True)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def compose_train_config(skill: str, overrides: list[str] | None = None) -> TrainConfig:
    """Compose skill_configs/<skill>.yaml (or skill.yaml, `config_name`) + overrides into a
    validated TrainConfig."""
    if skill not in trainable_skills():
        known = ", ".join(trainable_skills())
        raise ConfigError(f"unknown skill {skill!r}; valid skills: {known}")
    _check_config_files(skill)
    register_configs(skill)
    given = list(overrides or [])
    renamed = [rename_override(o) for o in given]
    retired = [o for o in renamed if _override_key(o) in RETIRED_KEYS]
    if retired:
        kept = [o for o in renamed if o not in retired]
        raise ConfigError(_retired_message(retired[0], _compose(skill, kept, given)))
    cfg = _compose(skill, renamed, given)
    try:
        obj = OmegaConf.to_object(cfg)
    except Exception as exc:  # dataclass validation (ValueError) wrapped by OmegaConf
        raise ConfigError(f"invalid config: {_one_line(exc)}") from None
    if obj.algo not in TRAINERS:
        raise ConfigError(f"algo={obj.algo!r}: use one of {', '.join(TRAINERS)} (--algo NAME)")
    return obj


def _compose(skill: str, overrides: list[str], given: list[str]) -> DictConfig:
    """Hydra's composition of skill_configs/<skill>.yaml and `overrides` (current keys);
    errors name the overrides as `given`."""
    try:
        with initialize_config_dir(config_dir=str(CONFIG_DIR)):
            cfg = compose(config_name=config_name(skill), overrides=overrides)
    except MissingConfigException as exc:
        raise ConfigError(_missing_config_message(exc, skill, given)) from None
    except Exception as exc:  # hydra raises several types; all mean "bad override"
        raise ConfigError(f"bad override in {given}: {_one_line(exc)}") from None
    # The step limit of the base-movement open/close tasks and the CPU schedule depend on
    # task.base_movement; TaskConfig derives the limit when the object is built.
    if cfg.task.base_movement:
        _select_base_movement_schedule(cfg)
    return cfg


def _select_base_movement_schedule(cfg) -> None:
    """The base-movement variant trains its own shipped schedule (algo/pql.yaml's
    run.total_steps interpolates cpu_schedule.total_steps; an explicit one still wins)."""
    moving = cfg.cpu_schedule.total_steps_bm
    if moving is not None:
        cfg.cpu_schedule.total_steps = moving


# Override keys of the layout before `run`, `task.episodes` and `task.sim` owned their
# settings: each still works and means what it meant (intervals in env steps stayed env
# steps). Besides these, `sim.X` is `task.sim.X` and `task.X` for an episode generation
# option X is `task.episodes.X` (`rename_key`).
RENAMED_KEYS = {
    "total_steps": "run.total_steps",
    "worker_timeout_s": "run.worker_timeout_s",
    "base_movement": "task.base_movement",
    **{
        f"{algo}.{name}": f"run.{name}"
        for algo in ("ver", "pql")
        for name in ("num_envs", "total_steps", "seed", "device", "serial", "keep_checkpoints")
    },
    "ver.checkpoint_dir": "run.checkpoint_dir",
    "pql.checkpoint_interval": "run.checkpoint_every_steps",
    "pql.log_interval": "run.log_every_steps",
}
# Keys whose unit changed (VER-PPO counted updates): refused in one line with the value in
# env steps for this run.
RETIRED_KEYS = {
    "ver.checkpoint_interval": "run.checkpoint_every_steps",
    "ver.log_interval": "run.log_every_steps",
}
# ver.* keys the PQL trainer reads too: they were shared before `run` held them.
SHARED_KEYS = ("ver.checkpoint_dir",)
# Settings the trainers name differently: the key(s) to use under another one (those of the
# trainer's own groups apply, `_counterparts`).
COUNTERPARTS = {
    "ppo.lr": ("pql.actor_lr", "pql.critic_lr", "distill.lr"),
    "pql.actor_lr": ("ppo.lr", "distill.lr"),
    "pql.critic_lr": ("ppo.lr",),
    "distill.lr": ("ppo.lr", "pql.actor_lr"),
}
_OVERRIDE = re.compile(r"^(?P<prefix>[+~]*)(?P<key>[^=@]+)(?P<rest>=.*)?$", re.DOTALL)


def _override_key(override: str) -> str:
    """'+pql.seed=1' -> 'pql.seed'; '~ver' -> 'ver'."""
    return override.lstrip("+~").split("=", 1)[0].strip()


def rename_key(key: str) -> str:
    """The current name of an override key (itself when it is current)."""
    if key in RENAMED_KEYS:
        return RENAMED_KEYS[key]
    if key.startswith("sim."):
        return f"task.{key}"
    if key.startswith("task."):
        return f"task.{task_field(key[len('task.') :])}"
    return key


def rename_override(override: str) -> str:
    """`override` with its key renamed (`rename_key`), prefix and value kept."""
    match = _OVERRIDE.match(override)
    if not match:  # a package override (group@pkg=option) or malformed: Hydra judges it
        return override
    key = match["key"].strip()
    return f"{match['prefix']}{rename_key(key)}{match['rest'] or ''}"


def _retired_message(override: str, cfg: DictConfig) -> str:
    """One line: the retired interval key, and the env-step value that means the same in
    the run `cfg` composes (one update = ver.rollout_steps × run.num_envs steps per rank)."""
    key = _override_key(override)
    new = RETIRED_KEYS[key]
    ranks = int(os.environ.get("WORLD_SIZE", "1"))
    steps, envs = int(cfg.ver.rollout_steps), int(cfg.run.num_envs)
    per_update = steps * envs * ranks
    unit = f"one update is ver.rollout_steps × run.num_envs = {steps} × {envs} = {steps * envs:,}"
    unit += f" steps per rank, {per_update:,} over {ranks} ranks" if ranks > 1 else " steps here"
    value = override.partition("=")[2].strip()
    if value.isdigit():
        return (
            f"{key}={value} counted updates; intervals are env steps now: use "
            f"{new}={int(value) * per_update} ({unit})"
        )
    return f"{key} counted updates; intervals are env steps now: use {new} ({unit})"


def _counterparts(key: str, algo: str) -> tuple[str, ...]:
    """Keys of `algo`'s config that mean what `key` means for the other trainer."""
    if key in RENAMED_KEYS or key in RETIRED_KEYS:
        return (RENAMED_KEYS.get(key) or RETIRED_KEYS[key],)
    own = TRAINERS[algo].groups
    named = tuple(k for k in COUNTERPARTS.get(key, ()) if k.split(".")[0] in own)
    if named:
        return named
    name = key.partition(".")[2]
    schemas = {f.name: f.default_factory for f in fields(TrainConfig)}
    return tuple(
        f"{group}.{name}"
        for group in own
        if name and name in {f.name for f in fields(schemas[group])}
    )[:1]


def foreign_trainer_override(algo: str, overrides: list[str]) -> str | None:
    """One line for the first override the `algo` trainer would silently ignore (a key of
    another trainer's groups: `ver.*` or `ppo.*` under PQL, `pql.*` under VER-PPO, either
    under distill, `distill.*` under both), naming the key that applies; None if every
    override applies."""
    for override in overrides:
        key = _override_key(override)
        for other, entry in TRAINERS.items():
            if other == algo or key.split(".")[0] not in entry.groups or key in SHARED_KEYS:
                continue
            use = _counterparts(key, algo)
            fix = f"use {' and '.join(use)}" if use else f"drop it, or use --algo {other}"
            what = key if "." in key else override.lstrip("+~")  # a group choice: ver=tiny
            unknown = "" if use else f" ({TRAINERS[algo].label} has no such setting)"
            return f"{what} does not apply to --algo {algo}{unknown}: {fix}"
    return None


def config_name(skill: str) -> str:
    """The yaml a skill composes from: its own file, or (a skill defined outside the
    package, with no file of its own) the shared skill.yaml."""
    if skill not in SKILLS and not (CONFIG_DIR / f"{skill}.yaml").is_file():
        return SHARED_CONFIG
    return skill


def _check_config_files(skill: str) -> None:
    """A missing config directory or skill file is reported as that, not as an override."""
    if not CONFIG_DIR.is_dir():
        raise ConfigError(
            f"config directory not found: {CONFIG_DIR}: {_REINSTALL}, "
            f"or set {CONFIG_DIR_ENV} to a skill_configs directory"
        )
    path = CONFIG_DIR / f"{config_name(skill)}.yaml"
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
            f"{config_name(skill)}.yaml names it): restore it (git checkout -- skill_configs) "
            f"or {_REINSTALL}"
        )
    return f"config not found in {CONFIG_DIR}: {_one_line(exc)}"


def config_to_yaml(cfg: TrainConfig) -> str:
    return OmegaConf.to_yaml(OmegaConf.structured(cfg))
