"""The base-movement step limit reaches training (issue 12's bug): the per-skill defaults live
in skill_spec.py and are resolved after base_movement is known, through compose and the CLI."""

import pytest
import yaml

from rearrange.config import compose_train_config
from rearrange.skill_spec import skill_def
from rearrange.tasks.config import default_task_config
from rearrange.train_skill import main


@pytest.mark.parametrize("skill", ["pick", "place", "open_fridge", "close_fridge", "open_cab",
                                   "close_cab"])  # fmt: skip
def test_compose_matches_default_task_config(skill):
    for bm in (False, True):
        composed = compose_train_config(skill, ["base_movement=true"] if bm else [])
        direct = default_task_config(skill, base_movement=bm)
        assert composed.task.max_episode_steps == direct.max_episode_steps
        assert composed.task.max_episode_steps == (
            skill_def(skill).step_limit + (skill_def(skill).base_movement_extra_steps if bm else 0)
        )
        assert composed.task.reward == direct.reward and composed.task.base_movement == bm


def test_open_fridge_base_movement_is_300_and_explicit_override_wins():
    assert compose_train_config("open_fridge", ["base_movement=true"]).task.max_episode_steps == 300
    cfg = compose_train_config("open_fridge", ["base_movement=true", "task.max_episode_steps=250"])
    assert cfg.task.max_episode_steps == 250
    assert compose_train_config("nav").task.reward.dist == 1.0  # per-skill rewards, one home
    assert compose_train_config("close_cab").task.reward.art_dist == 0.0


def test_cli_trains_base_movement_open_fridge_with_300_steps(tmp_path):
    rc = main(["open_fridge", "--base-movement", "--serial", "--profile", "cpu", "--algo", "ver",
               "--run-name", "t",
               f"runs_root={tmp_path}", "ver.num_envs=1", "ver.rollout_steps=8",
               "total_steps=8", "task.num_episodes=1"])  # fmt: skip
    assert rc == 0
    cfg = yaml.safe_load((tmp_path / "open_fridge" / "t" / "config.yaml").read_text())
    assert cfg["task"]["max_episode_steps"] == 300 and cfg["task"]["base_movement"] is True
    assert cfg["task"]["obs_preset"] == "state" and cfg["model"]["rnn_hidden_size"] == 64


def test_depth_profile_without_cuda_prints_one_line_with_the_cpu_command():
    from rearrange.train_skill import DEPTH_CPU_SPS, cpu_profile_hint

    cfg = compose_train_config("pick", ["base_movement=true"])
    hint = cpu_profile_hint(cfg, "pick", cuda=False)
    hours = 500_000_000 / DEPTH_CPU_SPS / 3600
    assert "\n" not in hint and f"~{hours:,.0f} h" in hint
    assert hint.endswith("python -m rearrange.train_skill pick --base-movement --profile cpu")
    assert cpu_profile_hint(cfg, "pick", cuda=True) is None
    assert cpu_profile_hint(compose_train_config("pick", ["profile=cpu"]), "pick", False) is None
