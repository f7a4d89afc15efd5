"""The deployable PQL policy: observation normaliser + deterministic tanh actor, registered as
policy `pql_actor` so a PQL checkpoint rebuilds through `rearrange.models.build_policy` and runs
as a learned skill (docs/CONTRACTS.md §5 `act`).

It is not recurrent: `act` returns the hidden state it was given (one zero row) and a zero
value and log-prob. Its actions are deterministic with or without `deterministic` (the
exploration noise belongs to the Actor process, not to the policy).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import torch
from gymnasium import spaces
from torch import Tensor, nn

from rearrange.models.config import ModelConfig, ModelConfigError
from rearrange.models.encoders import (
    ObservationLayout,
    check_observation_keys,
    flatten_vectors,
    split_observation_space,
)
from rearrange.models.registry import register_policy
from rearrange.pql.networks import ActorSpec, ObsNormalizer

PQL_POLICY = "pql_actor"


def state_layout(observation_space: spaces.Dict) -> ObservationLayout:
    """The vector observations in sorted key order; image observations are refused."""
    layout = split_observation_space(observation_space, ModelConfig())
    if layout.visual_keys:
        raise ModelConfigError(
            f"PQL trains from state observations, got images {list(layout.visual_keys)}; "
            "use --profile cpu or task.obs_preset=state"
        )
    return split_observation_space(observation_space, replace(ModelConfig(), backbone="none"))


def flatten_obs(obs: Mapping[str, np.ndarray], layout: ObservationLayout) -> np.ndarray:
    """numpy twin of `flatten_vectors`: [N, D] float32 in the layout's key order."""
    parts = [np.asarray(obs[k], np.float32).reshape(len(obs[k]), -1) for k in layout.vector_keys]
    return np.concatenate(parts, axis=1)


@register_policy(PQL_POLICY)
class PQLActorPolicy(nn.Module):
    """normalise → MLP → tanh; hidden sizes from `config.state_mlp_hidden`."""

    num_recurrent_layers = 1
    hidden_size = 1

    def __init__(
        self, observation_space: spaces.Dict, action_space: spaces.Box, config: ModelConfig
    ) -> None:
        super().__init__()
        if not isinstance(action_space, spaces.Box) or len(action_space.shape) != 1:
            raise ModelConfigError(f"action_space must be a 1-D Box, got {action_space}")
        self.layout = state_layout(observation_space)
        self.obs_dim = self.layout.vector_size
        self.act_dim = int(action_space.shape[0])
        self.obs_norm = ObsNormalizer(self.obs_dim)
        # the learner processes build their actor copies from the same spec
        self.actor_spec = ActorSpec(
            self.obs_dim,
            self.act_dim,
            tuple(config.state_mlp_hidden),
            tuple(config.action_mean_init),
        )
        self.actor = self.actor_spec.build()

    def forward(self, flat_obs: Tensor) -> Tensor:
        """Actions [B, A] in [-1, 1] for flat (unnormalised) observations [B, D]."""
        return self.actor(self.obs_norm(flat_obs))

    def act(
        self,
        obs: Mapping[str, Tensor],
        hidden: Tensor,
        prev_action: Tensor,
        not_done: Tensor,
        deterministic: bool = True,
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """(value 0, action, log_prob 0, hidden unchanged): the policy contract's shape."""
        check_observation_keys(obs, self.layout)
        action = self(flatten_vectors(obs, self.layout))
        zeros = torch.zeros(action.shape[0], device=action.device)
        return zeros, action, zeros, hidden
