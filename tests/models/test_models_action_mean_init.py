"""ModelConfig.action_mean_init: the initial action mean is the configured prior."""

import numpy as np
import pytest
import torch
from gymnasium import spaces

from rearrange.models import ModelConfig, build_policy
from rearrange.models.config import ModelConfigError


def _policy(**kw):
    obs = spaces.Dict({"joint": spaces.Box(-np.inf, np.inf, (7,), np.float32)})
    act = spaces.Box(-1.0, 1.0, (8,), np.float32)
    cfg = ModelConfig(backbone="none", rnn_hidden_size=16, state_mlp_hidden=[16], **kw)
    return build_policy(obs, act, cfg)


@pytest.mark.parametrize("squash", [False, True])
def test_initial_mean_is_the_prior(squash):
    torch.manual_seed(0)
    policy = _policy(action_mean_init=[0.0] * 7 + [1.0 if not squash else 0.9], squash_mean=squash)
    obs = {"joint": torch.randn(64, 7)}
    h = policy.initial_hidden(64)
    with torch.no_grad():
        _, mean, _, _ = policy.act(
            obs, h, torch.zeros(64, 8), torch.zeros(64, dtype=torch.bool), deterministic=True
        )
    target = 1.0 if not squash else 0.9
    assert mean[:, 7].mean().item() == pytest.approx(target, abs=0.03)  # gain-0.01 weights
    assert mean[:, :7].abs().max().item() < 0.05


def test_prior_outside_the_action_range_or_too_long_is_refused():
    with pytest.raises(ModelConfigError, match="action_mean_init"):
        _policy(action_mean_init=[2.0])
    with pytest.raises(ValueError, match="9 values for 8 action dims"):
        _policy(action_mean_init=[0.0] * 9)
