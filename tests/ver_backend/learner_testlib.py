"""Test helpers for the VER learning core: a tiny LSTM policy (contract §5) and rollouts."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from rearrange.ver_backend.rollout import Rollout

OBS_DIM = 3
ACT_DIM = 2
HIDDEN = 8


class TinyPolicy(nn.Module):
    """Minimal recurrent Gaussian policy implementing contract §5 (1-layer LSTM, R = 2)."""

    num_recurrent_layers = 2
    hidden_size = HIDDEN

    def __init__(self, obs_dim: int = OBS_DIM, act_dim: int = ACT_DIM) -> None:
        super().__init__()
        self.embed = nn.Linear(obs_dim + act_dim, HIDDEN)
        self.lstm = nn.LSTM(HIDDEN, HIDDEN)
        self.mu = nn.Linear(HIDDEN, act_dim)
        self.log_std = nn.Parameter(torch.zeros(act_dim))
        self.value = nn.Linear(HIDDEN, 1)

    def _core(self, state: Tensor, prev: Tensor, hidden: Tensor) -> tuple[Tensor, Tensor]:
        """Run the LSTM over [T, B] inputs from hidden [B, 2, H]; return features, hidden."""
        x = torch.tanh(self.embed(torch.cat([state, prev], -1)))
        h0 = hidden[:, 0].unsqueeze(0).contiguous()
        c0 = hidden[:, 1].unsqueeze(0).contiguous()
        out, (h, c) = self.lstm(x, (h0, c0))
        return out, torch.stack([h[0], c[0]], 1)

    def _dist(self, feats: Tensor) -> torch.distributions.Normal:
        return torch.distributions.Normal(self.mu(feats), self.log_std.exp())

    def act(self, obs, hidden, prev_action, not_done, deterministic=False):
        mask = not_done.to(hidden.dtype)
        hidden = hidden * mask[:, None, None]
        prev_action = prev_action * mask[:, None]
        feats, hidden_out = self._core(obs["state"][None], prev_action[None], hidden)
        feats = feats[0]
        dist = self._dist(feats)
        action = dist.mean if deterministic else dist.sample()
        return (
            self.value(feats).squeeze(-1),
            action,
            dist.log_prob(action).sum(-1),
            hidden_out,
        )

    def evaluate_actions(self, obs, hidden, prev_actions, actions, seq_lengths):
        values, log_probs, entropies = [], [], []
        start = 0
        for k, length in enumerate(seq_lengths.tolist()):
            sl = slice(start, start + length)
            feats, _ = self._core(obs["state"][sl, None], prev_actions[sl, None], hidden[k : k + 1])
            feats = feats[:, 0]
            dist = self._dist(feats)
            values.append(self.value(feats).squeeze(-1))
            log_probs.append(dist.log_prob(actions[sl]).sum(-1))
            entropies.append(dist.entropy().sum(-1))
            start += length
        return torch.cat(values), torch.cat(log_probs), torch.cat(entropies)


def gaussian_entropy(log_std: Tensor) -> float:
    return float((0.5 + 0.5 * math.log(2 * math.pi) + log_std).sum())


def collect_rollout(
    policy: TinyPolicy,
    env_order: list[int],
    num_envs: int,
    done_at: set[tuple[int, int]] = frozenset(),
    seed: int = 0,
) -> Rollout:
    """Step `policy` env by env in `env_order`, as VER storage would, into a Rollout.

    `done_at` holds (env, k): the k-th step of that env in the rollout ends its episode.
    Rewards are a fixed function of the observation and action, so learning can improve them.
    """
    gen = torch.Generator().manual_seed(seed)
    hidden = torch.zeros(num_envs, 2, HIDDEN)
    prev = torch.zeros(num_envs, ACT_DIM)
    not_done = torch.zeros(num_envs, dtype=torch.bool)  # first step of each env starts an episode
    count = [0] * num_envs
    rows: dict[str, list[Tensor]] = {
        k: [] for k in ("obs", "act", "prev", "lp", "v", "r", "d", "h", "st")
    }
    with torch.no_grad():
        for e in env_order:
            obs = torch.randn(1, OBS_DIM, generator=gen)
            nd = not_done[e : e + 1]
            h_in = hidden[e : e + 1] * nd.float()[:, None, None]
            p_in = prev[e : e + 1] * nd.float()[:, None]
            value, action, log_prob, h_out = policy.act({"state": obs}, h_in, p_in, nd)
            done = (e, count[e]) in done_at
            reward = -((action - obs[:, :ACT_DIM]) ** 2).sum(-1)
            for key, val in zip(
                rows, (obs, action, p_in, log_prob, value, reward, torch.tensor([done]), h_in, ~nd)
            ):
                rows[key].append(val)
            hidden[e], prev[e], not_done[e] = h_out[0], action[0], not done
            count[e] += 1
        boot = policy.act(
            {"state": torch.randn(num_envs, OBS_DIM, generator=gen)}, hidden, prev, not_done
        )[0]
    boot = boot * not_done.float()
    s = len(env_order)
    return Rollout(
        obs={"state": torch.cat(rows["obs"])},
        actions=torch.cat(rows["act"]),
        prev_actions=torch.cat(rows["prev"]),
        log_probs=torch.cat(rows["lp"]),
        values=torch.cat(rows["v"]),
        rewards=torch.cat(rows["r"]),
        dones=torch.cat(rows["d"]),
        hidden_in=torch.cat(rows["h"]),
        episode_starts=torch.cat(rows["st"]),
        env_ids=torch.tensor(env_order, dtype=torch.long),
        policy_versions=torch.zeros(s, dtype=torch.long),
        bootstrap_values=boot,
        is_stale=torch.zeros(s, dtype=torch.bool),
    )


def plain_rollout(
    rewards: list[float],
    values: list[float],
    dones: list[bool],
    env_ids: list[int],
    bootstrap: list[float],
) -> Rollout:
    """A Rollout with the given scalar fields and dummy obs/actions/hidden (for GAE/IS/minibatch)."""
    s = len(rewards)
    ids = torch.tensor(env_ids, dtype=torch.long)
    d = torch.tensor(dones)
    starts = torch.zeros(s, dtype=torch.bool)
    seen: set[int] = set()
    prev_done: dict[int, bool] = {}
    for i, e in enumerate(env_ids):
        starts[i] = e not in seen or prev_done[e]
        seen.add(e)
        prev_done[e] = dones[i]
    return Rollout(
        obs={"state": torch.arange(s, dtype=torch.float32)[:, None].repeat(1, OBS_DIM)},
        actions=torch.arange(s, dtype=torch.float32)[:, None].repeat(1, ACT_DIM),
        prev_actions=torch.ones(s, ACT_DIM),
        log_probs=torch.zeros(s),
        values=torch.tensor(values, dtype=torch.float32),
        rewards=torch.tensor(rewards, dtype=torch.float32),
        dones=d,
        hidden_in=torch.arange(s, dtype=torch.float32)[:, None, None].repeat(1, 2, HIDDEN),
        episode_starts=starts,
        env_ids=ids,
        policy_versions=torch.zeros(s, dtype=torch.long),
        bootstrap_values=torch.tensor(bootstrap, dtype=torch.float32),
        is_stale=torch.zeros(s, dtype=torch.bool),
    )
