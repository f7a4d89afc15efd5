"""One run config for both trainers (docs/DESIGN.md §5): intervals count environment steps
under VER-PPO and PQL alike, every trainer satisfies `Trainer` (`train() -> TrainResult`),
and the table of trainers covers every algo the CLI and skill_configs know."""

from __future__ import annotations

import re

import pytest

from rearrange.config import CONFIG_DIR, compose_train_config
from rearrange.runtime.checkpoint import SkillCheckpoint
from rearrange.runtime.result import TrainResult
from rearrange.runtime.run import RunConfig, Trainer, next_multiple
from rearrange.train_skill import main, parse_args
from rearrange.trainers import TRAINERS

PQL_TINY = ["pql.batch_size=64", "pql.warmup_steps=4", "model.state_mlp_hidden=[16]",
            "pql.critic_hidden=[16]"]  # fmt: skip


def _snapshots(run_dir) -> list[int]:
    names = (run_dir / "checkpoints").glob("ckpt_*.pt")
    return sorted(int(re.fullmatch(r"ckpt_(\d+)\.pt", p.name)[1]) for p in names)


def test_next_multiple_is_the_grid_both_trainers_use():
    assert [next_multiple(s, 40) for s in (0, 39, 40, 41, 80)] == [40, 40, 80, 80, 120]


@pytest.mark.parametrize(
    ("field", "value"),
    [("num_envs", 0), ("total_steps", 0), ("log_every_steps", 0),
     ("checkpoint_every_steps", -5), ("keep_checkpoints", -1), ("device", "tpu"),
     ("worker_timeout_s", 0)],
)  # fmt: skip
def test_a_bad_run_setting_is_a_one_line_error_naming_it(field, value):
    with pytest.raises(ValueError, match=rf"^RunConfig\.{field}") as err:
        RunConfig(**{field: value})
    assert "\n" not in str(err.value)


def test_the_table_covers_every_algo():
    algos = {p.stem for p in (CONFIG_DIR / "algo").glob("*.yaml")}
    assert set(TRAINERS) == algos == {"ver", "pql", "distill"}
    for algo in TRAINERS:  # --algo offers exactly the table, and composes to its trainer
        assert parse_args(["pick", "--algo", algo]).algo == algo
        assert compose_train_config("synthetic", [f"+algo={algo}"]).algo == algo
    with pytest.raises(SystemExit):
        parse_args(["pick", "--algo", "a3c"])
    groups = [g for entry in TRAINERS.values() for g in entry.groups]
    assert sorted(groups) == [
        "distill",
        "ppo",
        "pql",
        "ver",
    ]  # each trainer's own groups, none shared


@pytest.mark.parametrize("algo", sorted(TRAINERS))
def test_every_trainer_is_built_from_the_same_run_config(algo, tmp_path):
    cfg = compose_train_config(
        "synthetic", [f"+algo={algo}", "run.num_envs=3", "run.seed=7", "run.serial=true"]
    )
    assert TRAINERS[algo].check(cfg) is None
    trainer = TRAINERS[algo].build(cfg, tmp_path)
    assert isinstance(trainer, Trainer)
    assert trainer.run is cfg.run and trainer.setup.run_dir == tmp_path
    assert trainer.setup.config_dict["run"]["num_envs"] == 3


def test_ver_checkpoints_and_logs_on_the_env_step_grid(tmp_path):
    # 2 envs × T=8: an update is 16 steps, so updates end at 16, 32, ..., 96. With an interval
    # of 40 steps the first update at or past 40, 80 checkpoints (48, 80), and the end (96).
    argv = ["synthetic", "--serial", "--run-name", "v", f"runs_root={tmp_path}",
            "run.num_envs=2", "ver.rollout_steps=8", "run.total_steps=96",
            "run.checkpoint_every_steps=40", "run.log_every_steps=40",
            "run.keep_checkpoints=10"]  # fmt: skip
    assert main(argv) == 0
    run = tmp_path / "synthetic" / "v"
    assert _snapshots(run) == [48, 80, 96]
    assert SkillCheckpoint.load(run / "checkpoints" / "latest.pt").num_updates == 6
    assert _tb_steps(run, "perf/sps") == [48, 80, 96]


def test_pql_checkpoints_and_logs_on_the_env_step_grid(tmp_path):
    # 4 envs: an Actor step is 4 env steps; the warm-up (4 rows = 16 steps) never checkpoints.
    # Interval 100: 100, 200 and the end (300); logs every 120 steps: 120, 240 and the end.
    argv = ["synthetic", "--algo", "pql", "--serial", "--run-name", "p",
            f"runs_root={tmp_path}", "run.num_envs=4", "run.total_steps=300",
            "run.checkpoint_every_steps=100", "run.log_every_steps=120",
            "run.keep_checkpoints=10", *PQL_TINY]  # fmt: skip
    assert main(argv) == 0
    run = tmp_path / "synthetic" / "p"
    assert _snapshots(run) == [100, 200, 300]
    assert _tb_steps(run, "perf/sps") == [120, 240, 300]


def _tb_steps(run, tag: str) -> list[int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run / "tb"))
    acc.Reload()
    return [e.step for e in acc.Scalars(tag)]


def test_train_result_is_the_trainers_common_answer(tmp_path):
    cfg = compose_train_config("synthetic", ["run.serial=true", "run.num_envs=2",
                                             "ver.rollout_steps=8", "run.total_steps=32"])  # fmt: skip
    trainer = TRAINERS["ver"].build(cfg, tmp_path)
    trainer.setup.progress = trainer.setup.tensorboard = False
    result = trainer.train()
    assert isinstance(result, TrainResult)
    assert (result.num_steps, result.num_updates) == (32, 2)
    assert result.checkpoint == tmp_path / "checkpoints" / "latest.pt"
