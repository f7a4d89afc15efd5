"""The acting step (`policy.act` on a batch of envs), as one CUDA graph per batch-size bucket.

On a GPU the policy's eager forward is bound by kernel launches, not by math (H100, batch 16:
2.9 ms eager, 0.71 ms replayed as a CUDA graph). A graph has fixed shapes, but VER's inference
worker acts on whatever 1..num_envs envs are ready (docs/DESIGN.md §7), so each batch is padded
to the smallest of a few bucket sizes and that bucket's graph is replayed. On CPU there are
no launches to save and padding only costs, so the step stays eager there.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence

import numpy as np
import torch
from gymnasium import spaces
from torch import Tensor, nn

ActOutput = tuple[Tensor, Tensor, Tensor, Tensor]  # value [B], action [B,A], log_prob, hidden

WARMUP_ITERS = 3
"""Eager runs on a side stream before capture (cuDNN/cuBLAS set-up must not be captured)."""


def batch_buckets(max_batch: int) -> tuple[int, ...]:
    """The padded batch sizes: powers of two below max_batch, then max_batch itself."""
    if int(max_batch) < 1:
        raise ValueError(f"max_batch={max_batch} must be >= 1 (the number of envs acted on)")
    max_batch = int(max_batch)
    powers = [1 << i for i in range(max_batch.bit_length()) if 1 << i < max_batch]
    return (*powers, max_batch)


def bucket_for(batch: int, buckets: Sequence[int]) -> int:
    """The smallest bucket >= batch (buckets sorted ascending, as batch_buckets returns)."""
    if batch < 1:
        raise ValueError(f"batch size {batch} must be >= 1")
    i = bisect.bisect_left(buckets, batch)
    if i == len(buckets):
        raise ValueError(
            f"batch size {batch} exceeds the largest bucket {buckets[-1]}; "
            "build the ActingStep with max_batch >= the number of envs"
        )
    return buckets[i]


def _torch_dtype(space: spaces.Space) -> torch.dtype:
    return torch.from_numpy(np.zeros((), dtype=space.dtype)).dtype


def _check_batch(name: str, value: Tensor, batch: int, row_shape: tuple[int, ...]) -> None:
    if value.shape[0] != batch or tuple(value.shape[1:]) != row_shape:
        raise ValueError(
            f"{name} has shape {tuple(value.shape)}, expected {(batch, *row_shape)} "
            "(batch first, like the other inputs)"
        )


def _pad_rows(x: Tensor, rows: int) -> Tensor:
    """x with zero rows appended up to `rows` (False for bool)."""
    pad = x.new_zeros((rows - x.shape[0], *x.shape[1:]))
    return torch.cat([x, pad], dim=0)


def capture(run, device: torch.device) -> tuple[torch.cuda.CUDAGraph, ActOutput]:
    """(graph, static outputs) of `run()` captured on `device`, after a side-stream warm-up."""
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.no_grad(), torch.cuda.stream(side):
        for _ in range(WARMUP_ITERS):
            run()
    torch.cuda.current_stream(device).wait_stream(side)
    # thread_local: the learner may run CUDA work in its own thread during a capture.
    with torch.no_grad(), torch.cuda.graph(graph, capture_error_mode="thread_local"):
        out = run()
    return graph, out


class _BucketGraph:
    """Static inputs/outputs and the captured graph of one bucket size."""

    def __init__(self, step: ActingStep, size: int) -> None:
        dev = step.device
        self.size = size
        self.obs = {
            k: torch.zeros((size, *s.shape), dtype=_torch_dtype(s), device=dev)
            for k, s in step.obs_space.spaces.items()
        }
        self.hidden = torch.zeros((size, *step.hidden_shape), device=dev)
        self.prev_action = torch.zeros((size, step.action_dim), device=dev)
        self.not_done = torch.zeros(size, dtype=torch.bool, device=dev)
        self.noise = torch.zeros((size, step.action_dim), device=dev)
        self.filled = 0  # leading rows that may hold non-zero inputs (the rest are zero)
        act = step.policy.act

        def run() -> ActOutput:
            return act(self.obs, self.hidden, self.prev_action, self.not_done, noise=self.noise)

        self.graph, self.out = capture(run, dev)

    def __call__(
        self,
        obs: Mapping[str, Tensor],
        hidden: Tensor,
        prev_action: Tensor,
        not_done: Tensor,
        noise: Tensor | None,
    ) -> ActOutput:
        b = prev_action.shape[0]
        for k, buf in self.obs.items():
            buf[:b].copy_(obs[k])
        self.hidden[:b].copy_(hidden)
        self.prev_action[:b].copy_(prev_action)
        self.not_done[:b].copy_(not_done.reshape(-1))
        if noise is None:
            self.noise[:b].normal_()  # drawn outside the graph: fresh on every replay
        else:
            self.noise[:b].copy_(noise)
        if self.filled > b:  # padding rows: zeros and not_done False (a fresh episode)
            for buf in (*self.obs.values(), self.hidden, self.prev_action, self.noise):
                buf[b : self.filled].zero_()
            self.not_done[b : self.filled].zero_()
        self.filled = b
        self.graph.replay()
        return tuple(t[:b].clone() for t in self.out)  # type: ignore[return-value]


class ActingStep:
    """policy.act on a batch, as CUDA graphs per bucket on CUDA, eager elsewhere.

    A call with B rows runs the graph of `bucket_for(B)`: the rows are copied into that
    bucket's static inputs, padding rows get zeros (not_done False), the Gaussian noise of the
    real rows is drawn outside the graph (or copied from `noise`), and clones of the first B
    output rows are returned. Graphs are captured lazily, on a bucket's first call.

    Graphs read the parameters by address: in-place updates (optimizer.step, load_state_dict,
    `p.data.add_`) are seen by later replays, but replaced tensors (`policy.to(...)`, assigning
    new Parameters, re-flattening the LSTM) are not: call `reset()` after those.
    Every op of `act` must be row-independent (no batch-norm in train mode), so padding rows
    never change the real rows' outputs.
    """

    def __init__(
        self,
        policy: nn.Module,
        obs_space: spaces.Dict,
        action_dim: int,
        max_batch: int,
        device: torch.device | str,
        use_graphs: bool | None = None,
        pad_to_bucket: bool = False,
    ) -> None:
        """use_graphs None: graphs iff device is CUDA. pad_to_bucket: eager path on the padded
        batch (what the graphs compute; for tests)."""
        self.device = torch.device(device)
        self.use_graphs = self.device.type == "cuda" if use_graphs is None else use_graphs
        if self.use_graphs and self.device.type != "cuda":
            raise ValueError(f"use_graphs=True needs a CUDA device, got {self.device}")
        if self.use_graphs and self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        batch_norms = [n for n, m in policy.named_modules() if _is_batch_dependent(m)]
        if batch_norms:
            raise ValueError(
                f"policy modules {batch_norms} mix rows of a batch (batch-norm in train mode); "
                "padding would change the outputs: call policy.eval() or use GroupNorm"
            )
        self.policy, self.obs_space, self.action_dim = policy, obs_space, int(action_dim)
        self.buckets = batch_buckets(max_batch)
        self.pad_to_bucket = pad_to_bucket
        self.hidden_shape = tuple(policy.initial_hidden(1, "cpu").shape[1:])
        self._graphs: dict[int, _BucketGraph] = {}

    def reset(self) -> None:
        """Drop the captured graphs (recaptured lazily), e.g. after the parameters moved."""
        self._graphs.clear()

    def __call__(
        self,
        obs: Mapping[str, Tensor],
        hidden: Tensor,
        prev_action: Tensor,
        not_done: Tensor,
        noise: Tensor | None = None,
    ) -> ActOutput:
        """(value [B], action [B, A], log_prob [B], hidden_out [B, R, H]); `noise` [B, A] is
        the standard-normal draw of the action sample (None: drawn here)."""
        b = prev_action.shape[0]
        bucket = bucket_for(b, self.buckets)
        self._check_inputs(obs, hidden, prev_action, not_done, noise, b)
        with torch.no_grad():
            if self.use_graphs:
                if bucket not in self._graphs:
                    self._graphs[bucket] = _BucketGraph(self, bucket)
                return self._graphs[bucket](obs, hidden, prev_action, not_done, noise)
            if not self.pad_to_bucket or bucket == b:
                extra = {} if noise is None else {"noise": noise}  # policies without noise
                return self.policy.act(obs, hidden, prev_action, not_done, **extra)
            return self._padded_eager(obs, hidden, prev_action, not_done, noise, bucket)

    def _padded_eager(self, obs, hidden, prev_action, not_done, noise, bucket) -> ActOutput:
        b = prev_action.shape[0]
        if noise is None:
            noise = torch.randn(b, self.action_dim, device=prev_action.device)
        padded_obs = {k: _pad_rows(obs[k], bucket) for k in self.obs_space.spaces}
        out = self.policy.act(
            padded_obs,
            _pad_rows(hidden, bucket),
            _pad_rows(prev_action, bucket),
            _pad_rows(not_done.reshape(-1), bucket),
            noise=_pad_rows(noise, bucket),
        )
        return tuple(t[:b] for t in out)  # type: ignore[return-value]

    def _check_inputs(self, obs, hidden, prev_action, not_done, noise, b: int) -> None:
        missing = [k for k in self.obs_space.spaces if k not in obs]
        if missing:
            raise ValueError(
                f"observation dict lacks keys {missing} of the observation space; "
                "pass the env's full observation dict"
            )
        for k, space in self.obs_space.spaces.items():
            _check_batch(f"obs[{k!r}]", obs[k], b, tuple(space.shape))
        _check_batch("hidden", hidden, b, self.hidden_shape)
        _check_batch("prev_action", prev_action, b, (self.action_dim,))
        if not_done.numel() != b:
            raise ValueError(f"not_done has shape {tuple(not_done.shape)}, expected ({b},)")
        if noise is not None:
            _check_batch("noise", noise, b, (self.action_dim,))


def _is_batch_dependent(module: nn.Module) -> bool:
    return isinstance(module, nn.modules.batchnorm._BatchNorm) and module.training
