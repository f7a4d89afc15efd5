"""CLI errors: unknown skill, malformed override; a tiny end-to-end run writes its outputs."""

import pytest

from rearrange.config import ConfigError, compose_train_config
from rearrange.train_skill import main


def test_unknown_skill_lists_valid_skills_and_exits_2(capsys):
    assert main(["fly"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: unknown skill 'fly'; valid skills: nav, pick, place")
    assert "\n" not in err


@pytest.mark.parametrize("override", ["ppo.lr==", "ver.no_such_field=1", "ver.num_envs=abc"])
def test_malformed_override_is_named(override, capsys):
    assert main(["synthetic", override]) == 2
    err = capsys.readouterr().err.strip()
    assert override.split("=")[0] in err and "\n" not in err


def test_compose_applies_overrides_and_validates():
    cfg = compose_train_config("pick", ["ppo.lr=1e-4", "run.num_envs=4", "task.obs_preset=state",
                                        "run.total_steps=2000", "task.base_movement=true"])  # fmt: skip
    assert cfg.ppo.lr == 1e-4 and cfg.run.num_envs == 4 and cfg.run.total_steps == 2000
    assert cfg.task.task == "pick" and cfg.task.obs_preset == "state" and cfg.task.base_movement
    with pytest.raises(ConfigError, match="VERConfig.system"):
        compose_train_config("synthetic", ["ver.system=fast"])


def test_tiny_serial_run_writes_config_tb_and_checkpoint(tmp_path):
    rc = main(["synthetic", "--serial", "--run-name", "t", f"runs_root={tmp_path}",
               "ver.num_envs=2", "ver.rollout_steps=8", "total_steps=32"])  # fmt: skip
    assert rc == 0
    run = tmp_path / "synthetic" / "t"
    assert (run / "config.yaml").read_text().startswith("skill: synthetic")
    assert (run / "checkpoints" / "latest.pt").is_file()
    assert any((run / "tb").iterdir())
