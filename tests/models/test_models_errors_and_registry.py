"""Clear one-line errors for bad input, the policy registry, config plumbing, devices."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces
from models_testlib import action_space, pick_observation_space, random_obs
from omegaconf import OmegaConf
from torch import nn

from rearrange.models import (
    ModelConfig,
    ModelConfigError,
    RecurrentGaussianPolicy,
    build_policy,
    get_policy_class,
    policy_names,
    register_policy,
)

STATE = ModelConfig(backbone="none")


def _state_policy():
    space = pick_observation_space(32)
    return space, build_policy(space, action_space(3), STATE)


@pytest.mark.parametrize(
    ("config", "match"),
    [
        (ModelConfig(backbone="resnet50"), "backbone"),
        (ModelConfig(policy="transformer"), "not a registered policy"),
        (ModelConfig(stage_dilations=[1, 2]), "one dilation per stage"),
        (ModelConfig(action_log_std_min=1.0, action_log_std_max=0.0), "log_std_min"),
        (ModelConfig(visual_keys=["rgb"]), "visual_keys names 'rgb'"),
        (ModelConfig(base_width=24, groupnorm_groups=16), "divisible"),
    ],
)
def test_bad_config_is_a_one_line_error(config: ModelConfig, match: str) -> None:
    with pytest.raises(ModelConfigError, match=match) as info:
        build_policy(pick_observation_space(32), action_space(3), config)
    assert "\n" not in str(info.value)


def test_bad_spaces_are_clear_errors() -> None:
    with pytest.raises(ModelConfigError, match="1-D gymnasium.spaces.Box"):
        build_policy(pick_observation_space(32), spaces.Discrete(4), STATE)
    with pytest.raises(ModelConfigError, match="must be gymnasium.spaces.Dict"):
        build_policy(spaces.Box(0, 1, (3,)), action_space(3), STATE)
    vectors_only = spaces.Dict({"joint": spaces.Box(-1, 1, (7,), np.float32)})
    with pytest.raises(ModelConfigError, match="backbone='none'"):
        build_policy(vectors_only, action_space(3), ModelConfig())
    mixed = spaces.Dict(
        {
            "depth": spaces.Box(0, 10, (64, 64, 1), np.float32),
            "rgb": spaces.Box(0, 255, (32, 32, 3), np.uint8),
        }
    )
    with pytest.raises(ModelConfigError, match="different sizes"):
        build_policy(mixed, action_space(3), ModelConfig())


def test_bad_call_arguments_are_clear_errors() -> None:
    space, policy = _state_policy()
    gen = torch.Generator().manual_seed(0)
    obs = random_obs(space, 4, gen)
    acts, nd = torch.zeros(4, 3), torch.ones(4).bool()
    with pytest.raises(ValueError, match="lacks keys \\['joint'\\]"):
        policy.act(
            {k: v for k, v in obs.items() if k != "joint"}, policy.initial_hidden(4), acts, nd
        )
    with pytest.raises(ValueError, match="initial_hidden"):
        policy.act(obs, torch.zeros(4, 2, 512), acts, nd)
    with pytest.raises(ValueError, match="sum to the 4 steps"):
        policy.evaluate_actions(obs, policy.initial_hidden(2), acts, acts, torch.tensor([2, 3]))
    with pytest.raises(ValueError, match="one entry per hidden state"):
        policy.evaluate_actions(obs, policy.initial_hidden(2), acts, acts, torch.tensor([4]))


def test_registry_builds_registered_classes() -> None:
    assert "recurrent_gaussian" in policy_names()
    assert get_policy_class("recurrent_gaussian") is RecurrentGaussianPolicy

    @register_policy("test_tiny_policy")
    class TinyPolicy(nn.Module):
        def __init__(self, observation_space, action_space, config) -> None:
            super().__init__()
            self.config = config

    built = build_policy(
        pick_observation_space(32), action_space(3), ModelConfig("test_tiny_policy")
    )
    assert isinstance(built, TinyPolicy)
    with pytest.raises(ValueError, match="already registered"):
        register_policy("test_tiny_policy")(RecurrentGaussianPolicy)


def test_model_config_round_trips_through_omegaconf() -> None:
    conf = OmegaConf.structured(ModelConfig)
    conf.rnn_hidden_size = 128
    conf.stage_dilations = [1, 1, 1, 2]
    config = OmegaConf.to_object(conf)
    assert isinstance(config, ModelConfig)
    policy = build_policy(pick_observation_space(32), action_space(3), config)
    assert policy.hidden_size == 128 and policy.num_recurrent_layers == 4


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_policy_runs_on_cuda() -> None:
    space = pick_observation_space(128)
    policy = build_policy(space, action_space(10), ModelConfig()).cuda()
    gen = torch.Generator().manual_seed(0)
    obs = {k: v.cuda() for k, v in random_obs(space, 9, gen).items()}
    acts = torch.randn(9, 10, device="cuda")
    hidden = policy.initial_hidden(2)
    assert hidden.device.type == "cuda"
    with torch.no_grad():
        value, action, _, hidden_out = policy.act(
            {k: v[:2] for k, v in obs.items()}, hidden, acts[:2], torch.tensor([True, False]).cuda()
        )
    assert value.device.type == "cuda" and hidden_out.device.type == "cuda"
    lengths = torch.tensor([4, 5])  # CPU lengths, as PackedSequence wants
    values, log_probs, entropy = policy.evaluate_actions(obs, hidden, acts, acts, lengths)
    (values.sum() + log_probs.sum() + entropy.sum()).backward()
    assert policy.encoder.visual.backbone.stem[0].weight.grad.is_cuda
    values2, *_ = policy.evaluate_actions(obs, hidden, acts, acts, lengths.cuda())
    torch.testing.assert_close(values2, values.detach())
