"""The skill policy: encoder + previous-action embedding -> LSTM -> Gaussian actions, value.

Implements docs/CONTRACTS.md §5. The recurrent state is one tensor [B, R, H] with
R = 2 * rnn_layers: rows [0, L) are the LSTM h of each layer, rows [L, 2L) its c. Keeping the
batch first lets rollout storage index and copy it like any other per-step tensor.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch
from gymnasium import spaces
from torch import nn
from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence

from rearrange.models.config import ModelConfig, ModelConfigError
from rearrange.models.distributions import DiagGaussian, GaussianHead
from rearrange.models.encoders import build_encoder, check_observation_keys, split_observation_space
from rearrange.models.registry import register_policy

Obs = Mapping[str, torch.Tensor]
PAD_WORK_LIMIT = 3
"""Padded-block LSTM in evaluate_actions while T_max·K <= this × the real steps."""
LENGTH_BUCKETS = 2
"""On CPU, evaluate_actions runs the sequences as up to this many padded blocks of similar
lengths (1: one block, or a packed sequence beyond PAD_WORK_LIMIT, as on CUDA)."""
BUCKET_MIN_SAVING = 0.2
"""... splitting only where it saves at least this share of the one block's padded work."""


def length_buckets(lengths: torch.Tensor, buckets: int | None = None) -> list[torch.Tensor]:
    """The sequence indices of each padded block: one block, or (buckets >= 2) the longest
    sequences apart from the rest at the split that minimises sum(T_max · K), where it saves
    at least BUCKET_MIN_SAVING of the single block's work. `lengths` [K] on the CPU."""
    buckets = LENGTH_BUCKETS if buckets is None else buckets
    order = torch.argsort(lengths, descending=True, stable=True)
    k = order.numel()
    if buckets < 2 or k < 2:
        return [order]
    s = lengths[order]
    cut = torch.arange(1, k)
    work = s[0] * cut + s[1:] * (k - cut)  # the first `cut` longest in one block, the rest
    best = int(torch.argmin(work))
    if work[best] > (1 - BUCKET_MIN_SAVING) * s[0] * k:
        return [order]
    return [order[: best + 1], order[best + 1 :]]


def _check_action_space(action_space: spaces.Space) -> int:
    if not isinstance(action_space, spaces.Box) or len(action_space.shape) != 1:
        raise ModelConfigError(
            f"action_space must be a 1-D gymnasium.spaces.Box, got {action_space}; "
            "the policy outputs one continuous vector per step"
        )
    return int(action_space.shape[0])


def _init_weights(module: nn.Module) -> None:
    """Kaiming for convs (ReLU nets), orthogonal for linear/LSTM weights, zero biases."""
    for m in module.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, nn.Linear):
            nn.init.orthogonal_(m.weight, gain=math.sqrt(2.0))
        elif isinstance(m, nn.LSTM):
            for name, p in m.named_parameters():
                if "weight" in name:
                    nn.init.orthogonal_(p)
        else:
            continue
        for name, p in m.named_parameters(recurse=False):
            if "bias" in name:
                nn.init.zeros_(p)


@register_policy("recurrent_gaussian")
class RecurrentGaussianPolicy(nn.Module):
    """Actor-critic of the VER paper: [visual embedding, proprioception, prev action] -> LSTM."""

    def __init__(
        self, observation_space: spaces.Dict, action_space: spaces.Box, config: ModelConfig
    ) -> None:
        super().__init__()
        self.config = config.validate()
        self.action_dim = _check_action_space(action_space)
        self.layout = split_observation_space(observation_space, config)
        self.encoder = build_encoder(self.layout, config)
        self.prev_action_embedding = nn.Linear(self.action_dim, config.prev_action_embedding_size)
        rnn_in = self.encoder.output_size + config.prev_action_embedding_size
        self.rnn = nn.LSTM(rnn_in, config.rnn_hidden_size, config.rnn_layers)
        self.critic = nn.Linear(config.rnn_hidden_size, 1)
        _init_weights(self)  # before the heads' own init, which must not be overwritten
        nn.init.orthogonal_(self.critic.weight, gain=1.0)
        nn.init.orthogonal_(self.prev_action_embedding.weight, gain=1.0)
        self.action_head = GaussianHead(
            config.rnn_hidden_size,
            self.action_dim,
            config.action_log_std_init,
            (config.action_log_std_min, config.action_log_std_max),
            config.action_mean_init_gain,
            squash_mean=config.squash_mean,
            mean_init=config.action_mean_init,
        )
        self.rnn_layers = config.rnn_layers
        self.num_recurrent_layers = 2 * config.rnn_layers
        self.hidden_size = config.rnn_hidden_size

    # --- recurrent-state layout -------------------------------------------------------------
    def initial_hidden(self, batch: int, device: torch.device | str | None = None) -> torch.Tensor:
        """Zero recurrent state [batch, R, H]."""
        device = device if device is not None else self.critic.weight.device
        return torch.zeros(batch, self.num_recurrent_layers, self.hidden_size, device=device)

    def _to_lstm(self, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        layers_first = hidden.transpose(0, 1)  # [R, B, H]
        n = self.rnn_layers
        return layers_first[:n].contiguous(), layers_first[n:].contiguous()

    def _from_lstm(self, h: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return torch.cat([h, c], dim=0).transpose(0, 1).contiguous()

    def _check_hidden(self, hidden: torch.Tensor, batch: int, what: str) -> None:
        expected = (batch, self.num_recurrent_layers, self.hidden_size)
        if tuple(hidden.shape) != expected:
            raise ValueError(
                f"{what} has shape {tuple(hidden.shape)}, expected {expected} "
                "([batch, 2 * rnn_layers, rnn_hidden_size]); use policy.initial_hidden(batch)"
            )

    # --- shared pieces ----------------------------------------------------------------------
    def _features(self, obs: Obs, prev_action: torch.Tensor) -> torch.Tensor:
        check_observation_keys(obs, self.layout)
        prev_action = prev_action.float()
        if not self.config.prev_action_input:
            prev_action = torch.zeros_like(prev_action)
        embedded = self.prev_action_embedding(prev_action)
        return torch.cat([self.encoder(obs), embedded], dim=1)

    def _single_step(
        self, obs: Obs, hidden: torch.Tensor, prev_action: torch.Tensor, not_done: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One LSTM step for a batch; resets state where not_done is False."""
        self._check_hidden(hidden, prev_action.shape[0], "hidden")
        keep = not_done.reshape(-1).to(hidden.dtype)
        hidden = hidden * keep.view(-1, 1, 1)
        prev_action = prev_action * keep.view(-1, 1).to(prev_action.dtype)
        x = self._features(obs, prev_action)
        return self._lstm_step(x, hidden)

    def _lstm_step(
        self, x: torch.Tensor, hidden: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One time step of the stacked LSTM with `self.rnn`'s own weights, cell by cell:
        the same maths as `self.rnn` on a length-1 sequence, without nn.LSTM's per-call
        overhead (about half of a small policy's acting step on CPU)."""
        n, rnn = self.rnn_layers, self.rnn
        hs, cs = [], []
        for k in range(n):
            weights = (
                getattr(rnn, f"weight_ih_l{k}"),
                getattr(rnn, f"weight_hh_l{k}"),
                getattr(rnn, f"bias_ih_l{k}"),
                getattr(rnn, f"bias_hh_l{k}"),
            )
            x, c = torch.lstm_cell(x, (hidden[:, k], hidden[:, n + k]), *weights)
            hs.append(x)
            cs.append(c)
        return x, torch.stack(hs + cs, dim=1)

    def _run_sequences(
        self, x: torch.Tensor, hidden: torch.Tensor, seq_lengths: torch.Tensor
    ) -> torch.Tensor:
        """LSTM over K contiguous sequences laid end to end in x [S, F]; returns [S, H].

        The sequences are scattered into a zero-padded [T_max, K, F] block when padding at
        most triples the work: the fused RNN kernels (oneDNN on CPU, cuDNN) then run the
        whole block, and the scatter/gather's gradients are index ops, where a packed
        sequence's backward zero-fills a full gradient buffer per time step (3x slower on
        CPU). Outputs past a sequence's end are dropped; the LSTM is causal, so the kept
        outputs are exact. On CPU, uneven lengths run as two such blocks, the longest
        sequences apart from the rest (`length_buckets`): on the CPU profile's rollouts that
        is 1.1-1.5x faster than one block and 3-6x faster than a packed sequence
        (benchmarks/lstm_buckets.py). Elsewhere very uneven lengths use a packed sequence.

        Under CPU bf16 autocast (`ppo.autocast_bf16` on a CPU learner) the LSTM runs in fp32:
        torch's CPU autocast hands oneDNN's LSTM mixed precisions it has no kernel for
        ("could not create a primitive descriptor"); the rest of the forward keeps bf16."""
        if x.device.type == "cpu" and torch.is_autocast_enabled("cpu"):
            with torch.autocast("cpu", enabled=False):
                return self._run_sequences(x.float(), hidden.float(), seq_lengths)
        lengths = seq_lengths.detach().to("cpu", torch.long)
        k, t_max, steps = lengths.numel(), int(lengths.max()), x.shape[0]
        groups = length_buckets(lengths) if x.device.type == "cpu" else []
        if len(groups) > 1:  # blocks of similar lengths, each padded (module doc of LENGTH_BUCKETS)
            starts = torch.cumsum(lengths, 0) - lengths
            rows, outs = [], []
            for group in groups:
                g_len = lengths[group]
                seq = torch.repeat_interleave(torch.arange(group.numel()), g_len)
                offset = torch.arange(int(g_len.sum())) - (torch.cumsum(g_len, 0) - g_len)[seq]
                g_rows = (starts[group][seq] + offset).to(x.device)  # the group's steps in x
                outs.append(self._padded_block(x.index_select(0, g_rows), hidden[group], g_len))
                rows.append(g_rows)
            out = torch.cat(outs)
            return out.new_zeros(steps, out.shape[1]).index_copy(0, torch.cat(rows), out)
        if t_max * k <= PAD_WORK_LIMIT * steps:
            return self._padded_block(x, hidden, lengths)
        packed = pack_sequence(list(torch.split(x, lengths.tolist())), enforce_sorted=False)
        # With enforce_sorted=False the LSTM permutes hx itself and pad_packed_sequence restores
        # the original sequence order, so hidden[k] stays matched to sequence k.
        out, _ = self.rnn(packed, self._to_lstm(hidden))
        padded, _ = pad_packed_sequence(out, batch_first=True)  # [K, T_max, H]
        valid = torch.arange(padded.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
        return padded[valid.to(padded.device)]  # row-major: sequence after sequence, in time

    def _padded_block(
        self, x: torch.Tensor, hidden: torch.Tensor, lengths: torch.Tensor
    ) -> torch.Tensor:
        """The LSTM over the sequences of x [S, F] (lengths [K] on the CPU) as one zero-padded
        [T_max, K] block; the outputs of the real steps, in x's order."""
        k, t_max, steps = lengths.numel(), int(lengths.max()), x.shape[0]
        seq = torch.repeat_interleave(torch.arange(k), lengths)
        offset = torch.arange(steps) - (torch.cumsum(lengths, 0) - lengths)[seq]
        pos = (offset * k + seq).to(x.device)  # row of each step in the [T_max * K] block
        block = x.new_zeros(t_max * k, x.shape[1]).index_copy(0, pos, x)
        out, _ = self.rnn(block.view(t_max, k, -1), self._to_lstm(hidden))
        return out.reshape(t_max * k, -1).index_select(0, pos)

    def _check_sequences(self, steps: int, hidden: torch.Tensor, seq_lengths: torch.Tensor) -> None:
        if seq_lengths.dim() != 1 or seq_lengths.numel() != hidden.shape[0]:
            raise ValueError(
                f"seq_lengths must be 1-D with one entry per hidden state (K={hidden.shape[0]}), "
                f"got shape {tuple(seq_lengths.shape)}"
            )
        self._check_hidden(hidden, hidden.shape[0], "hidden")
        total = int(seq_lengths.sum())
        if total != steps or bool((seq_lengths <= 0).any()):
            raise ValueError(
                f"seq_lengths {seq_lengths.tolist()} must be positive and sum to the {steps} "
                "steps in the batch"
            )

    # --- contract §5 ------------------------------------------------------------------------
    def distribution(self, rnn_out: torch.Tensor) -> DiagGaussian:
        return self.action_head(rnn_out)

    @torch.no_grad()
    def get_value(
        self, obs: Obs, hidden: torch.Tensor, prev_action: torch.Tensor, not_done: torch.Tensor
    ) -> torch.Tensor:
        """Value [B] of the current step (e.g. for bootstrapping the last return)."""
        out, _ = self._single_step(obs, hidden, prev_action, not_done)
        return self.critic(out).squeeze(-1)

    def act(
        self,
        obs: Obs,
        hidden: torch.Tensor,
        prev_action: torch.Tensor,
        not_done: torch.Tensor,
        deterministic: bool = False,
        noise: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """(value[B], action[B, A], log_prob[B], hidden_out[B, R, H]); unclipped actions.

        `noise` [B, A] (standard normal): sample mean + std * noise instead of drawing fresh
        randoms, so a caller (a CUDA graph, a test) controls the randomness; ignored when
        `deterministic`, which returns the mean.
        """
        out, hidden_out = self._single_step(obs, hidden, prev_action, not_done)
        dist = self.distribution(out)
        action = dist.mode() if deterministic else dist.sample(noise)
        return self.critic(out).squeeze(-1), action, dist.log_prob(action), hidden_out

    def evaluate_actions(
        self,
        obs: Obs,
        hidden: torch.Tensor,
        prev_actions: torch.Tensor,
        actions: torch.Tensor,
        seq_lengths: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(values[S], log_probs[S], entropy[S]) over K sequences of one episode each.

        The encoder runs on all S steps as one batch; only the LSTM sees the sequences.
        """
        steps = actions.shape[0]
        self._check_sequences(steps, hidden, seq_lengths)
        x = self._features(obs, prev_actions)
        out = self._run_sequences(x, hidden, seq_lengths)
        dist = self.distribution(out)
        return self.critic(out).squeeze(-1), dist.log_prob(actions), dist.entropy()

    def forward(
        self,
        obs: Obs,
        hidden: torch.Tensor,
        prev_actions: torch.Tensor,
        actions: torch.Tensor,
        seq_lengths: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """evaluate_actions, so a DistributedDataParallel wrapper syncs the learner's grads."""
        return self.evaluate_actions(obs, hidden, prev_actions, actions, seq_lengths)
