"""The aggregated DAgger data: labelled sequence chunks in a FIFO buffer.

A collection round holds T steps of each of the N envs (`RoundStorage`, [T, N, ...]); it is
cut into chunks of L consecutive steps of one env (`Chunks`, [K, L, ...] with K = N·T/L),
each with the student's recurrent state entering its first step (as the student had it while
acting: R2D2's "stored state"), and appended to `ChunkBuffer`, a ring of chunks whose
oldest are overwritten (FIFO). Depth is stored as float16 or uint8 (`distill.depth_dtype`),
vectors as float32.

A minibatch is a set of chunks laid out chunk after chunk, each chunk cut further at episode
starts (`split_sequences`): the policy's sequence forward (`evaluate_actions` layout) runs the
LSTM over K_b single-episode sequences, the first of each chunk from its stored state, the
others (episodes that began inside the chunk) from zeros. Gradients flow through at most L
steps: truncated BPTT.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
from gymnasium import spaces


def is_image(space: spaces.Space) -> bool:
    return isinstance(space, spaces.Box) and len(space.shape) == 3


@dataclass
class Chunks:
    """K chunks of L steps (numpy)."""

    obs: dict[str, np.ndarray]
    """[K, L, *shape] per observation key."""
    prev_actions: np.ndarray
    """[K, L, A] the action executed before each step, zero at an episode's first step."""
    targets: np.ndarray
    """[K, L, A] the teacher's action for each step (the label)."""
    starts: np.ndarray
    """[K, L] bool: the step begins an episode."""
    hidden: np.ndarray
    """[K, R, H] the student's recurrent state entering each chunk's first step."""

    def __len__(self) -> int:
        return self.starts.shape[0]


class RoundStorage:
    """One collection round: T steps of N envs, written step by step."""

    def __init__(
        self,
        obs_dtypes: dict[str, tuple[tuple[int, ...], np.dtype]],
        num_envs: int,
        rollout_steps: int,
        chunk_len: int,
        action_dim: int,
        hidden_shape: tuple[int, int],
    ):
        t, n = rollout_steps, num_envs
        self.steps, self.num_envs, self.chunk_len = t, n, chunk_len
        self.obs = {k: np.zeros((t, n, *shape), dtype) for k, (shape, dtype) in obs_dtypes.items()}
        self.prev_actions = np.zeros((t, n, action_dim), np.float32)
        self.targets = np.zeros((t, n, action_dim), np.float32)
        self.starts = np.zeros((t, n), bool)
        self.hidden = np.zeros((t // chunk_len, n, *hidden_shape), np.float32)

    def record(self, t: int, obs, prev_actions, targets, starts, hidden) -> None:
        """Step t of every env; `hidden` (the state entering step t) is kept at chunk starts."""
        for key, array in self.obs.items():
            array[t] = obs[key]
        self.prev_actions[t] = prev_actions
        self.targets[t] = targets
        self.starts[t] = starts
        if t % self.chunk_len == 0:
            self.hidden[t // self.chunk_len] = hidden

    def chunks(self) -> Chunks:
        """The round as N·T/L chunks, env after env, each env's in time order."""
        c, n, size = self.steps // self.chunk_len, self.num_envs, self.chunk_len

        def cut(array: np.ndarray) -> np.ndarray:  # [T, N, ...] -> [N·C, L, ...]
            rest = array.shape[2:]
            per_env = array.reshape(c, size, n, *rest).swapaxes(1, 2).swapaxes(0, 1)
            return per_env.reshape(n * c, size, *rest)

        hidden = self.hidden.swapaxes(0, 1).reshape(n * c, *self.hidden.shape[2:])
        return Chunks(
            obs={k: cut(v) for k, v in self.obs.items()},
            prev_actions=cut(self.prev_actions),
            targets=cut(self.targets),
            starts=cut(self.starts),
            hidden=hidden,
        )


class Batch(NamedTuple):
    """A minibatch of M steps in K single-episode sequences, laid out sequence after
    sequence (the policy's sequence layout, docs/CONTRACTS.md §5)."""

    obs: dict[str, torch.Tensor]
    """[M, ...] float32 observation tensors."""
    prev_actions: torch.Tensor
    """[M, A]"""
    targets: torch.Tensor
    """[M, A] the teacher's actions."""
    hidden: torch.Tensor
    """[K, R, H] recurrent state entering each sequence."""
    seq_lengths: torch.Tensor
    """[K] long, sums to M."""


def split_sequences(starts: np.ndarray, hidden: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cut B chunks of L steps ([B, L] episode-start flags) into single-episode sequences:
    (hidden [K, R, H], lengths [K]). A chunk's first sequence starts from its stored state
    (zeros if the chunk begins an episode), every later one (an episode start) from zeros."""
    b, size = starts.shape
    begins = starts.copy()
    begins[:, 0] = True
    first = np.flatnonzero(begins.reshape(-1))
    lengths = np.diff(np.append(first, b * size))
    out = np.zeros((len(first), *hidden.shape[1:]), np.float32)
    chunk_first = first % size == 0
    chunk = first[chunk_first] // size
    keep = ~starts[chunk, 0]
    out[chunk_first] = hidden[chunk] * keep[:, None, None]
    return out, lengths


class ChunkBuffer:
    """FIFO ring of `capacity` chunks of `chunk_len` steps for the student's observation
    space; image keys stored as `depth_dtype` ('float16' or 'uint8')."""

    def __init__(
        self,
        obs_space: spaces.Dict,
        action_dim: int,
        hidden_shape: tuple[int, int],
        chunk_len: int,
        capacity: int,
        depth_dtype: str = "float16",
    ):
        if capacity < 1:
            raise ValueError(f"ChunkBuffer capacity must be >= 1 chunk, got {capacity}")
        self.capacity, self.chunk_len, self.depth_dtype = capacity, chunk_len, depth_dtype
        self.obs: dict[str, np.ndarray] = {}
        self.scales: dict[str, float] = {}  # uint8 images: the value of level 255
        for key, space in obs_space.spaces.items():
            dtype = np.dtype(np.float32)
            if is_image(space) and space.dtype == np.uint8:
                dtype = np.dtype(np.uint8)
            elif is_image(space):
                dtype = np.dtype(depth_dtype)
                if dtype == np.uint8:
                    self.scales[key] = _image_max(key, space)
            self.obs[key] = np.zeros((capacity, chunk_len, *space.shape), dtype)
        self.prev_actions = np.zeros((capacity, chunk_len, action_dim), np.float32)
        self.targets = np.zeros((capacity, chunk_len, action_dim), np.float32)
        self.starts = np.zeros((capacity, chunk_len), bool)
        self.hidden = np.zeros((capacity, *hidden_shape), np.float32)
        self.head = 0  # the slot the next chunk goes to
        self.count = 0  # chunks held

    def __len__(self) -> int:
        return self.count

    @property
    def steps(self) -> int:
        return self.count * self.chunk_len

    @property
    def nbytes(self) -> int:
        arrays = [*self.obs.values(), self.prev_actions, self.targets, self.starts, self.hidden]
        return sum(a.nbytes for a in arrays)

    def add(self, chunks: Chunks) -> None:
        """Append the chunks in order, overwriting the oldest once full."""
        k = len(chunks)
        keep = min(k, self.capacity)  # of more chunks than fit, only the newest stay
        slots = (self.head + k - keep + np.arange(keep)) % self.capacity
        src = slice(k - keep, k)
        for key, array in self.obs.items():
            array[slots] = self._encode(key, chunks.obs[key][src])
        self.prev_actions[slots] = chunks.prev_actions[src]
        self.targets[slots] = chunks.targets[src]
        self.starts[slots] = chunks.starts[src]
        self.hidden[slots] = chunks.hidden[src]
        self.head = (self.head + k) % self.capacity
        self.count = min(self.count + k, self.capacity)

    def _encode(self, key: str, values: np.ndarray) -> np.ndarray:
        if key not in self.scales:
            return values
        levels = np.clip(np.asarray(values, np.float32) / self.scales[key], 0.0, 1.0) * 255.0
        return np.rint(levels).astype(np.uint8)

    def epoch(self, chunks_per_batch: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
        """One pass over the held chunks in random order, `chunks_per_batch` at a time (the
        last batch may be smaller)."""
        order = rng.permutation(self.count)
        for i in range(0, self.count, chunks_per_batch):
            yield order[i : i + chunks_per_batch]

    def sample(self, chunks_per_batch: int, rng: np.random.Generator) -> np.ndarray:
        """`chunks_per_batch` distinct held chunks drawn at random (all of them when fewer)."""
        return rng.choice(self.count, size=min(chunks_per_batch, self.count), replace=False)

    def batch(self, indices: np.ndarray, device: torch.device | str = "cpu") -> Batch:
        """Chunks `indices` (slots) as one minibatch on `device`."""
        indices = np.asarray(indices)
        m = len(indices) * self.chunk_len
        obs = {}
        for key, array in self.obs.items():
            values = torch.from_numpy(array[indices].reshape(m, *array.shape[2:])).to(device)
            values = values.float()
            if key in self.scales:
                values = values * (self.scales[key] / 255.0)
            obs[key] = values
        hidden, lengths = split_sequences(self.starts[indices], self.hidden[indices])

        def flat(array: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(array[indices].reshape(m, -1)).to(device)

        return Batch(
            obs=obs,
            prev_actions=flat(self.prev_actions),
            targets=flat(self.targets),
            hidden=torch.from_numpy(hidden).to(device),
            seq_lengths=torch.from_numpy(lengths).long(),
        )


def _image_max(key: str, space: spaces.Box) -> float:
    high = float(np.max(space.high))
    if not np.isfinite(high) or high <= 0:
        raise ValueError(
            f"observation {key!r} has no finite upper bound ({high}): store it as float16 "
            "(distill.depth_dtype=float16)"
        )
    return high
