"""A missing config directory or file is reported as that (path and fix), not as an override."""

from __future__ import annotations

import logging
import shutil

import pytest

import rearrange.config as config_mod
from rearrange.config import ConfigError, compose_train_config, find_config_dir
from rearrange.logs import THIRD_PARTY_LOGGERS, quiet_third_party_loggers


@pytest.fixture()
def config_copy(tmp_path, monkeypatch):
    copy = tmp_path / "skill_configs"
    shutil.copytree(config_mod.CONFIG_DIR, copy)
    monkeypatch.setattr(config_mod, "CONFIG_DIR", copy)
    return copy


def test_clone_uses_the_top_level_configs(monkeypatch):
    monkeypatch.delenv("REARRANGE_CONFIG_DIR", raising=False)
    assert (
        find_config_dir()
        == config_mod.Path(config_mod.__file__).resolve().parents[1] / "skill_configs"
    )


def test_env_var_picks_the_config_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("REARRANGE_CONFIG_DIR", str(tmp_path))
    assert find_config_dir() == tmp_path.resolve()


def test_missing_config_dir(monkeypatch, tmp_path):
    monkeypatch.setattr(config_mod, "CONFIG_DIR", tmp_path / "nowhere")
    with pytest.raises(ConfigError) as err:
        compose_train_config("pick", ["ver.num_envs=2"])
    msg = str(err.value)
    assert msg.startswith(f"config directory not found: {tmp_path / 'nowhere'}")
    assert "REARRANGE_CONFIG_DIR" in msg and "override" not in msg and "\n" not in msg


def test_missing_skill_file(config_copy):
    (config_copy / "pick.yaml").unlink()
    with pytest.raises(ConfigError) as err:
        compose_train_config("pick", ["ver.num_envs=2"])
    msg = str(err.value)
    assert msg.startswith(f"config file not found: {config_copy / 'pick.yaml'}")
    assert "override" not in msg and "\n" not in msg


def test_missing_group_file(config_copy):
    (config_copy / "ver" / "default.yaml").unlink()
    with pytest.raises(ConfigError) as err:
        compose_train_config("pick", [])
    msg = str(err.value)
    assert msg.startswith(f"config file not found: {config_copy / 'ver' / 'default.yaml'}")
    assert "override" not in msg and "\n" not in msg


def test_unknown_group_option_is_a_bad_override():
    with pytest.raises(ConfigError) as err:
        compose_train_config("pick", ["ver=nope"])
    msg = str(err.value)
    assert msg.startswith("bad override in ['ver=nope']: no ver config 'nope'")
    assert "available ver options: " in msg and "tiny" in msg and "\n" not in msg


def test_bad_key_is_still_a_bad_override():
    with pytest.raises(ConfigError, match=r"^bad override in \['ver.nope=1'\]"):
        compose_train_config("pick", ["ver.nope=1"])


def test_third_party_loggers_are_quieted_not_the_root():
    saved = {name: logging.getLogger(name).level for name in THIRD_PARTY_LOGGERS}
    root_level = logging.getLogger().level
    try:
        quiet_third_party_loggers()
        assert logging.getLogger("OpenGL.acceleratesupport").getEffectiveLevel() == logging.WARNING
        assert logging.getLogger().level == root_level
        assert logging.getLogger("rearrange.train").level == logging.NOTSET
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)
