"""PPO learner for VER rollouts.

One `update(rollout)` computes GAE returns and the VER importance weights once, then runs
`ppo_epoch` epochs of `num_mini_batch` mini-batches (minibatch.py). Each step minimises

    mean(w·[−min(ρA, clip(ρ)A)]) + c_v·mean(w·0.5(R − V)²) − [α]sg·mean(w·H)

with ρ = exp(log π − log π_old), w = min(IS weight, max_is) (paper §4 'Training'), plus the
learned α's own loss (entropy.py). Adam (eps 1e-5), cosine LR from `lr` to 0 over the run's
progress (environment steps done / total steps, set by the trainer with `set_progress`: a
preempted VER rollout collects fewer steps, so counting updates would reach 0 too early;
without a trainer, updates done / `total_updates`), gradient clipping, an optional DD-PPO gradient all-reduce hook, and a guard
that skips steps with a non-finite loss or gradient and raises `TrainingDivergedError` after
`max_consecutive_skips` of them in a row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import NamedTuple

import torch
from torch import Tensor, nn

from rearrange.ver_backend.config import PPOConfig
from rearrange.ver_backend.entropy import EntropyCoefficient
from rearrange.ver_backend.gae import compute_gae
from rearrange.ver_backend.importance import compute_is_weights, truncate_is_weights
from rearrange.ver_backend.minibatch import MiniBatch, iter_minibatches
from rearrange.ver_backend.rollout import Rollout

GradSync = Callable[[Iterable[nn.Parameter]], None]
"""Averages `.grad` of the given parameters across ranks in place (DD-PPO all-reduce)."""


STEP_STATS = ("value_loss", "action_loss", "entropy", "grad_norm", "approx_kl", "clip_fraction")
"""Statistics averaged over the optimiser steps of an update."""


class TrainingDivergedError(RuntimeError):
    """Too many consecutive PPO steps had a non-finite loss or gradient."""


def cosine_lr(base_lr: float, progress: float) -> float:
    """lr·½(1 + cos(π·p)) for run progress p: `base_lr` at p = 0, half at ½, 0 from p = 1 on."""
    p = min(max(float(progress), 0.0), 1.0)
    return base_lr * 0.5 * (1.0 + math.cos(math.pi * p))


class LossTerms(NamedTuple):
    """Loss of one mini-batch: `total` is differentiable, the rest are detached."""

    total: Tensor
    action_loss: Tensor
    value_loss: Tensor
    entropy: Tensor
    entropy_coef_loss: Tensor
    approx_kl: Tensor
    clip_fraction: Tensor


class Learner:
    """PPO with VER mini-batches, truncated IS and a learned entropy coefficient."""

    def __init__(
        self,
        policy: nn.Module,
        ppo_cfg: PPOConfig,
        total_updates: int,
        grad_sync: GradSync | None = None,
        generator: torch.Generator | None = None,
    ) -> None:
        if total_updates < 1:
            raise ValueError(
                f"total_updates must be >= 1, got {total_updates}: pass the run's number of PPO updates"
            )
        params = [p for p in policy.parameters() if p.requires_grad]
        if not params:
            raise ValueError(
                "the policy has no trainable parameters: the Learner needs an nn.Module with parameters"
            )
        self.policy = policy
        self.cfg = ppo_cfg
        self.total_updates = total_updates
        self.grad_sync = grad_sync
        self.generator = generator
        self.params = params
        self.device = params[0].device
        # Fused Adam: one kernel for all parameters (on CPU 2-3x faster than the per-tensor
        # loop; the same update rule).
        fused = self.device.type in ("cpu", "cuda")
        self.optimizer = torch.optim.Adam(params, lr=ppo_cfg.lr, eps=ppo_cfg.eps, fused=fused)
        self.entropy_coef = EntropyCoefficient(ppo_cfg).to(self.device)
        self.num_updates = 0
        self.progress: float | None = None  # steps done / total steps, from set_progress
        self.consecutive_skips = 0
        self.total_skipped = 0

    # ------------------------------------------------------------------ schedule
    def set_progress(self, steps_done: int, total_steps: int) -> None:
        """Schedule position for the next update: environment steps done so far / total."""
        if total_steps < 1:
            raise ValueError(f"total_steps must be >= 1, got {total_steps}")
        self.progress = min(max(steps_done, 0), total_steps) / total_steps

    def lr_at(self, progress: float) -> float:
        if self.cfg.lr_schedule == "constant":
            return self.cfg.lr
        return cosine_lr(self.cfg.lr, progress)

    @property
    def current_progress(self) -> float:
        if self.progress is not None:
            return self.progress
        return min(self.num_updates, self.total_updates) / self.total_updates

    @property
    def current_lr(self) -> float:
        return self.lr_at(self.current_progress)

    def _apply_lr(self) -> None:
        lr = self.current_lr
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.entropy_coef.set_lr(lr)

    # ------------------------------------------------------------------ losses
    def prepare(self, rollout: Rollout) -> tuple[Tensor, Tensor, Tensor]:
        """(advantages [S], returns [S], untruncated IS weights [S]) for a rollout."""
        adv, returns = compute_gae(
            rollout.rewards,
            rollout.values,
            rollout.dones,
            rollout.env_ids,
            rollout.bootstrap_values,
            self.cfg.gamma,
            self.cfg.gae_lambda,
            truncated=rollout.truncated,
            final_values=rollout.final_values,
        )
        if self.cfg.use_normalized_advantage:
            adv = (adv - adv.mean()) / (adv.std(unbiased=False) + 1e-5)
        if self.cfg.use_ver_is:
            weights = compute_is_weights(rollout.env_ids, rollout.num_envs)
        else:
            weights = torch.ones_like(returns)
        return adv, returns, weights.to(returns.dtype)

    def compute_losses(self, mb: MiniBatch) -> LossTerms:
        """Forward pass of the policy on `mb` and the weighted PPO loss."""
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.cfg.autocast_bf16):
            values, log_probs, entropy = self.policy.evaluate_actions(
                mb.obs, mb.hidden, mb.prev_actions, mb.actions, mb.seq_lengths
            )
        values, log_probs, entropy = values.float(), log_probs.float(), entropy.float()
        w = truncate_is_weights(mb.is_weights, self.cfg.max_is_weight)
        log_ratio = log_probs - mb.old_log_probs
        ratio = log_ratio.exp()
        clip = self.cfg.clip_param
        surrogate = torch.min(
            ratio * mb.advantages, ratio.clamp(1 - clip, 1 + clip) * mb.advantages
        )
        action_loss = -(w * surrogate).mean()
        if self.cfg.use_clipped_value_loss:
            values = mb.old_values + (values - mb.old_values).clamp(-clip, clip)
        value_loss = (w * 0.5 * (mb.returns - values).pow(2)).mean()
        mean_entropy = (w * entropy).mean()
        total = (
            action_loss
            + self.cfg.value_loss_coef * value_loss
            + self.entropy_coef.policy_loss(mean_entropy)
        )
        with torch.no_grad():
            approx_kl = ((ratio - 1) - log_ratio).mean()
            clip_fraction = ((ratio - 1).abs() > clip).float().mean()
        return LossTerms(
            total=total,
            action_loss=action_loss.detach(),
            value_loss=value_loss.detach(),
            entropy=mean_entropy.detach(),
            entropy_coef_loss=self.entropy_coef.coef_loss(mean_entropy),
            approx_kl=approx_kl,
            clip_fraction=clip_fraction,
        )

    # ------------------------------------------------------------------ steps
    def _synced_params(self) -> list[nn.Parameter]:
        params = list(self.params)
        if self.entropy_coef.learned:
            params.append(self.entropy_coef.log_alpha)
        return params

    def _backward(self, losses: LossTerms) -> None:
        self.optimizer.zero_grad(set_to_none=True)
        self.entropy_coef.zero_grad()
        (losses.total + losses.entropy_coef_loss).backward()
        if self.grad_sync is None:
            return
        loss_finite = bool(torch.isfinite(losses.total))
        for p in self._synced_params():
            if p.grad is None:  # every rank must hand the all-reduce the same tensors
                p.grad = torch.zeros_like(p)
            if not loss_finite:  # poison the grads so that every rank skips this step
                p.grad.fill_(float("nan"))
        self.grad_sync(self._synced_params())

    def _step(self, mb: MiniBatch) -> Tensor | None:
        """One optimiser step; its STEP_STATS as one detached tensor (read back once per
        update, not per step: each read is a device sync on a GPU), or None when skipped for
        a non-finite loss or gradient."""
        losses = self.compute_losses(mb)
        self._backward(losses)
        grad_norm = nn.utils.clip_grad_norm_(self.params, self.cfg.max_grad_norm)
        checks = (
            torch.isfinite(losses.total),
            torch.isfinite(grad_norm),
            self.entropy_coef.grads_finite(),
        )
        if not bool(torch.stack(checks).all()):  # the update's one sync per step
            self._record_skip(losses, grad_norm)
            return None
        self.optimizer.step()
        self.entropy_coef.step()
        self.consecutive_skips = 0
        stats = (losses.value_loss, losses.action_loss, losses.entropy, grad_norm,
                 losses.approx_kl, losses.clip_fraction)  # fmt: skip
        return torch.stack([t.detach().float().reshape(()) for t in stats])

    def _record_skip(self, losses: LossTerms, grad_norm: Tensor) -> None:
        self.optimizer.zero_grad(set_to_none=True)
        self.entropy_coef.zero_grad()
        self.consecutive_skips += 1
        self.total_skipped += 1
        if self.consecutive_skips >= self.cfg.max_consecutive_skips:
            raise TrainingDivergedError(
                f"{self.consecutive_skips} consecutive PPO steps had a non-finite loss or gradient "
                f"(last loss={float(losses.total.detach())}, grad_norm={float(grad_norm)}); weights "
                "were left at their last finite values: check rewards/observations for NaN/inf, "
                "lower ppo.lr, or resume from the last checkpoint"
            )

    # ------------------------------------------------------------------ update
    def update(self, rollout: Rollout) -> dict[str, float]:
        """`ppo_epoch` × `num_mini_batch` PPO steps on `rollout`; returns mean statistics."""
        rollout.validate()
        if rollout.device != self.device:
            rollout = rollout.to(self.device)
        self.policy.train()
        self._apply_lr()
        with torch.no_grad():
            adv, returns, weights = self.prepare(rollout)
        sums: Tensor | None = None
        done_steps = skipped = 0
        for _ in range(self.cfg.ppo_epoch):
            for mb in iter_minibatches(
                rollout, adv, returns, weights, self.cfg.num_mini_batch, self.generator
            ):
                stats = self._step(mb)
                if stats is None:
                    skipped += 1
                    continue
                done_steps += 1
                sums = stats if sums is None else sums + stats
        # every key is always present (NaN when every step of this update was skipped)
        result = {key: float("nan") for key in STEP_STATS}
        if sums is not None:
            result.update(zip(STEP_STATS, (sums / done_steps).tolist()))
        result.update(
            entropy_coef=self.entropy_coef.value(),
            lr=self.current_lr,
            is_weight_mean=float(truncate_is_weights(weights, self.cfg.max_is_weight).mean()),
            fraction_stale=float(rollout.is_stale.float().mean()),
            num_skipped=float(skipped),
        )
        self.num_updates += 1
        return result

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict:
        """Optimiser, LR schedule position, entropy coefficient and counters."""
        return {
            "optimizer": self.optimizer.state_dict(),
            "entropy_coef": self.entropy_coef.full_state_dict(),
            "num_updates": self.num_updates,
            "total_updates": self.total_updates,
            "progress": self.progress,
            "total_skipped": self.total_skipped,
        }

    def load_state_dict(self, state: dict) -> None:
        missing = {"optimizer", "entropy_coef", "num_updates"} - set(state)
        if missing:
            raise ValueError(
                f"learner state is missing {sorted(missing)}: pass the dict from Learner.state_dict()"
            )
        self.optimizer.load_state_dict(state["optimizer"])
        self.entropy_coef.load_full_state_dict(state["entropy_coef"])
        self.num_updates = int(state["num_updates"])
        self.total_updates = int(state.get("total_updates", self.total_updates))
        self.progress = state.get("progress")
        self.total_skipped = int(state.get("total_skipped", 0))
        self._apply_lr()
