"""CLI: train one skill with VER (or PQL: `--algo pql`, rearrange/pql/).

    python -m rearrange.train_skill SKILL [--base-movement] [--profile paper|cpu]
        [--algo ver|pql] [--system ver|nover|ddppo]
        [--serial] [--resume] [--run-name NAME] [hydra overrides, e.g. ppo.lr=1e-4 ver.num_envs=4]
    torchrun --nproc-per-node 2 -m rearrange.train_skill synthetic ...

Outputs: runs/SKILL/<run name or timestamp>/ with config.yaml, tb/ and checkpoints/latest.pt.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
import time
from pathlib import Path

import torch

from rearrange.config import SKILLS, ConfigError, TrainConfig, compose_train_config, config_to_yaml
from rearrange.logs import configure_logging
from rearrange.runtime.checkpoint import CheckpointError, find_latest
from rearrange.runtime.env_worker import EnvWorkerError, TaskEnvFactory
from rearrange.runtime.synthetic_env import SyntheticEnvFactory
from rearrange.ver_backend.distributed import rank_device
from rearrange.ver_backend.trainer import Trainer, TrainSetup


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
        choices=("ver", "pql"),
        help="ver: VER-PPO; pql: Parallel Q-Learning on state observations "
        "(skill_configs/algo/pql.yaml). Default: pql under --profile cpu for every skill but "
        "nav (faster in wall-clock on pick and open_cab: benchmarks/RESULTS.md, PQL vs VER-PPO), "
        "else ver",
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
        extra.append("base_movement=true")
    if args.profile:
        extra.append(f"profile={args.profile}")
    if args.system:
        extra.append(f"ver.system={args.system}")
    if args.algo == "pql":
        extra.append("+algo=pql")
    if args.serial:
        extra.append("pql.serial=true" if args.algo == "pql" else "ver.serial=true")
    if args.run_name:
        extra.append(f"run_name={args.run_name}")
    return [*extra, *args.overrides]


def resolve_run_dir(cfg: TrainConfig, resume: bool) -> Path:
    """runs/SKILL/NAME; --resume without a name picks the newest run with a checkpoint."""
    root = Path(cfg.runs_root) / cfg.skill
    if cfg.run_name:
        run_dir = root / cfg.run_name
    elif resume:
        runs = sorted(
            (p for p in root.glob("*") if find_latest(p / cfg.ver.checkpoint_dir)),
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
    if resume and not find_latest(run_dir / cfg.ver.checkpoint_dir):
        raise CheckpointError(
            f"--resume: no checkpoint at {run_dir / cfg.ver.checkpoint_dir / 'latest.pt'}: "
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
    return cfg, run_dir


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


def cpu_profile_hint(cfg: TrainConfig, argv_skill: str, cuda: bool) -> str | None:
    """One line for a user about to train the paper's depth profile without a GPU."""
    if cuda or cfg.skill == "synthetic" or cfg.task.obs_preset != "depth":
        return None
    hours = cfg.ver.total_steps / DEPTH_CPU_SPS / 3600
    bm = " --base-movement" if cfg.base_movement else ""
    return (
        f"warning: no CUDA device: the paper profile (128x128 depth, ResNet18) runs ~"
        f"{DEPTH_CPU_SPS} steps/s on a CPU (~{hours:,.0f} h for {cfg.ver.total_steps:,} steps); "
        f"on a CPU use: python -m rearrange.train_skill {argv_skill}{bm} --profile cpu"
    )


def build_policy_for(obs_space, action_space, model_cfg):
    from rearrange.models import build_policy

    return build_policy(obs_space, action_space, model_cfg)


def make_setup(cfg: TrainConfig, run_dir: Path) -> TrainSetup:
    if cfg.skill == "synthetic":
        factory = SyntheticEnvFactory(cfg.synthetic, cfg.ver.num_envs)
    else:
        rank = int(os.environ.get("RANK", "0"))
        seed = cfg.ver.seed + 100_003 * rank
        render = str(rank_device(cfg.ver.device))  # env workers render on the rank's GPU
        factory = TaskEnvFactory(cfg.skill, cfg.task, "train", seed, render_device=render)
    return TrainSetup(
        env_factory=factory,
        policy_builder=functools.partial(build_policy_for, model_cfg=cfg.model),
        run_dir=run_dir,
        config_dict=_plain(cfg),
        worker_timeout_s=cfg.worker_timeout_s,
        init_weights=Path(cfg.pretrained_weights) if cfg.pretrained_weights else None,
    )


def _plain(cfg: TrainConfig) -> dict:
    from omegaconf import OmegaConf

    return OmegaConf.to_container(OmegaConf.structured(cfg))


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
    hint = cpu_profile_hint(cfg, args.skill, torch.cuda.is_available())
    if hint and int(os.environ.get("RANK", "0")) == 0:
        print(hint, file=sys.stderr)
    torch.set_num_threads(cfg.torch_threads)
    if cfg.algo == "pql":
        from rearrange.pql.learner_process import LearnerError
        from rearrange.train_pql import check_pql_config, train_pql

        problem = check_pql_config(cfg)
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        train = functools.partial(train_pql, cfg, run_dir)
        return report_training(train, "V-learner updates", (LearnerError,))
    if int(os.environ.get("RANK", "0")) == 0:
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.yaml").write_text(config_to_yaml(cfg))
    return report_training(Trainer(cfg.ver, cfg.ppo, make_setup(cfg, run_dir)).train, "updates")


def report_training(train, updates: str, process_errors: tuple = ()) -> int:
    """Run `train()` (VER or PQL) and report it: exit code 0 with a "done" log line, or 1 with
    a one-line error (and the failing process's traceback above it for worker/learner errors)."""
    try:
        result = train()
    except (EnvWorkerError, *process_errors) as exc:
        if exc.worker_traceback:
            who = "env worker" if isinstance(exc, EnvWorkerError) else "learner process"
            print(f"--- {who} traceback ---\n{exc.worker_traceback}", file=sys.stderr)
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except CheckpointError as exc:
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
