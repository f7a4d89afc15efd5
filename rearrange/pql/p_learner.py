"""P-learner (PQL §3.1, Algorithm 2): the deterministic policy ascends min(Q_1, Q_2)(s, π(s)).

States come from the replay buffer; the critics are a local copy of the V-learner's, pulled
every `p_critic_sync_interval` updates. Only the policy's parameters get gradients.
"""

from __future__ import annotations

import numpy as np
import torch

from rearrange.pql.config import PQLConfig
from rearrange.pql.networks import ActorSpec, DoubleQCritic, ObsNormalizer
from rearrange.runtime.optim_state import load_moments


class PLearner:
    def __init__(self, cfg: PQLConfig, spec: ActorSpec, device: str):
        self.cfg, self.device = cfg, torch.device(device)
        obs_dim, act_dim = spec.obs_dim, spec.act_dim
        atoms = cfg.num_atoms if cfg.distributional else 1
        self.actor = spec.build().to(self.device)
        self.critic = DoubleQCritic(
            obs_dim, act_dim, cfg.critic_hidden, atoms, cfg.v_min, cfg.v_max
        ).to(self.device)
        self.critic.requires_grad_(False)
        self.obs_norm = ObsNormalizer(obs_dim).to(self.device)
        self.optim = torch.optim.Adam(self.actor.parameters(), lr=cfg.actor_lr)

    def update(self, obs: np.ndarray) -> dict[str, float]:
        """One gradient step maximising min_i Q_i(s, π(s)) over a batch of states."""
        states = self.obs_norm(torch.as_tensor(obs, device=self.device))
        loss = -self.critic.min_q(states, self.actor(states)).mean()
        if not torch.isfinite(loss):
            raise FloatingPointError(
                f"actor loss is {loss.item()}: lower pql.actor_lr or pql.reward_scale"
            )
        self.optim.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.actor.parameters(), self.cfg.max_grad_norm)
        self.optim.step()
        return {"actor_loss": loss.item()}

    def state_dict(self) -> dict:
        return {"actor": self.actor.state_dict(), "optim": self.optim.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.actor.load_state_dict(state["actor"])
        load_moments(self.optim, state["optim"])  # keeps this command's pql.actor_lr
