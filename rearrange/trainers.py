"""The table of trainers (docs/DESIGN.md §5): `TRAINERS[algo]` is everything `train_skill`
needs to know about the trainer `--algo algo` names, so the CLI looks a trainer up instead of
branching on it.

Each entry builds, from the composed `TrainConfig` and the run directory, an object that
satisfies `runtime.run.Trainer` (`train() -> TrainResult`); both trainers take the same
`RunConfig` (`cfg.run`: envs, steps, seed, device, intervals in env steps) and `RunSetup`:
VER-PPO, PQL, and DAgger distillation of a state teacher into the depth student.
A new trainer is one entry here, its config group (`groups`, a field of `TrainConfig`) and
`skill_configs/algo/<name>.yaml`.

Importing this module loads no torch (rearrange.config reads the table); the trainers are
imported when an entry builds one.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rearrange.runtime.run import RunSetup, Trainer

# The composed `config.TrainConfig`. Not imported, even for type checking: config.py reads
# this table (to check `algo` and name each trainer's settings), so the arrow runs one way.
TrainConfig = Any


@dataclass(frozen=True)
class TrainerEntry:
    """One row of the table."""

    label: str
    """The trainer's name in messages ("VER-PPO")."""
    groups: tuple[str, ...]
    """The config groups only this trainer reads; an override of another trainer's group is
    refused (`config.foreign_trainer_override`)."""
    updates: str
    """What its `TrainResult.num_updates` counts, for the final log line."""
    build: Callable[[TrainConfig, Path], Trainer]
    """The trainer of a composed config, writing to the run directory."""
    check: Callable[[TrainConfig], str | None]
    """One line naming what keeps the config from training with it, or None."""
    describe: Callable[[TrainConfig], str]
    """How it runs, for the start banner."""
    device: Callable[[TrainConfig], str]
    """Where its networks train, for the start banner."""
    eta_note: Callable[[], str]
    """When a measured ETA comes (the start banner's is a recorded one)."""


def plain_config(cfg: TrainConfig) -> dict:
    """The composed config as plain data (saved in every checkpoint)."""
    from omegaconf import OmegaConf

    return OmegaConf.to_container(OmegaConf.structured(cfg))


def run_setup(cfg: TrainConfig, run_dir: Path, render_device: str | None = None) -> RunSetup:
    """The run's envs and outputs, whichever trainer: env i of rank r is seeded from
    run.seed + 100,003·r (+ i, inside the factory) and renders on `render_device`; with
    task.oracle_start_prob > 0 they start along the oracle's solution
    (skills/start_curriculum.py)."""
    if cfg.skill == "synthetic":
        from rearrange.runtime.synthetic_env import SyntheticEnvFactory

        factory = SyntheticEnvFactory(cfg.synthetic, cfg.run.num_envs)
    else:
        from rearrange.runtime.env_worker import TaskEnvFactory

        seed = cfg.run.seed + 100_003 * int(os.environ.get("RANK", "0"))
        factory_cls: type[TaskEnvFactory] = TaskEnvFactory
        if cfg.task.oracle_start_prob > 0:  # starts along the oracle's solution (training only)
            from rearrange.skills.start_curriculum import OracleStartEnvFactory

            factory_cls = OracleStartEnvFactory
        factory = factory_cls(cfg.skill, cfg.task, "train", seed, render_device=render_device)
        if cfg.task.hand_off_to:  # the agent drives; a fixed-base checkpoint finishes
            from rearrange.distill.hand_off_env import HandOffEnvFactory

            gamma = cfg.pql.gamma if cfg.algo == "pql" else cfg.ppo.gamma
            path = _hand_off_path(cfg)
            task = cfg.task
            factory = HandOffEnvFactory(
                factory, path, task.hand_off_reach, gamma, task.hand_off_approach
            )
    return RunSetup(env_factory=factory, run_dir=run_dir, config_dict=plain_config(cfg))


def _hand_off_path(cfg: TrainConfig) -> str:
    """`task.hand_off_to` as an absolute path, checked (TeacherError, one line)."""
    from rearrange.distill.teacher_labels import check_fixed_base

    task = cfg.task
    return check_fixed_base(
        cfg.skill, task.base_movement, task.hand_off_to, task.hand_off_reach,
        "task.hand_off_to", "task.hand_off_reach",
    )  # fmt: skip


def check_hand_off(cfg: TrainConfig) -> str | None:
    """`task.hand_off_to` (distill/hand_off_env.py): a base-moving pick or place handed to a
    fixed-base checkpoint that exists; a distill run hands its labels off instead."""
    from rearrange.distill.teacher_labels import TeacherError

    if not cfg.task.hand_off_to:
        return None
    if cfg.algo == "distill":
        return (
            "task.hand_off_to trains a drive for a hand-off; a distill run hands its labels "
            "off with distill.fixed_base_teacher: drop task.hand_off_to"
        )
    try:
        _hand_off_path(cfg)
    except TeacherError as exc:
        return str(exc)
    return None


def _hand_off_note(cfg: TrainConfig) -> str:
    """The banner's words for `task.hand_off_to` ('' when off)."""
    if not cfg.task.hand_off_to:
        return ""
    who = _named(cfg.task.hand_off_to, "fixed-base")
    return f"; {who} finishes within {cfg.task.hand_off_reach:g} m of the target"


# ---------------------------------------------------------------- VER-PPO
def _build_policy(obs_space, action_space, model_cfg):
    from rearrange.models import build_policy

    return build_policy(obs_space, action_space, model_cfg)


def _ver_device(cfg: TrainConfig) -> str:
    from rearrange.ver_backend.distributed import rank_device

    return str(rank_device(cfg.run.device))


def build_ver(cfg: TrainConfig, run_dir: Path) -> Trainer:
    """VER-PPO; env workers render on the rank's GPU."""
    from rearrange.ver_backend.trainer import VERTrainer

    return VERTrainer(
        cfg.run,
        cfg.ver,
        cfg.ppo,
        run_setup(cfg, run_dir, render_device=_ver_device(cfg)),
        functools.partial(_build_policy, model_cfg=cfg.model),
        init_weights=Path(cfg.pretrained_weights) if cfg.pretrained_weights else None,
    )


def check_ver(cfg: TrainConfig) -> str | None:
    hand_off = check_hand_off(cfg)
    if hand_off:
        return hand_off
    try:
        cfg.ver.check_run(cfg.run)
    except ValueError as exc:
        return str(exc)
    return None


# ---------------------------------------------------------------- PQL
def build_pql(cfg: TrainConfig, run_dir: Path) -> Trainer:
    """PQL (the config passed `check_pql`)."""
    from rearrange.pql.trainer import PQLTrainer

    return PQLTrainer(cfg.run, cfg.pql, run_setup(cfg, run_dir), cfg.model)


def check_pql(cfg: TrainConfig) -> str | None:
    """PQL trains state observations with its own actor policy, on one machine."""
    from rearrange.pql.policy import PQL_POLICY

    if cfg.skill != "synthetic" and cfg.task.obs_preset == "depth":
        return (
            "PQL trains from state observations but task.obs_preset=depth: drop --profile "
            "paper, or pass task.obs_preset=state"
        )
    if cfg.model.policy != PQL_POLICY:
        return (
            f"algo=pql needs model.policy={PQL_POLICY} (set by skill_configs/algo/pql.yaml), got "
            f"{cfg.model.policy!r}: use --algo pql instead of algo=pql"
        )
    if cfg.pretrained_weights:
        return "pretrained_weights is supported with --algo ver and distill only: drop it for PQL"
    hand_off = check_hand_off(cfg)
    if hand_off:
        return hand_off
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        return "PQL runs on one machine in one launch: start it without torchrun"
    return None


def _describe_pql(cfg: TrainConfig) -> str:
    mode = "one process" if cfg.run.serial else "Actor, V- and P-learner processes"
    hand_off = _hand_off_note(cfg)
    return f"PQL ({mode}; {cfg.run.num_envs} envs{hand_off}; --algo ver for VER-PPO)"


def _pql_eta_note() -> str:
    from rearrange.pql.trainer import MEASURED_ETA_STEPS

    return f"a measured one after {MEASURED_ETA_STEPS:,} steps"


# ---------------------------------------------------------------- distillation (DAgger)
def _teacher(cfg: TrainConfig):
    """The run's teacher (`distill.teacher`, else the shipped checkpoint), checked."""
    import logging

    from rearrange.distill.teacher_labels import release_mismatch, resolve_teacher

    spec = resolve_teacher(
        cfg.skill,
        cfg.task.base_movement,
        cfg.distill.teacher,
        cfg.synthetic.move_scale,
        cfg.distill.oracle_near or 0.0,
        cfg.distill.oracle_yaw_tol,
        bool(cfg.distill.unjam),
        cfg.distill.grip_near or 0.0,
        cfg.distill.grip_clear or 0.0,
        cfg.distill.fixed_base_teacher,
        cfg.distill.fixed_base_reach,
        cfg.distill.drawer_teacher,
        cfg.distill.fridge_teacher,
    )
    mismatch = cfg.skill == "place" and release_mismatch(spec, cfg.task.thresholds.place_release)
    if mismatch:
        logging.getLogger(__name__).warning(mismatch)
    return spec


def build_distill(cfg: TrainConfig, run_dir: Path) -> Trainer:
    """DAgger (the config passed `check_distill`); env workers render on the student's GPU."""
    from rearrange.distill.trainer import DistillTrainer

    device = cfg.run.resolved_device()
    return DistillTrainer(
        cfg.run,
        cfg.distill,
        run_setup(cfg, run_dir, render_device=device),
        _teacher(cfg),
        functools.partial(_build_policy, model_cfg=cfg.model),
        init_weights=Path(cfg.pretrained_weights) if cfg.pretrained_weights else None,
    )


def check_distill(cfg: TrainConfig) -> str | None:
    """The student learns depth (the synthetic env: its own observations) with the paper's
    recurrent policy, on one machine, from a teacher that fits the skill and mode."""
    from rearrange.distill.teacher_labels import TeacherError

    if cfg.skill != "synthetic" and cfg.task.obs_preset != "depth":
        return (
            f"--algo distill trains a depth student but task.obs_preset={cfg.task.obs_preset}: "
            "use --profile paper (the teacher keeps its own state observations)"
        )
    if cfg.model.policy != "recurrent_gaussian":
        return (
            f"--algo distill trains the recurrent_gaussian policy, got model.policy="
            f"{cfg.model.policy!r}: drop the model.policy override"
        )
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        return "distill runs on one machine in one launch: start it without torchrun"
    try:
        _teacher(cfg)
    except TeacherError as exc:
        return str(exc)
    return check_hand_off(cfg)


def _named(teacher: str, kind: str) -> str:
    """A hand-off teacher as the banner names it ('shipped': the shipped one of its kind,
    'oracle': the scripted oracle)."""
    from rearrange.distill.teacher_labels import FIXED_BASE_SHIPPED, ORACLE

    if teacher == ORACLE:
        return "the scripted oracle"
    return f"the shipped {kind} checkpoint" if teacher == FIXED_BASE_SHIPPED else teacher


def _describe_distill(cfg: TrainConfig) -> str:
    from rearrange.distill.grip_labels import describe

    teacher = cfg.distill.teacher or (
        "scripted" if cfg.skill == "synthetic" else "the shipped checkpoint"
    )
    if (cfg.distill.oracle_near or 0.0) > 0:
        teacher += f", the oracle within {cfg.distill.oracle_near:g} m of the goal"
    if cfg.distill.fixed_base_teacher:
        teacher += (
            f", then {_named(cfg.distill.fixed_base_teacher, 'fixed-base')} within "
            f"{cfg.distill.fixed_base_reach:g} m of the target"
        )
    if cfg.distill.drawer_teacher:
        teacher += f", {_named(cfg.distill.drawer_teacher, 'base-moving')} in drawers"
    if cfg.distill.fridge_teacher:
        teacher += f", {_named(cfg.distill.fridge_teacher, 'base-moving')} driving to the fridge"
    if cfg.distill.unjam:
        teacher += ", backing away after a jammed step"
    teacher += describe(cfg.distill.grip_near or 0.0, cfg.distill.grip_clear or 0.0)
    return f"DAgger distillation (teacher: {teacher}; {cfg.run.num_envs} envs, lock-step)"


TRAINERS: dict[str, TrainerEntry] = {
    "ver": TrainerEntry(
        label="VER-PPO",
        groups=("ver", "ppo"),
        updates="updates",
        build=build_ver,
        check=check_ver,
        describe=lambda cfg: (
            f"VER-PPO (system {cfg.ver.system}; {cfg.run.num_envs} envs per rank"
            f"{_hand_off_note(cfg)})"
        ),
        device=_ver_device,
        eta_note=lambda: "the bar shows the measured one",
    ),
    "pql": TrainerEntry(
        label="PQL",
        groups=("pql",),
        updates="V-learner updates",
        build=build_pql,
        check=check_pql,
        describe=_describe_pql,
        device=lambda cfg: f"{cfg.run.resolved_device()} (learners; envs on CPU)",
        eta_note=_pql_eta_note,
    ),
    "distill": TrainerEntry(
        label="distill",
        groups=("distill",),
        updates="minibatch updates",
        build=build_distill,
        check=check_distill,
        describe=_describe_distill,
        device=lambda cfg: f"{cfg.run.resolved_device()} (student; teacher in each env worker)",
        eta_note=lambda: "the bar shows the measured one",
    ),
}
