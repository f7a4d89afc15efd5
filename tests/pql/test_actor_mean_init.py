"""The PQL actor's exploration prior (ModelConfig.action_mean_init): π(s) starts at ~m."""

import math

import pytest
import torch

from rearrange.pql.config import PQLConfig
from rearrange.pql.networks import MEAN_INIT_LIMIT, ActorSpec, DeterministicActor
from rearrange.pql.p_learner import PLearner


def test_the_output_bias_is_atanh_of_the_clipped_prior():
    torch.manual_seed(0)
    actor = DeterministicActor(6, 3, [16, 8], mean_init=[0.0, 0.5, -1.0])
    bias = actor.net[-1].bias.detach()
    assert bias[1].item() == pytest.approx(math.atanh(0.5), abs=1e-6)
    # -1 is clipped to -0.95 (atanh(-1) is -inf): atanh(0.95) = 1.8318
    assert bias[2].item() == pytest.approx(-1.831781, abs=1e-5)
    assert MEAN_INIT_LIMIT == 0.95


def test_actions_start_at_the_prior_whatever_the_state():
    torch.manual_seed(0)
    actor = DeterministicActor(6, 3, [16, 8], mean_init=[0.0, 0.0, -1.0])
    out = actor(torch.randn(256, 6) * 3.0)
    assert out[:, 2].max().item() < -0.9  # stop stays far below its 0 threshold
    assert out[:, 2].mean().item() == pytest.approx(-0.95, abs=0.02)
    # the dims without a prior keep the default init: they vary with the state
    assert out[:, 0].std().item() > 0.01


def test_without_a_prior_the_init_is_unchanged():
    torch.manual_seed(3)
    plain = DeterministicActor(6, 3, [16, 8])
    torch.manual_seed(3)
    empty = DeterministicActor(6, 3, [16, 8], mean_init=[])
    for a, b in zip(plain.parameters(), empty.parameters()):
        assert torch.equal(a, b)


def test_a_prior_of_the_wrong_length_is_one_clear_error():
    with pytest.raises(ValueError, match="2 values for 3 action dims"):
        DeterministicActor(6, 3, [16], mean_init=[0.0, -1.0])


def test_the_p_learner_actor_gets_the_prior():
    learner = PLearner(PQLConfig(), ActorSpec(6, 3, (16, 8), (0.0, 0.0, -1.0)), "cpu")
    out = learner.actor(torch.randn(64, 6))
    assert out[:, 2].max().item() < -0.9
