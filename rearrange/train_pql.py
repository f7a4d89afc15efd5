"""`python -m rearrange.train_skill SKILL --algo pql`: the PQL branch of the training CLI
(beside train_skill: it joins the CLI's TrainConfig to the pql package, which does not
import the CLI layer).

`train_skill.main` composes the config (`+algo=pql` applies skill_configs/algo/pql.yaml),
resolves the run directory, checks it with `check_pql_config`, then trains with `train_pql`
and reports the outcome as it does for VER.
"""

from __future__ import annotations

import os
from pathlib import Path

from rearrange.config import TrainConfig, config_to_yaml
from rearrange.pql.policy import PQL_POLICY
from rearrange.pql.trainer import PQLSetup, PQLTrainer
from rearrange.runtime.env_worker import TaskEnvFactory
from rearrange.runtime.synthetic_env import SyntheticEnvFactory


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
    if cfg.pretrained_weights:
        return "pretrained_weights is supported with --algo ver only: drop it for PQL"
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


def train_pql(cfg: TrainConfig, run_dir: Path):
    """Train with PQL (the config passed `check_pql_config`); returns the trainer's result.
    Raises EnvWorkerError / LearnerError / CheckpointError; `train_skill` reports them."""
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
    return PQLTrainer(cfg.pql, setup).train()
