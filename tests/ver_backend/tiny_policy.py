"""A tiny policy implementing contract §5 for the VER system tests.

Its 'recurrent' state counts steps since the episode start (hidden_out = hidden·not_done + 1),
so tests can check that hidden states are carried and reset correctly.
"""

from __future__ import annotations

import torch
from torch import nn


class TinyPolicy(nn.Module):
    num_recurrent_layers = 1
    hidden_size = 2

    def __init__(self, obs_space, action_space):
        super().__init__()
        self.keys = sorted(obs_space.spaces)
        in_dim = sum(int(torch.tensor(obs_space[k].shape).prod()) for k in self.keys)
        self.act_dim = int(action_space.shape[0])
        self.body = nn.Linear(in_dim, 2 * self.act_dim + 1)

    def _heads(self, obs):
        x = torch.cat([obs[k].float().flatten(1) for k in self.keys], 1)
        out = self.body(x)
        mean, log_std = out[:, : self.act_dim], out[:, self.act_dim : 2 * self.act_dim]
        dist = torch.distributions.Normal(mean, log_std.clamp(-3, 1).exp())
        return out[:, -1], dist

    def act(self, obs, hidden, prev_action, not_done, deterministic=False):
        value, dist = self._heads(obs)
        action = dist.mean if deterministic else dist.sample()
        hidden_out = hidden * not_done.float().view(-1, 1, 1) + 1.0
        return value, action, dist.log_prob(action).sum(-1), hidden_out

    def get_value(self, obs, hidden, prev_action, not_done):
        return self._heads(obs)[0]

    def evaluate_actions(self, obs, hidden, prev_actions, actions, seq_lengths):
        value, dist = self._heads(obs)
        return value, dist.log_prob(actions).sum(-1), dist.entropy().sum(-1)


def build_tiny_policy(obs_space, action_space):
    return TinyPolicy(obs_space, action_space)
