"""The systems benchmarks build their policies from the training configs' own YAML files."""

import pytest

from benchmarks import trainer_ceiling
from benchmarks.model_configs import model_config
from benchmarks.systems_real import model_for


def test_state_model_is_the_yaml_file():
    m = model_config("state")
    assert (m.backbone, m.rnn_hidden_size, m.rnn_layers) == ("none", 64, 1)
    assert list(m.state_mlp_hidden) == [64]
    assert m.prev_action_embedding_size == 16


def test_overrides_and_cpu_profile_std():
    m = model_config("state_cpu", rnn_hidden_size=32)
    assert m.rnn_hidden_size == 32
    assert m.action_log_std_init == -1.0


def test_unknown_model_config_names_the_known_ones():
    with pytest.raises(ValueError, match="no model config .*nope.yaml; known: .*state_cpu"):
        model_config("nope")


def test_benchmarks_agree_on_the_depth_and_state_policies():
    # systems_real: the state.yaml policy; trainer_ceiling: the CPU profile's state_cpu.yaml
    assert model_for("state", 512) == model_config("state")
    assert trainer_ceiling._model("state", 512) == model_config("state_cpu")
    depth = model_for("depth", 256)
    assert depth == trainer_ceiling._model("depth", 256)
    assert depth.backbone != "none"
    assert (depth.rnn_hidden_size, depth.rnn_layers) == (256, 2)
