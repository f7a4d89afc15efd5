"""Each setting has one owner in the composed config (docs/DESIGN.md §5), the override keys
from before still mean what they meant (the shipped manifests' training commands among
them), and a key whose unit changed fails in one line naming its replacement."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest
import yaml
from omegaconf import OmegaConf

from rearrange.config import (
    RENAMED_KEYS,
    RETIRED_KEYS,
    ConfigError,
    TrainConfig,
    compose_train_config,
    rename_key,
)
from rearrange.pql.config import PQLConfig
from rearrange.runtime.run import RunConfig
from rearrange.skills.pretrained import shipped_dirs, shipped_file, training_argv
from rearrange.train_skill import main
from rearrange.ver_backend.config import PPOConfig, VERConfig


def _names(cls) -> set[str]:
    return {f.name for f in fields(cls)}


def test_each_setting_has_one_owner():
    run = _names(RunConfig)
    assert not run & (_names(VERConfig) | _names(PQLConfig) | _names(PPOConfig))
    assert not _names(VERConfig) & _names(PQLConfig)
    # the copies TrainConfig used to keep of task, sim and run settings are gone
    assert not {"base_movement", "total_steps", "sim", "worker_timeout_s"} & _names(TrainConfig)


def _select(cfg: TrainConfig, key: str):
    return OmegaConf.select(OmegaConf.structured(cfg), key)


def _trainer_of(key: str) -> list[str]:
    return ["+algo=pql"] if key.startswith("pql.") else []


VALUES = {"num_envs": 3, "total_steps": 1234, "seed": 5, "device": "cpu", "serial": True,
          "keep_checkpoints": 4, "checkpoint_dir": "ck", "checkpoint_interval": 700,
          "log_interval": 350, "worker_timeout_s": 9.5, "base_movement": True}  # fmt: skip


@pytest.mark.parametrize(("old", "new"), sorted(RENAMED_KEYS.items()))
def test_a_renamed_key_sets_what_its_new_key_sets(old, new):
    value = VALUES[old.rpartition(".")[2]]
    text = str(value).lower() if isinstance(value, bool) else str(value)
    algo = _trainer_of(old)
    via_old = compose_train_config("pick", [*algo, f"{old}={text}"])
    via_new = compose_train_config("pick", [*algo, f"{new}={text}"])
    assert _select(via_old, new) == _select(via_new, new) == value


def test_sim_and_episode_options_moved_under_the_task():
    old = compose_train_config("pick", ["sim.torso_lift=0.3", "task.fridge_pick_prob=0.4"])
    new = compose_train_config(
        "pick", ["task.sim.torso_lift=0.3", "task.episodes.fridge_pick_prob=0.4"]
    )
    for cfg in (old, new):
        assert cfg.task.sim.torso_lift == 0.3 and cfg.task.episodes.fridge_pick_prob == 0.4
    assert rename_key("task.reward.art_dist") == "task.reward.art_dist"  # a task field stays
    assert rename_key("task.work_noise_scale") == "task.episodes.work_noise_scale"


def test_base_movement_is_the_tasks_and_sets_its_schedule():
    flag = compose_train_config("open_cab", ["+algo=pql", "task.base_movement=true"])
    assert flag.task.base_movement and flag.task.max_episode_steps == 300  # 200 + base moves
    assert flag.run.total_steps == 300_000  # open_cab.yaml's cpu_schedule.total_steps_bm


@pytest.mark.parametrize(
    ("override", "new_value"),
    [("ver.checkpoint_interval=50", "run.checkpoint_every_steps=51200"),
     ("ver.log_interval=5", "run.log_every_steps=5120")],
)  # fmt: skip
def test_a_key_that_counted_updates_names_its_env_step_value(override, new_value, capsys):
    # the CPU profile: an update is ver.rollout_steps 128 × run.num_envs 8 = 1,024 steps
    with pytest.raises(ConfigError) as err:
        compose_train_config("nav", ["profile=cpu", override])
    assert new_value in str(err.value) and "1,024 steps" in str(err.value)
    assert main(["nav", "--profile", "cpu", override]) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and line.startswith(f"error: {override} counted updates")
    assert set(RETIRED_KEYS.values()) == {"run.checkpoint_every_steps", "run.log_every_steps"}


@pytest.mark.parametrize(
    ("override", "needle"),
    [("run.checkpoint_every_steps=abc", "'run.checkpoint_every_steps=abc']: Error merging"),
     ("pql.checkpoint_interval=abc", "'pql.checkpoint_interval=abc']: Error merging"),
     ("run.checkpoint_every_steps=0", "RunConfig.checkpoint_every_steps must be >= 1"),
     ("task.sim.depth_width=64", "differs from task.depth_size=128"),
     ("run.no_such_field=1", "'run.no_such_field=1']: Could not override")],
)  # fmt: skip
def test_a_malformed_override_is_one_line(override, needle, capsys):
    assert main(["synthetic", "--algo", "pql", override]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and needle in err and "\n" not in err


def _shipped_overrides(command: str) -> list[str]:
    return [w for w in training_argv(command) if "=" in w and not w.startswith("-")]


def _hydra_value(text: str):
    """An override's value as Hydra reads it: YAML, except that Hydra's grammar also takes
    a float without a dot (5e-4), which YAML 1.1 leaves a string."""
    value = yaml.safe_load(text)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


@pytest.mark.parametrize("name", sorted(p.stem for d in shipped_dirs() for p in d.glob("*.json")))
def test_the_shipped_training_commands_mean_what_they_meant(name, tmp_path):
    """Every key=value of a shipped checkpoint's training command lands, unchanged, on the
    setting it set when the checkpoint was trained (e.g. pql.checkpoint_interval=50000:
    a checkpoint every 50,000 env steps, now run.checkpoint_every_steps)."""
    from rearrange.train_skill import compose_run, parse_args

    command = json.loads(shipped_file(f"{name}.json").read_text())["training_command"]
    argv = training_argv(command)
    cfg, _ = compose_run(parse_args([*argv, f"runs_root={tmp_path}"]))
    for override in _shipped_overrides(command):
        key, _, text = override.partition("=")
        assert _select(cfg, rename_key(key)) == _hydra_value(text), override
    if "pql.checkpoint_interval=50000" in command:
        assert cfg.run.checkpoint_every_steps == 50_000
    assert cfg.task.base_movement == ("--base-movement" in argv)
