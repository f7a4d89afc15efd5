"""`ModelConfig.channels_last`: the visual encoder's convs in NHWC memory format.

Same numbers as the default (NCHW) layout up to float rounding; off by default, so configs
stored before the field existed rebuild unchanged.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
from models_testlib import action_space, pick_observation_space, random_obs

from rearrange.models import ModelConfig, ModelConfigError, build_policy
from rearrange.skills.learned import build_policy_from_checkpoint

ACTION_DIM = 4


def _config(**overrides) -> ModelConfig:
    """A small depth policy (32x32 images, narrow ResNet) that keeps the test fast."""
    return ModelConfig(
        base_width=16,
        groupnorm_groups=8,
        compressed_size=128,
        visual_embedding_size=64,
        rnn_hidden_size=32,
        rnn_layers=2,
        **overrides,
    )


def _pair():
    """(space, NCHW policy, channels_last policy with the same weights)."""
    space = pick_observation_space(32)
    torch.manual_seed(0)
    plain = build_policy(space, action_space(ACTION_DIM), _config())
    fast = build_policy(space, action_space(ACTION_DIM), _config(channels_last=True))
    fast.load_state_dict(plain.state_dict())
    with torch.no_grad():  # non-trivial layer scales, so the residual branches matter
        for policy in (plain, fast):
            for name, p in policy.named_parameters():
                if name.endswith("gamma"):
                    p.fill_(0.5)
    return space, plain, fast


def _block_conv(policy) -> torch.nn.Conv2d:
    return policy.encoder.visual.backbone.stages[0].branch[0]


def test_default_is_off():
    assert ModelConfig().channels_last is False
    space = pick_observation_space(32)
    policy = build_policy(space, action_space(ACTION_DIM), _config())
    assert _block_conv(policy).weight.is_contiguous()


def test_weights_and_activations_are_channels_last():
    space, _, fast = _pair()
    weight = _block_conv(fast).weight
    assert weight.is_contiguous(memory_format=torch.channels_last) and not weight.is_contiguous()
    seen = []
    _block_conv(fast).register_forward_pre_hook(lambda m, args: seen.append(args[0]))
    obs = random_obs(space, 3, torch.Generator().manual_seed(1))
    with torch.no_grad():
        fast.act(obs, fast.initial_hidden(3), torch.zeros(3, ACTION_DIM), torch.ones(3).bool())
    (x,) = seen
    assert x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous()


def test_same_outputs_as_nchw():
    space, plain, fast = _pair()
    gen = torch.Generator().manual_seed(2)
    batch = 5
    obs = random_obs(space, batch, gen)
    hidden = torch.randn(batch, plain.num_recurrent_layers, plain.hidden_size, generator=gen)
    prev = torch.randn(batch, ACTION_DIM, generator=gen)
    not_done = torch.tensor([True, False, True, True, False])
    noise = torch.randn(batch, ACTION_DIM, generator=gen)
    with torch.no_grad():
        expected = plain.act(obs, hidden, prev, not_done, noise=noise)
        got = fast.act(obs, hidden, prev, not_done, noise=noise)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-5)

    lengths = torch.tensor([3, 2])
    actions = torch.randn(batch, ACTION_DIM, generator=gen)
    expected = plain.evaluate_actions(obs, hidden[:2], prev, actions, lengths)
    got = fast.evaluate_actions(obs, hidden[:2], prev, actions, lengths)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-5)
    # Gradients reach the channels_last weights and match the NCHW ones.
    sum(t.sum() for t in expected).backward()
    sum(t.sum() for t in got).backward()
    torch.testing.assert_close(
        _block_conv(fast).weight.grad, _block_conv(plain).weight.grad, atol=1e-5, rtol=1e-4
    )


def test_rejects_a_non_bool():
    with pytest.raises(ModelConfigError, match="channels_last='yes'"):
        _config(channels_last="yes").validate()


def test_old_checkpoint_config_without_the_field_loads(tmp_path):
    space = pick_observation_space(32)
    policy = build_policy(space, action_space(ACTION_DIM), _config())
    stored = dataclasses.asdict(_config())
    del stored["channels_last"]  # written before the field existed
    ckpt = {"config": {"model": stored}, "policy": policy.state_dict(), "learner": {},
            "num_steps": 0, "num_updates": 0, "observation_space": space,
            "action_space": action_space(ACTION_DIM)}  # fmt: skip
    torch.save(ckpt, tmp_path / "old.pt")  # the dict layout before SkillCheckpoint
    loaded, _ = build_policy_from_checkpoint(tmp_path / "old.pt", "pick", "cpu")
    assert loaded.config.channels_last is False
    assert ModelConfig(**stored).channels_last is False
    for name, p in policy.state_dict().items():
        torch.testing.assert_close(loaded.state_dict()[name], p, rtol=0, atol=0)
