"""The student's loss on the teacher's actions.

The student's action distribution is the paper policy's N(μ(s), diag σ²) with a
state-independent learned log σ. Its maximum-likelihood fit to teacher actions a* is the
Gaussian NLL, Σ_d [(a*_d − μ_d)² / (2σ_d²) + log σ_d] + const. Its gradient on the mean is
(μ_d − a*_d) / σ_d²: every action dimension is weighted by 1/σ_d², so as σ shrinks where the
student already fits (the grip's ±1, say), those dimensions take over the shared trunk's
gradient and the rest learn slower, a known pitfall of heteroscedastic NLL (Seitzer et al.
2022, "On the pitfalls of heteroscedastic uncertainty estimation"); with Adam the overall
scale cancels but this re-weighting does not, and σ_d may shrink to its clamp.

The default (`distill.loss=mse_nll`) decouples them:

    loss = ½ Σ_d (μ_d − a*_d)²  +  NLL(a* | stop_grad(μ), σ)

the mean learns by least squares, every dimension weighted alike (actions all live in
[−1, 1]) unless `distill.action_weights` names a weight w_d per dimension (then the first
term is ½ Σ_d w_d (μ_d − a*_d)²: nav's thresholded stop, say, can count more than the
velocities); σ still gets the maximum-likelihood gradient, so σ_d² tends to the student's mean
squared error in dimension d: a calibrated spread for `eval_skill --stochastic` and for PPO
fine-tuning from the distilled checkpoint. At σ = 1 (the initial log-std 0) both losses give
the mean the same gradient. `distill.loss=nll` is the plain NLL.
"""

from __future__ import annotations

import torch
from torch import nn

from rearrange.models.distributions import DiagGaussian


def sequence_distribution(
    policy: nn.Module,
    obs: dict[str, torch.Tensor],
    hidden: torch.Tensor,
    prev_actions: torch.Tensor,
    seq_lengths: torch.Tensor,
) -> DiagGaussian:
    """The student's action distribution at every step of K sequences: the forward pass of
    `RecurrentGaussianPolicy.evaluate_actions` (encoder on all steps as one batch, the LSTM
    over the sequences from `hidden`), returning the distribution itself."""
    policy._check_sequences(prev_actions.shape[0], hidden, seq_lengths)
    features = policy._features(obs, prev_actions)
    return policy.distribution(policy._run_sequences(features, hidden, seq_lengths))


def distill_loss(
    dist: DiagGaussian,
    targets: torch.Tensor,
    kind: str = "mse_nll",
    weights: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """(loss, stats) of the teacher's actions `targets` [M, A] under the student's `dist`,
    averaged over the M steps. `weights` [A] (mse_nll only): each dimension's weight in the
    squared error (None: all 1). stats: nll (the Gaussian NLL, nats per step), mse (mean over
    steps and dimensions of (μ − a*)², unweighted), log_std (mean)."""
    mean = dist.mean
    if weights is not None and kind != "mse_nll":
        raise ValueError(f"distill action weights apply to loss 'mse_nll', not {kind!r}")
    if kind == "mse_nll":
        nll = -DiagGaussian(mean.detach(), dist.log_std).log_prob(targets).mean()
        sq = (mean - targets).pow(2)
        if weights is not None:
            sq = sq * weights
        loss = 0.5 * sq.sum(-1).mean() + nll
    elif kind == "nll":
        nll = -dist.log_prob(targets).mean()
        loss = nll
    else:
        raise ValueError(f"distill loss {kind!r}: use 'mse_nll' or 'nll'")
    with torch.no_grad():
        stats = {
            "loss": loss.item(),
            "nll": nll.item(),
            "mse": (mean - targets).pow(2).mean().item(),
            "log_std": dist.log_std.mean().item(),
        }
    return loss, stats
