"""`python -m rearrange.train_skill SKILL --algo pql`: the PQL branch of the training CLI.

`train_skill.main` composes the config (`+algo=pql` applies skill_configs/algo/pql.yaml),
resolves the run directory, then hands over here.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from rearrange.config import TrainConfig, config_to_yaml
from rearrange.pql.learner_process import LearnerError
from rearrange.pql.policy import PQL_POLICY
from rearrange.pql.trainer import PQLSetup, PQLTrainer
from rearrange.ver_backend.checkpoint import CheckpointError
from rearrange.ver_backend.env_worker import EnvWorkerError, TaskEnvFactory
from rearrange.ver_backend.synthetic_env import SyntheticEnvFactory


def check_pql_config(cfg: TrainConfig) -> str | None:
    """One line naming what keeps this config from training with PQL, or None."""
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
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        return "PQL runs on one machine in one launch: start it without torchrun"
    return None


def env_factory(cfg: TrainConfig):
    if cfg.skill == "synthetic":
        return SyntheticEnvFactory(cfg.synthetic, cfg.pql.num_envs)
    return TaskEnvFactory(cfg.skill, cfg.task, "train", cfg.pql.seed)


def _plain(cfg: TrainConfig) -> dict:
    from omegaconf import OmegaConf

    return OmegaConf.to_container(OmegaConf.structured(cfg))


def run_pql(cfg: TrainConfig, run_dir: Path) -> int:
    """Train with PQL; exit code (2: bad config, 1: a worker, learner or checkpoint failed)."""
    problem = check_pql_config(cfg)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(config_to_yaml(cfg))
    setup = PQLSetup(
        env_factory=env_factory(cfg),
        model=cfg.model,
        run_dir=run_dir,
        checkpoint_dir=cfg.ver.checkpoint_dir,
        config_dict=_plain(cfg),
        worker_timeout_s=cfg.worker_timeout_s,
    )
    try:
        result = PQLTrainer(cfg.pql, setup).train()
    except (EnvWorkerError, LearnerError) as exc:
        if exc.worker_traceback:
            print(f"--- worker traceback ---\n{exc.worker_traceback}", file=sys.stderr)
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    logging.info(
        "done: %d steps, %d V-learner updates, %.0f SPS, checkpoint %s",
        result.num_steps,
        result.num_updates,
        result.sps,
        result.checkpoint,
    )
    return 0
