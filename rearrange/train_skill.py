"""CLI: train one skill with VER-PPO (or PQL: `--algo pql`, rearrange/pql/; or distil a state
teacher into the depth student: `--algo distill`, rearrange/distill/), the trainer looked up
in the table of trainers (`rearrange/trainers.py`, docs/DESIGN.md §5).

    python -m rearrange.train_skill SKILL [--base-movement] [--profile paper|cpu]
        [--algo ver|pql|distill] [--teacher CKPT|oracle] [--system ver|nover|ddppo]
        [--serial] [--resume] [--run-name NAME] [hydra overrides, e.g. ppo.lr=1e-4 run.num_envs=4]
    torchrun --nproc-per-node 2 -m rearrange.train_skill synthetic ...

Outputs: runs/SKILL/<run name or timestamp>/ with config.yaml, tb/ and checkpoints/latest.pt
(PQL also checkpoints/replay.npz). A banner at the start names the trainer, skill,
observations, device, run and TensorBoard directories, the steps and the ETA with its source.
Overrides of the other trainer (ver.* or ppo.* under --algo pql, pql.* under VER-PPO) are
refused in one line naming the key that applies. What both trainers read is `run.*`
(run.num_envs, run.total_steps, run.checkpoint_every_steps, ... in environment steps); keys
from before it (total_steps, pql.checkpoint_interval, ver.num_envs, base_movement, sim.*,
task.fridge_pick_prob, ...) still work (`config.RENAMED_KEYS`).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

import torch

from rearrange.config import (
    SKILLS,
    ConfigError,
    TrainConfig,
    compose_train_config,
    config_to_yaml,
    foreign_trainer_override,
)
from rearrange.logs import configure_logging
from rearrange.runtime.checkpoint import CheckpointError, SkillCheckpoint, find_latest
from rearrange.runtime.logging_utils import format_duration
from rearrange.runtime.run import RunSettingError, TrainProcessError
from rearrange.runtime.run_lock import RunLock, RunLockError
from rearrange.skill_spec import SKILLS as DEFINED_SKILLS
from rearrange.skill_spec import skill_def
from rearrange.trainers import TRAINERS


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m rearrange.train_skill", description=__doc__)
    parser.add_argument("skill", help=f"one of: {', '.join(SKILLS)}")
    parser.add_argument("--base-movement", action="store_true", help="also control the base")
    parser.add_argument(
        "--profile",
        choices=("paper", "cpu"),
        help="paper: 128x128 depth + ResNet18 (needs a GPU); cpu: state observations (nav: + a "
        "64-ray obstacle range scan), small LSTM",
    )
    parser.add_argument(
        "--algo",
        choices=tuple(TRAINERS),
        help="ver: VER-PPO; pql: Parallel Q-Learning on state observations "
        "(skill_configs/algo/pql.yaml). Default: pql under --profile cpu for every skill but "
        "nav (faster in wall-clock on pick and open_cab: benchmarks/RESULTS.md, PQL vs VER-PPO), "
        "else ver; distill: DAgger from a state teacher into the depth student "
        "(skill_configs/algo/distill.yaml)",
    )
    parser.add_argument(
        "--teacher",
        help="--algo distill only: the teacher checkpoint (a file or a run directory), or "
        "'oracle' for the skill's scripted oracle; default the shipped checkpoint of the "
        "skill and base movement",
    )
    parser.add_argument("--system", choices=("ver", "nover", "ddppo"), help="collection system")
    parser.add_argument("--serial", action="store_true", help="everything in one process")
    parser.add_argument("--resume", action="store_true", help="continue the latest run")
    parser.add_argument("--run-name", help="run directory name (default: a timestamp)")
    parser.add_argument("overrides", nargs="*", help="hydra overrides key=value")
    return parser.parse_intermixed_args(argv)


# Under --profile cpu these skills keep VER-PPO: PQL's nav reached 24 % where VER-PPO's
# reached 55 % at the time, 92 % now (RESULTS.md, learned nav), and the synthetic task exists
# to exercise the VER backend.
CPU_PROFILE_VER_SKILLS = ("nav", "synthetic")


def default_algo(skill: str, profile: str | None) -> str:
    """The trainer a run gets without --algo: PQL for the CPU profile's state skills (on pick
    it reached 90 % val success in 10-15 min where VER-PPO reached at most 66 % in 25 min; on
    open_cab 90 % in 2-3 min, kept to the end, where VER-PPO ended both 15-min runs at 0 %),
    VER-PPO for the paper's depth profile and for nav."""
    return "pql" if profile == "cpu" and skill not in CPU_PROFILE_VER_SKILLS else "ver"


def cli_overrides(args: argparse.Namespace) -> list[str]:
    if args.algo is None:
        args.algo = "ver" if args.system else default_algo(args.skill, args.profile)
    extra = []
    if args.base_movement:
        extra.append("task.base_movement=true")
    if args.profile:
        extra.append(f"profile={args.profile}")
    if args.system:
        extra.append(f"ver.system={args.system}")
    # skill_configs/algo/<algo>.yaml, after --profile: an explicit --profile paper must win
    # over algo/pql.yaml's profile (so PQL refuses its depth observations). The default
    # trainer's group sets nothing, and leaving it out keeps a user's `+algo=NAME` working
    # and `algo=NAME` a plain value (refused by the trainer's check), not a group choice.
    if args.algo != TrainConfig.algo:
        extra.append(f"+algo={args.algo}")
    if getattr(args, "teacher", None):
        extra.append(f"distill.teacher={_quoted(args.teacher)}")
    if args.serial:
        extra.append("run.serial=true")
    if args.run_name:
        extra.append(f"run_name={args.run_name}")
    return [*extra, *args.overrides]


def _quoted(value: str) -> str:
    """A Hydra override value that stays a string whatever it holds (paths with = or ,)."""
    quote = "'" if "'" not in value else '"'
    return f"{quote}{value}{quote}"


def resolve_run_dir(cfg: TrainConfig, resume: bool) -> Path:
    """runs/SKILL/NAME; --resume without a name picks the newest run with a checkpoint."""
    root = Path(cfg.runs_root) / cfg.skill
    if cfg.run_name:
        run_dir = root / cfg.run_name
    elif resume:
        runs = sorted(
            (p for p in root.glob("*") if find_latest(p / cfg.run.checkpoint_dir)),
            key=lambda p: p.stat().st_mtime,
        )
        if not runs:
            raise CheckpointError(
                f"--resume: no run with a checkpoint under {root}: train first or pass --run-name"
            )
        run_dir = runs[-1]
    else:
        # One name for all ranks: torchrun ranks start within a second of each other.
        run_dir = root / os.environ.get("REARRANGE_RUN_NAME", time.strftime("%Y%m%d-%H%M%S"))
    if resume and not find_latest(run_dir / cfg.run.checkpoint_dir):
        raise CheckpointError(
            f"--resume: no checkpoint at {run_dir / cfg.run.checkpoint_dir / 'latest.pt'}: "
            "drop --resume to start a new run"
        )
    return run_dir


def compose_run(args: argparse.Namespace) -> tuple[TrainConfig, Path]:
    """The config and run directory of a parsed command line. Without --algo, --resume keeps
    the trainer recorded in the run (a VER-PPO run from before PQL became the CPU profile's
    default resumes with VER-PPO)."""
    algo_given = args.algo is not None
    cfg = compose_train_config(args.skill, cli_overrides(args))
    run_dir = resolve_run_dir(cfg, args.resume)
    saved = saved_algo(run_dir) if args.resume and not algo_given else None
    if saved and saved != cfg.algo:
        args.algo = saved
        cfg = compose_train_config(args.skill, cli_overrides(args))
    check_trainer_options(args, cfg.algo)
    return cfg, run_dir


def check_trainer_options(args: argparse.Namespace, algo: str) -> None:
    """ConfigError for an option the chosen trainer would silently ignore: --system or a
    `ver.*` / `ppo.*` override under PQL, a `pql.*` override under VER-PPO."""
    if args.system and algo != "ver":
        raise ConfigError(
            f"--system {args.system} applies to VER-PPO only: drop it, or train with --algo ver"
        )
    if getattr(args, "teacher", None) and algo != "distill":
        raise ConfigError(
            f"--teacher applies to --algo distill only (this run trains with --algo {algo}): "
            "add --algo distill, or drop --teacher"
        )
    problem = foreign_trainer_override(algo, args.overrides)
    if problem:
        raise ConfigError(problem)


def saved_algo(run_dir: Path) -> str | None:
    """The trainer recorded in a run's config.yaml (None when it has none)."""
    from omegaconf import OmegaConf

    path = run_dir / "config.yaml"
    if not path.is_file():
        return None
    algo = OmegaConf.load(path).get("algo")
    return str(algo) if algo else None


# Measured on a 2-core CPU (benchmarks/RESULTS.md): the depth profile's ResNet18 trains at
# about this many environment steps per second.
DEPTH_CPU_SPS = 13
# Measured on one NVIDIA H200 with 16 cores (benchmarks/RESULTS.md, "VER on a GPU"):
# `train_skill pick --base-movement`, paper profile, 16 envs: 1,474 and 1,531 steps/s.
DEPTH_GPU_SPS = 1500


def cpu_profile_hint(cfg: TrainConfig, argv_skill: str, cuda: bool) -> str | None:
    """One line for a user about to train the paper's depth profile without a GPU."""
    if cuda or cfg.skill == "synthetic" or cfg.task.obs_preset != "depth":
        return None
    hours = cfg.run.total_steps / DEPTH_CPU_SPS / 3600
    bm = " --base-movement" if cfg.task.base_movement else ""
    if cfg.algo == "distill":
        return (
            "warning: no CUDA device: the depth student (ResNet18 + LSTM) acts and learns on "
            "the CPU, slowly; a smoke run can shrink it (task.depth_size, model.base_width)"
        )
    return (
        f"warning: no CUDA device: the paper profile (128x128 depth, ResNet18) runs ~"
        f"{DEPTH_CPU_SPS} steps/s on a CPU (~{hours:,.0f} h for {cfg.run.total_steps:,} steps); "
        f"on a CPU use: python -m rearrange.train_skill {argv_skill}{bm} --profile cpu"
    )


# ---------------------------------------------------------------- start banner
def manifest_algo(skill: str, command: str) -> str:
    """The trainer a shipped checkpoint's recorded training command ran."""
    from rearrange.skills.pretrained import training_argv

    argv = training_argv(command)
    pairs = set(zip(argv, argv[1:]))
    for algo in ("pql", "distill", "ver"):
        if ("--algo", algo) in pairs or f"--algo={algo}" in argv or f"+algo={algo}" in argv:
            return algo
    if "--system" in argv:
        return "ver"
    cpu = ("--profile", "cpu") in pairs or "--profile=cpu" in argv
    return default_algo(skill, "cpu" if cpu else None)


def recorded_speed(cfg: TrainConfig, cuda: bool) -> tuple[float, str] | None:
    """(env steps/s, where the figure comes from) for this run's ETA: the shipped checkpoint
    of the same skill, variant, trainer and observations (its manifest's steps / wall time),
    or the depth profile's measured CPU or GPU speed; None when nothing recorded fits. A
    shipped depth checkpoint's speed is a CPU one: it is not used for a run on CUDA."""
    from rearrange.skills.pretrained import pretrained_path, read_manifest

    depth = cfg.task.obs_preset == "depth"
    if cfg.algo == "ver" and depth:
        if cuda:
            return DEPTH_GPU_SPS, "measured for the paper profile on one H200 (RESULTS.md)"
        return DEPTH_CPU_SPS, "measured for the depth profile on a 2-core CPU (RESULTS.md)"
    if depth and cuda:
        return None
    path = pretrained_path(cfg.skill, cfg.task.base_movement, depth)
    manifest = read_manifest(path) if path else None
    if not manifest or not manifest.get("steps") or not manifest.get("wall_time_s"):
        return None
    command = str(manifest.get("training_command", ""))
    same = manifest_algo(cfg.skill, command) == cfg.algo
    if not same or manifest.get("obs_preset") != cfg.task.obs_preset:
        return None
    steps, wall = int(manifest["steps"]), float(manifest["wall_time_s"])
    return steps / wall, (
        f"recorded: the shipped {path.name}, {steps:,} steps in {format_duration(wall)}"
    )


def total_steps_of(cfg: TrainConfig) -> tuple[int, str]:
    """(total env steps, the key that sets them), whichever trainer."""
    return cfg.run.total_steps, "run.total_steps"


def checkpoint_progress(cfg: TrainConfig, run_dir: Path) -> tuple[int, float]:
    """(env steps, wall-clock seconds over all its sessions) of the run's checkpoint;
    (0, 0.0) for a new run."""
    path = find_latest(run_dir / cfg.run.checkpoint_dir)
    if path is None:
        return 0, 0.0
    ckpt = SkillCheckpoint.load(path)
    return ckpt.num_steps, ckpt.wall_time_s


def eta_line(cfg: TrainConfig, done: int, cuda: bool, done_wall_s: float = 0.0) -> str:
    """The ETA with its source: a resumed run's own speed so far (`done` steps in
    `done_wall_s`), else a recorded one; where none is, when a measured one comes."""
    total, _ = total_steps_of(cfg)
    later = TRAINERS[cfg.algo].eta_note()
    if done > 0 and done_wall_s > 0:
        own = f"this run so far: {done:,} steps in {format_duration(done_wall_s)}"
        speed: tuple[float, str] | None = (done / done_wall_s, own)
    else:
        speed = recorded_speed(cfg, cuda)
    if speed is None:
        return f"unknown (no recorded speed for this setup): {later}"
    sps, source = speed
    left = format_duration(max(total - done, 0) / sps)
    return f"~{left} at {sps:.0f} steps/s ({source}); {later}"


def start_banner(
    cfg: TrainConfig, run_dir: Path, done: int, cuda: bool, done_wall_s: float = 0.0
) -> list[str]:
    """What a user needs before a long run: which trainer on what, where it writes, how long
    (`done` steps in `done_wall_s` already in the run's checkpoint when it resumes)."""
    total, key = total_steps_of(cfg)
    entry = TRAINERS[cfg.algo]
    if cfg.skill in DEFINED_SKILLS and not skill_def(cfg.skill).has_base_movement_variant:
        variant = "drives its base"  # nav: no fixed-base variant
    else:
        variant = "base movement" if cfg.task.base_movement else "fixed base"
    run = f"{run_dir}" + (f" (resuming at step {done:,})" if done else " (new run)")
    return [
        f"trainer:      {entry.describe(cfg)}",
        f"skill:        {cfg.skill} ({variant})",
        f"observations: {cfg.task.obs_preset} (task.obs_preset)",
        f"device:       {entry.device(cfg)}",
        f"run dir:      {run}",
        f"TensorBoard:  tensorboard --logdir {run_dir / 'tb'}",
        f"steps:        {total:,} ({key}), {max(total - done, 0):,} to go",
        f"ETA:          {eta_line(cfg, done, cuda, done_wall_s)}",
    ]


def print_banner(cfg: TrainConfig, run_dir: Path, cuda: bool) -> None:
    """The start banner on stderr, above the progress bar (rank 0 only)."""
    if int(os.environ.get("RANK", "0")) != 0:
        return
    done, done_wall_s = checkpoint_progress(cfg, run_dir)
    lines = start_banner(cfg, run_dir, done, cuda, done_wall_s)
    print("\n".join(lines), file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    configure_logging(logging.INFO, "%(asctime)s %(message)s")  # no third-party INFO chatter
    try:
        cfg, run_dir = compose_run(args)
        if cfg.pretrained_weights and not Path(cfg.pretrained_weights).is_file():
            raise ConfigError(
                f"pretrained_weights={cfg.pretrained_weights}: no such file; pass a checkpoint "
                "(runs/SKILL/RUN/checkpoints/latest.pt or rearrange/skills/pretrained/SKILL.pt)"
            )
    except (ConfigError, CheckpointError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    cuda = torch.cuda.is_available()
    hint = cpu_profile_hint(cfg, args.skill, cuda)
    if hint and int(os.environ.get("RANK", "0")) == 0:
        print(hint, file=sys.stderr)
    torch.set_num_threads(cfg.torch_threads)
    entry = TRAINERS[cfg.algo]
    problem = entry.check(cfg)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    rank0 = int(os.environ.get("RANK", "0")) == 0
    lock = RunLock(run_dir)  # rank 0 holds it for the ranks: one trainer per run directory
    try:
        if rank0:
            lock.acquire()
    except RunLockError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        if not _banner_or_error(cfg, run_dir, cuda):
            return 1
        if rank0:
            (run_dir / "config.yaml").write_text(config_to_yaml(cfg))
        return report_training(entry.build(cfg, run_dir).train, entry.updates)
    finally:
        lock.release()


def _banner_or_error(cfg: TrainConfig, run_dir: Path, cuda: bool) -> bool:
    """Print the start banner; False (after a one-line error) if the run's checkpoint is
    unreadable."""
    try:
        print_banner(cfg, run_dir, cuda)
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return False
    return True


def report_training(train, updates: str) -> int:
    """Run a trainer's `train()` and report it: exit code 0 with a "done" log line, or 1 with
    a one-line error (and the failing process's traceback above it for worker/learner errors)."""
    try:
        result = train()
    except TrainProcessError as exc:
        if exc.worker_traceback:
            print(f"--- {exc.process} traceback ---\n{exc.worker_traceback}", file=sys.stderr)
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (CheckpointError, RunSettingError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    logging.info(
        "done: %d steps, %d %s, %.0f SPS, checkpoint %s",
        result.num_steps,
        result.num_updates,
        updates,
        result.sps,
        result.checkpoint,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
