"""Entropy coefficient α: learned (VER paper §4, a SAC-style minimum-entropy constraint) or fixed.

Learned: the paper minimises α([H]sg − λ) − [α]sg·H with λ the target entropy. The second term
goes into the policy's loss (`policy_loss`); the first trains α (`step`): its gradient in log α
is α(H − λ), so α shrinks while the entropy is above target and grows when it falls below.
α = exp(log α), and log α is projected into [log min, log max] after each step, so α stays in
bounds and, unlike a clamp inside the forward pass, never loses its gradient at a bound.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from rearrange.ver_backend.config import PPOConfig


class EntropyCoefficient(nn.Module):
    """α with its own Adam optimiser (learned mode) or a constant (fixed mode)."""

    def __init__(self, cfg: PPOConfig) -> None:
        super().__init__()
        self.learned = cfg.entropy_mode == "learned"
        self.target = cfg.target_entropy
        self.log_min = math.log(cfg.min_entropy_coef)
        self.log_max = math.log(cfg.max_entropy_coef)
        self.fixed_value = cfg.entropy_coef
        self.log_alpha = nn.Parameter(
            torch.tensor(math.log(max(cfg.entropy_coef, 1e-12))), requires_grad=self.learned
        )
        self.optimizer: torch.optim.Adam | None = None
        if self.learned:
            self.optimizer = torch.optim.Adam([self.log_alpha], lr=cfg.lr, eps=cfg.eps)

    def alpha(self) -> Tensor:
        """Current α (a scalar tensor, differentiable in log α when learned)."""
        if not self.learned:
            return torch.tensor(self.fixed_value, device=self.log_alpha.device)
        return self.log_alpha.exp()

    def value(self) -> float:
        return float(self.alpha().detach())

    def policy_loss(self, entropy: Tensor) -> Tensor:
        """−[α]sg·H: the entropy bonus term of the policy's loss."""
        return -self.alpha().detach() * entropy

    def coef_loss(self, entropy: Tensor) -> Tensor:
        """α([H]sg − target): the loss that trains log α (zero and constant when fixed)."""
        if not self.learned:
            return torch.zeros((), device=self.log_alpha.device)
        return self.alpha() * (entropy.detach() - self.target)

    def set_lr(self, lr: float) -> None:
        if self.optimizer is not None:
            for group in self.optimizer.param_groups:
                group["lr"] = lr

    def zero_grad(self) -> None:
        self.log_alpha.grad = None

    def step(self) -> None:
        """Apply the gradient already accumulated by `coef_loss(...).backward()`, then project."""
        if self.optimizer is None:
            return
        self.optimizer.step()
        with torch.no_grad():
            self.log_alpha.clamp_(self.log_min, self.log_max)

    def grads_finite(self) -> Tensor:
        """0-d bool tensor: log α's gradient is finite (True without one). A tensor, so the
        learner folds it into its one finiteness check per step (one device sync)."""
        grad = self.log_alpha.grad
        if grad is None:
            return torch.ones((), dtype=torch.bool, device=self.log_alpha.device)
        return torch.isfinite(grad).all()

    def full_state_dict(self) -> dict:
        """Parameter and optimiser state for checkpoints."""
        return {
            "log_alpha": self.log_alpha.detach().clone(),
            "optimizer": None if self.optimizer is None else self.optimizer.state_dict(),
        }

    def load_full_state_dict(self, state: dict) -> None:
        with torch.no_grad():
            self.log_alpha.copy_(state["log_alpha"])
        if self.optimizer is not None and state.get("optimizer") is not None:
            self.optimizer.load_state_dict(state["optimizer"])
