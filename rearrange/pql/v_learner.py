"""V-learner (PQL §3.1): double-Q critics on n-step targets from the replay buffer.

    y = scale·G + γ^m · min(Q'_1, Q'_2)(s', π_v(s'))     loss = Σ_i (Q_i(s, a) - y)²

Q' are Polyak-averaged target critics (rate τ after every update). π_v is the V-learner's
local copy of the P-learner's policy, pulled only every `v_policy_sync_interval` updates:
the lagged policy is the target policy (no separate target actor, paper §3.2). PQL-D
replaces the MSE by the cross-entropy to the projected categorical target, whose next-state
distribution comes from the target critic with the smaller expected value.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import Tensor

from rearrange.pql.config import PQLConfig
from rearrange.pql.networks import ActorSpec, DoubleQCritic, ObsNormalizer
from rearrange.pql.replay import NStepSample
from rearrange.pql.targets import categorical_projection, clipped_double_q_target, nstep_returns
from rearrange.runtime.optim_state import load_moments


class VLearner:
    def __init__(self, cfg: PQLConfig, spec: ActorSpec, device: str):
        self.cfg, self.device = cfg, torch.device(device)
        obs_dim, act_dim = spec.obs_dim, spec.act_dim
        atoms = cfg.num_atoms if cfg.distributional else 1
        self.critic = DoubleQCritic(
            obs_dim, act_dim, cfg.critic_hidden, atoms, cfg.v_min, cfg.v_max
        ).to(self.device)
        self.target = copy.deepcopy(self.critic).requires_grad_(False)
        self.policy = spec.build().to(self.device)
        self.policy.requires_grad_(False)
        self.obs_norm = ObsNormalizer(obs_dim).to(self.device)
        self.optim = torch.optim.Adam(self.critic.parameters(), lr=cfg.critic_lr)

    def _tensor(self, array) -> Tensor:
        return torch.as_tensor(array, device=self.device)

    def update(self, sample: NStepSample) -> dict[str, float]:
        """One gradient step on a sampled batch; returns loss and mean Q/target."""
        cfg = self.cfg
        ret = nstep_returns(
            self._tensor(sample.rewards),
            self._tensor(sample.terminated),
            self._tensor(sample.truncated),
            self._tensor(sample.available),
            cfg.gamma,
        )
        returns = ret.returns * cfg.reward_scale
        rows = torch.arange(ret.last.shape[0], device=self.device)
        next_obs = self.obs_norm(self._tensor(sample.next_obs)[rows, ret.last])
        obs = self.obs_norm(self._tensor(sample.obs))
        actions = self._tensor(sample.actions)
        with torch.no_grad():
            next_out = self.target(next_obs, self.policy(next_obs))
        out1, out2 = self.critic(obs, actions)
        if self.critic.distributional:
            target = self._categorical_target(next_out, returns, ret.bootstrap_discount)
            loss = -(target * F.log_softmax(out1, -1)).sum(-1).mean()
            loss = loss - (target * F.log_softmax(out2, -1)).sum(-1).mean()
            target_mean = (target * self.critic.support).sum(-1).mean()
        else:
            target = clipped_double_q_target(returns, ret.bootstrap_discount, *next_out)
            loss = F.mse_loss(out1, target) + F.mse_loss(out2, target)
            target_mean = target.mean()
        if not torch.isfinite(loss):
            raise FloatingPointError(
                f"critic loss is {loss.item()}: lower pql.critic_lr or pql.reward_scale"
            )
        self.optim.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.critic.parameters(), cfg.max_grad_norm)
        self.optim.step()
        self._soft_update()
        q_mean = self.critic.values(out1.detach()).mean()
        return {
            "critic_loss": loss.item(),
            "q_mean": q_mean.item(),
            "target_mean": target_mean.item(),
        }

    def _categorical_target(self, next_out, returns: Tensor, discount: Tensor) -> Tensor:
        out1, out2 = next_out
        pick_first = self.target.values(out1) <= self.target.values(out2)
        probs = torch.where(pick_first[:, None], out1.softmax(-1), out2.softmax(-1))
        return categorical_projection(probs, returns, discount, self.target.support)

    @torch.no_grad()
    def _soft_update(self) -> None:
        for tp, p in zip(self.target.parameters(), self.critic.parameters()):
            tp.lerp_(p, self.cfg.tau)

    def state_dict(self) -> dict:
        return {
            "critic": self.critic.state_dict(),
            "target": self.target.state_dict(),
            "optim": self.optim.state_dict(),
        }

    def load_state_dict(self, state: dict) -> None:
        self.critic.load_state_dict(state["critic"])
        self.target.load_state_dict(state["target"])
        load_moments(self.optim, state["optim"])  # keeps this command's pql.critic_lr
