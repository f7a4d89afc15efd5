"""One observation as one row of bytes: every key at a fixed, aligned offset.

Env worker i writes its observation into row i of a [N, row_bytes] block of shared memory; the
inference worker gathers the rows of a batch with one `np.take` and moves them to the device
in one copy, and rollout storage keeps the same rows per step slot, so an observation is
written once by the env and copied only as whole rows after that (docs/DESIGN.md §7).

Each key is seen through a strided view of the block ([N, *shape] of its dtype), so readers
still get a dict of arrays. Depth (a float image, the largest key) is stored as float16 when
`compact` is set: half the bytes in shared memory, in every copy and in the rollout; the
encoder casts images to float32 anyway, and float16 keeps depth to within 4 mm up to 10 m.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from gymnasium import spaces

if TYPE_CHECKING:  # env workers import this module: no torch there
    import torch

ALIGN = 8
"""Byte alignment of every key's offset and of the row length (the widest dtype)."""


@dataclass(frozen=True)
class RowField:
    """Where one observation key lives in a row."""

    key: str
    offset: int
    shape: tuple[int, ...]
    dtype: np.dtype  # the stored dtype (float16 for compact depth)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


def stored_dtype(key: str, space: spaces.Box, compact: bool) -> np.dtype:
    """float16 for float image keys (depth) when compact, else the space's dtype."""
    dtype = np.dtype(space.dtype)
    is_image = len(space.shape) == 3
    if compact and is_image and dtype == np.float32:
        return np.dtype(np.float16)
    return dtype


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def _torch_dtype(dtype: np.dtype) -> torch.dtype:
    import torch

    return torch.from_numpy(np.zeros(0, dtype)).dtype


class ObsRowLayout:
    """Byte layout of one observation row for an observation space (keys in sorted order)."""

    def __init__(self, obs_space: spaces.Dict, compact: bool = True):
        self.fields: dict[str, RowField] = {}
        offset = 0
        for key in sorted(obs_space.spaces):
            space = obs_space[key]
            field = RowField(key, offset, tuple(space.shape), stored_dtype(key, space, compact))
            self.fields[key] = field
            offset = _aligned(offset + field.nbytes)
        self.row_bytes = max(ALIGN, offset)

    def zeros(self, rows: int) -> np.ndarray:
        return np.zeros((rows, self.row_bytes), np.uint8)

    def views(self, block: np.ndarray) -> dict[str, np.ndarray]:
        """Per-key [rows, *shape] views of a [rows, row_bytes] uint8 array (no copy)."""
        n = block.shape[0]
        out = {}
        for key, f in self.fields.items():
            raw = block[:, f.offset : f.offset + f.nbytes]
            out[key] = raw.view(f.dtype).reshape(n, *f.shape)
        return out

    def torch_views(self, block: torch.Tensor) -> dict[str, torch.Tensor]:
        """Per-key [rows, *shape] views of a [rows, row_bytes] uint8 tensor (no copy)."""
        n = block.shape[0]
        out = {}
        for key, f in self.fields.items():
            raw = block[:, f.offset : f.offset + f.nbytes]
            out[key] = raw.view(_torch_dtype(f.dtype)).view(n, *f.shape)
        return out

    def pack(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        """A batch of observations ([B, *shape] per key) as [B, row_bytes] rows (tests, tools)."""
        batch = len(next(iter(obs.values())))
        rows = self.zeros(batch)
        for key, view in self.views(rows).items():
            view[...] = obs[key]
        return rows
