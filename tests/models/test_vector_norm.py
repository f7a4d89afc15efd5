"""`ModelConfig.vector_norm`: the depth policy's vector inputs through a fixed normaliser.

Identity until its statistics are set; then (x - mean) / std clipped to ±5, in the checkpoint's
state dict; absent (the paper's raw concatenation) when off."""

from __future__ import annotations

import torch
from models_testlib import action_space, pick_observation_space, random_obs

from rearrange.models import ModelConfig, build_policy
from rearrange.models.encoders import flatten_vectors

TINY = dict(base_width=8, groupnorm_groups=8, blocks_per_stage=[1, 1, 1, 1],
            compressed_size=64, visual_embedding_size=32, rnn_hidden_size=32)  # fmt: skip


def _encoder_vectors(policy, obs):
    """The vector part of the encoder's output (it follows the image embedding)."""
    with torch.no_grad():
        return policy.encoder(obs)[:, policy.encoder.visual.output_size :]


def test_off_by_default_and_no_buffers():
    policy = build_policy(pick_observation_space(32), action_space(8), ModelConfig(**TINY))
    assert policy.encoder.vector_norm is None
    assert not any("vector_norm" in k for k in policy.state_dict())


def test_identity_until_set_then_normalised_and_clipped():
    space = pick_observation_space(32)
    policy = build_policy(space, action_space(8), ModelConfig(vector_norm=True, **TINY))
    obs = random_obs(space, 3, torch.Generator().manual_seed(0))
    raw = flatten_vectors(obs, policy.layout)  # 14 values in [0, 1)
    assert torch.equal(_encoder_vectors(policy, obs), raw)

    d = raw.shape[1]
    mean, var = torch.full((d,), 0.5), torch.full((d,), 0.04)  # std 0.2
    var[0] = 1e-6  # std 1e-3: (x - 0.5) / 1e-3 is far beyond the clip
    policy.encoder.vector_norm.set_mean_var(mean.numpy(), var.numpy(), count=10)
    out = _encoder_vectors(policy, obs)
    expect = (raw - 0.5) / torch.sqrt(var + 1e-8)
    assert torch.allclose(out[:, 1:], expect[:, 1:], atol=1e-5)
    assert torch.equal(out[:, 0].abs(), torch.full((3,), 5.0))

    state = policy.state_dict()
    assert int(state["encoder.vector_norm.count"]) == 10
    assert torch.allclose(state["encoder.vector_norm.var"], var)
    again = build_policy(space, action_space(8), ModelConfig(vector_norm=True, **TINY))
    again.load_state_dict(state)
    assert torch.allclose(_encoder_vectors(again, obs), out)
