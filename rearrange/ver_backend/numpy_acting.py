"""The acting step of a state policy on CPU, in NumPy.

A state policy's `act` (MLP, previous-action embedding, LSTM cell, value and Gaussian heads)
is ~60 small torch ops; on CPU at VER's batch sizes (1-8 envs) their per-op dispatch, not
their arithmetic, is the cost (~250-430 µs a call on a 2-core machine, against ~100-160 µs for
the same maths in ~30 NumPy calls: 2-3x, benchmarks/RESULTS.md "NumPy acting"). This is the
CPU counterpart of the CUDA graphs of graph_acting.py: the same function with less fixed
cost per call.

The weights are copied into fused, contiguous NumPy matrices (the LSTM's input and recurrent
weights stacked, its two biases summed, the value and mean heads side by side, the log-std
clamped and exponentiated). Like a CUDA graph's captured addresses, that copy must be
renewed when the weights change: `refresh()`, which the inference worker calls at each new
policy version (after every update).

Outputs match `policy.act` within float32 rounding (~1e-6) for the same inputs and noise;
the noise is drawn with `torch.randn` as `act` draws it, so seeded runs consume the same
random numbers on either path.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch
from torch import Tensor, nn

from rearrange.models.distributions import check_noise
from rearrange.models.encoders import StateObservationEncoder, check_observation_keys
from rearrange.models.policy import RecurrentGaussianPolicy


def numpy_acting_supported(policy: nn.Module) -> bool:
    """True for a state-only `RecurrentGaussianPolicy` (MLP encoder of Linear + ReLU) with
    float32 parameters on CPU."""
    if not isinstance(policy, RecurrentGaussianPolicy):
        return False
    encoder = policy.encoder
    if not isinstance(encoder, StateObservationEncoder):
        return False
    if any(not isinstance(m, (nn.Linear, nn.ReLU)) for m in encoder.mlp):
        return False
    return all(p.device.type == "cpu" and p.dtype == torch.float32 for p in policy.parameters())


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """σ(x) as 0.5·tanh(x/2) + 0.5: no overflow for large |x|, unlike 1 / (1 + e^-x)."""
    y = np.tanh(x * 0.5)
    y *= 0.5
    y += 0.5
    return y


def _matrix(linear_weight: Tensor) -> np.ndarray:
    """A Linear's [out, in] weight as a C-contiguous float32 [in, out] copy (x @ it)."""
    return np.ascontiguousarray(linear_weight.detach().numpy().T)


def _vector(bias: Tensor) -> np.ndarray:
    return bias.detach().numpy().copy()


class NumpyActingStep:
    """`policy.act(obs, hidden, prev_action, not_done, deterministic, noise)` in NumPy.

    Called like `graph_acting.ActingStep`; returns torch tensors (views of NumPy results, no
    copy): value [B], action [B, A], log_prob [B], hidden_out [B, R, H].
    """

    def __init__(self, policy: nn.Module) -> None:
        if not numpy_acting_supported(policy):
            raise ValueError(
                f"{type(policy).__name__} is not a state-only RecurrentGaussianPolicy with "
                "float32 parameters on CPU; act with policy.act (or graph_acting.ActingStep)"
            )
        self.policy: RecurrentGaussianPolicy = policy  # type: ignore[assignment]
        self.vector_keys = policy.layout.vector_keys
        self.layers = policy.rnn_layers
        self.hidden_size = policy.hidden_size
        self.action_dim = policy.action_dim
        self.prev_action_input = policy.config.prev_action_input
        self.squash_mean = policy.action_head.squash_mean
        self.refresh()

    # --- the weights, fused -------------------------------------------------------------------
    def refresh(self) -> None:
        """Copy the policy's current weights (call after they change; see the module doc)."""
        p = self.policy
        with torch.no_grad():
            self._mlp = [(_matrix(m.weight), _vector(m.bias)) for m in p.encoder.mlp
                         if isinstance(m, nn.Linear)]  # fmt: skip
            self._embed = (_matrix(p.prev_action_embedding.weight),
                           _vector(p.prev_action_embedding.bias))  # fmt: skip
            self._cells = []
            for k in range(self.layers):
                w_ih, w_hh = (
                    _matrix(getattr(p.rnn, f"{w}_l{k}")) for w in ("weight_ih", "weight_hh")
                )
                bias = _vector(getattr(p.rnn, f"bias_ih_l{k}") + getattr(p.rnn, f"bias_hh_l{k}"))
                self._cells.append((np.concatenate([w_ih, w_hh], axis=0), bias))
            # value and action mean from one matmul: column 0 the value, then the mean
            self._heads = (
                np.concatenate([_matrix(p.critic.weight), _matrix(p.action_head.mean.weight)], 1),
                np.concatenate([_vector(p.critic.bias), _vector(p.action_head.mean.bias)]),
            )
            dist = p.distribution(p.critic.weight.new_zeros(1, self.hidden_size))
            self._std = dist.log_std[0].exp().numpy()  # clamped to the head's bounds
            # log π(mean): the Gaussian's log-prob at z = 0; a sample's adds -½·Σz²
            self._log_prob_mode = np.float32(dist.log_prob(dist.mean).item())

    # --- the step -------------------------------------------------------------------------------
    def __call__(
        self,
        obs: Mapping[str, Tensor],
        hidden: Tensor,
        prev_action: Tensor,
        not_done: Tensor,
        deterministic: bool = False,
        noise: Tensor | None = None,
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        b = prev_action.shape[0]
        check_observation_keys(obs, self.policy.layout)  # the eager step's own checks
        self.policy._check_hidden(hidden, b, "hidden")
        n, size = self.layers, self.hidden_size
        nd = not_done.detach().numpy().reshape(b)
        reset = not nd.all()  # some rows start an episode: their state and prev action are 0
        keep = nd.astype(np.float32)[:, None] if reset else None
        x = np.concatenate(
            [obs[k].numpy().reshape(b, -1) for k in self.vector_keys], axis=1, dtype=np.float32
        )
        for weight, bias in self._mlp:
            x = x @ weight
            x += bias
            np.maximum(x, 0.0, out=x)
        weight, bias = self._embed
        if self.prev_action_input:
            prev = prev_action.numpy()
            embedded = (prev * keep if reset else prev) @ weight
            embedded += bias
        else:
            embedded = np.broadcast_to(bias, (b, bias.shape[0]))
        h_in = hidden.numpy()
        if reset:
            h_in = h_in * keep[:, :, None]
        out = np.empty((b, 2 * n, size), np.float32)
        for k, (weight, bias) in enumerate(self._cells):
            inputs = [x, embedded, h_in[:, k]] if k == 0 else [x, h_in[:, k]]
            gates = np.concatenate(inputs, axis=1) @ weight
            gates += bias
            sig = _sigmoid(gates)  # gates i, f, g, o: i, f, o from here, g through tanh
            c = out[:, n + k]
            np.multiply(sig[:, size : 2 * size], h_in[:, n + k], out=c)
            c += sig[:, :size] * np.tanh(gates[:, 2 * size : 3 * size])
            x = out[:, k]
            np.multiply(sig[:, 3 * size :], np.tanh(c), out=x)
        weight, bias = self._heads
        heads = x @ weight
        heads += bias
        value, mean = np.ascontiguousarray(heads[:, 0]), np.ascontiguousarray(heads[:, 1:])
        if self.squash_mean:
            np.tanh(mean, out=mean)
        if deterministic:
            action, log_prob = mean, np.full(b, self._log_prob_mode, np.float32)
        else:
            if noise is not None:
                check_noise(noise, (b, self.action_dim))
            draw = torch.randn(b, self.action_dim) if noise is None else noise
            eps = draw.detach().numpy().astype(np.float32, copy=False)
            action = eps * self._std
            action += mean
            log_prob = np.square(eps).sum(axis=1)  # z = (action - mean) / std = eps
            log_prob *= -0.5
            log_prob += self._log_prob_mode
        return (
            torch.from_numpy(value),
            torch.from_numpy(action),
            torch.from_numpy(log_prob),
            torch.from_numpy(out),
        )
