"""The student's loss on the teacher's actions, by hand for one step of two dimensions, and
the sequence forward it is computed on."""

import math

import pytest
import torch
from gymnasium import spaces

from rearrange.distill.loss import distill_loss, sequence_distribution
from rearrange.models import ModelConfig, build_policy
from rearrange.models.distributions import DiagGaussian

HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)  # 0.918939


def _tiny_case():
    # μ = (0.5, −0.5), σ = (1, 2), teacher a* = (1, 0)
    mean = torch.tensor([[0.5, -0.5]], requires_grad=True)
    log_std = torch.tensor([0.0, math.log(2.0)], requires_grad=True)
    return mean, log_std, torch.tensor([[1.0, 0.0]])


def test_nll_by_hand():
    mean, log_std, target = _tiny_case()
    # dim 1: z = 0.5/1 → ½z² + log 1 + ½log 2π = 0.125 + 0.918939
    # dim 2: z = 0.5/2 → ½z² + log 2 + ½log 2π = 0.03125 + 0.693147 + 0.918939
    nll = 0.125 + 0.03125 + math.log(2.0) + 2 * HALF_LOG_2PI  # 2.687274
    loss, stats = distill_loss(DiagGaussian(mean, log_std), target, "nll")
    assert loss.item() == pytest.approx(nll, abs=1e-6) and stats["nll"] == pytest.approx(nll)
    loss.backward()
    # ∂/∂μ = (μ − a*)/σ²: (−0.5/1, −0.5/4); ∂/∂log σ = 1 − z²: (0.75, 0.9375)
    assert mean.grad.flatten().tolist() == pytest.approx([-0.5, -0.125])
    assert log_std.grad.tolist() == pytest.approx([0.75, 0.9375])


def test_mse_plus_nll_by_hand():
    mean, log_std, target = _tiny_case()
    half_sq = 0.5 * (0.25 + 0.25)  # ½ Σ (μ − a*)²
    nll = 0.125 + 0.03125 + math.log(2.0) + 2 * HALF_LOG_2PI
    loss, stats = distill_loss(DiagGaussian(mean, log_std), target, "mse_nll")
    assert loss.item() == pytest.approx(half_sq + nll, abs=1e-6)  # 2.937274
    assert stats["mse"] == pytest.approx(0.25) and stats["nll"] == pytest.approx(nll)
    assert stats["log_std"] == pytest.approx(math.log(2.0) / 2)
    loss.backward()
    # the mean learns by least squares (μ − a*), whatever σ; log σ by the NLL alone
    assert mean.grad.flatten().tolist() == pytest.approx([-0.5, -0.5])
    assert log_std.grad.tolist() == pytest.approx([0.75, 0.9375])


def test_sequence_forward_is_evaluate_actions():
    obs_space = spaces.Dict({"x": spaces.Box(-1, 1, (3,))})
    policy = build_policy(
        obs_space, spaces.Box(-1, 1, (2,)),
        ModelConfig(backbone="none", rnn_hidden_size=8, state_mlp_hidden=[8]),
    )  # fmt: skip
    torch.manual_seed(0)
    obs = {"x": torch.randn(7, 3)}
    prev, actions = torch.randn(7, 2), torch.randn(7, 2)
    hidden, lengths = torch.randn(2, 4, 8), torch.tensor([4, 3])
    dist = sequence_distribution(policy, obs, hidden, prev, lengths)
    _, log_probs, _ = policy.evaluate_actions(obs, hidden, prev, actions, lengths)
    assert torch.allclose(dist.log_prob(actions), log_probs)


def test_action_weights_scale_each_dimension_of_the_squared_error():
    mean, log_std, target = _tiny_case()
    nll = 0.125 + 0.03125 + math.log(2.0) + 2 * HALF_LOG_2PI
    weights = torch.tensor([1.0, 4.0])
    loss, stats = distill_loss(DiagGaussian(mean, log_std), target, "mse_nll", weights)
    # ½ (1 × 0.25 + 4 × 0.25) = 0.625; the NLL and the reported mse are unweighted
    assert loss.item() == pytest.approx(0.625 + nll, abs=1e-6)
    assert stats["mse"] == pytest.approx(0.25)
    loss.backward()
    assert mean.grad.flatten().tolist() == pytest.approx([-0.5, -2.0])  # w_d (μ_d − a*_d)
    assert log_std.grad.tolist() == pytest.approx([0.75, 0.9375])


def test_action_weights_need_the_mse_loss():
    mean, log_std, target = _tiny_case()
    with pytest.raises(ValueError, match="apply to loss 'mse_nll', not 'nll'"):
        distill_loss(DiagGaussian(mean, log_std), target, "nll", torch.ones(2))
