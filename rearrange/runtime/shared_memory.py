"""Pre-allocated shared-memory arrays between env workers and the inference worker.

Every per-step quantity (observations, reward, done flags, actions, and the final observation
of an episode cut by its time limit) lives in one `multiprocessing.shared_memory` block per
field, shaped [N, ...]. Observations are one block of packed rows (`obs_rows.ObsRowLayout`:
every key at a fixed offset of row i), so a batch is gathered with one `np.take`. Env worker i
writes row i and the inference worker reads it, so nothing observation-sized is pickled per
step; the pipes only carry tiny notifications.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from multiprocessing import shared_memory

import numpy as np
from gymnasium import spaces

from rearrange.runtime.obs_rows import ObsRowLayout

# Per-env scalar fields written by env worker i after each step.
SCALAR_FIELDS: dict[str, np.dtype] = {
    "reward": np.dtype(np.float32),
    "terminated": np.dtype(np.bool_),
    "truncated": np.dtype(np.bool_),
    "success": np.dtype(np.bool_),
    "steps_simulated": np.dtype(np.int64),
}


@dataclass(frozen=True)
class ArraySpec:
    """Where one shared array lives and how to view it."""

    name: str  # shared-memory block name ('' for a process-local array)
    shape: tuple[int, ...]
    dtype: str


@dataclass
class SharedBuffers:
    """numpy views of the shared arrays plus the blocks that back them."""

    obs: dict[str, np.ndarray]
    actions: np.ndarray
    scalars: dict[str, np.ndarray]
    final_obs: dict[str, np.ndarray] = field(default_factory=dict)
    """Last observation of an episode that was truncated (the env auto-reset, so `obs` holds
    the next episode's first one); valid in row i only right after such a step."""
    layout: ObsRowLayout | None = None
    obs_rows: np.ndarray | None = None
    """[N, row_bytes] uint8: the block behind `obs` (one row per env)."""
    final_obs_rows: np.ndarray | None = None
    specs: dict[str, ArraySpec] = field(default_factory=dict)
    _blocks: list[shared_memory.SharedMemory] = field(default_factory=list, repr=False)
    _owner: bool = False

    @property
    def reward(self) -> np.ndarray:
        return self.scalars["reward"]

    @property
    def num_envs(self) -> int:
        return self.actions.shape[0]

    def write_obs(self, index: int, obs: dict[str, np.ndarray]) -> None:
        for key, array in self.obs.items():
            array[index] = obs[key]

    def write_final_obs(self, index: int, obs: dict[str, np.ndarray]) -> None:
        for key, array in self.final_obs.items():
            array[index] = obs[key]

    def close(self) -> None:
        """Detach (and, in the creating process, free) the shared blocks."""
        self.obs, self.scalars, self.final_obs = {}, {}, {}
        self.obs_rows = self.final_obs_rows = None
        self.actions = np.zeros(0)
        release_blocks(self._blocks, self._owner)
        self._blocks = []


def _field_layout(
    rows: ObsRowLayout, action_space: spaces.Box, num_envs: int
) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    layout = {
        "obs_rows": ((num_envs, rows.row_bytes), np.dtype(np.uint8)),
        "final_obs_rows": ((num_envs, rows.row_bytes), np.dtype(np.uint8)),
    }
    layout["actions"] = ((num_envs, *action_space.shape), np.dtype(np.float32))
    for name, dtype in SCALAR_FIELDS.items():
        layout[name] = ((num_envs,), dtype)
    return layout


def _assemble(arrays: dict[str, np.ndarray], layout: ObsRowLayout, **kwargs) -> SharedBuffers:
    scalars = {k: arrays[k] for k in SCALAR_FIELDS}
    return SharedBuffers(
        obs=layout.views(arrays["obs_rows"]),
        actions=arrays["actions"],
        scalars=scalars,
        final_obs=layout.views(arrays["final_obs_rows"]),
        layout=layout,
        obs_rows=arrays["obs_rows"],
        final_obs_rows=arrays["final_obs_rows"],
        **kwargs,
    )


def create_buffers(
    obs_space: spaces.Dict, action_space: spaces.Box, num_envs: int, shared: bool = True
) -> SharedBuffers:
    """Allocate zeroed arrays for `num_envs` envs (shared memory unless `shared=False`)."""
    arrays, specs, blocks = {}, {}, []
    layout = ObsRowLayout(obs_space)
    for key, (shape, dtype) in _field_layout(layout, action_space, num_envs).items():
        nbytes = max(1, int(np.prod(shape)) * dtype.itemsize)
        if shared:
            block = shared_memory.SharedMemory(create=True, size=nbytes)
            blocks.append(block)
            arrays[key] = np.ndarray(shape, dtype, buffer=block.buf)
            arrays[key][...] = 0
            specs[key] = ArraySpec(block.name, shape, dtype.str)
        else:
            arrays[key] = np.zeros(shape, dtype)
    return _assemble(arrays, layout, specs=specs, _blocks=blocks, _owner=shared)


def release_blocks(blocks: list[shared_memory.SharedMemory], owner: bool) -> None:
    """Detach `blocks`; the creating process (`owner`) also frees them."""
    for block in blocks:
        block.close()
        if owner:
            try:
                block.unlink()
            except FileNotFoundError:
                pass


def open_block(name: str) -> shared_memory.SharedMemory:
    # The creating process owns (and unlinks) the block. Python >= 3.13 can opt out of the
    # resource tracker; before that, spawned children share the parent's tracker, whose
    # registry is a set, so attaching registers nothing new.
    try:
        return shared_memory.SharedMemory(name=name, track=False)
    except TypeError:
        return shared_memory.SharedMemory(name=name)


def attach_buffers(specs: dict[str, ArraySpec], layout: ObsRowLayout) -> SharedBuffers:
    """Map the arrays created by `create_buffers` in another process."""
    arrays, blocks = {}, []
    for key, spec in specs.items():
        block = open_block(spec.name)
        blocks.append(block)
        arrays[key] = np.ndarray(spec.shape, np.dtype(spec.dtype), buffer=block.buf)
    return _assemble(arrays, layout, specs=dict(specs), _blocks=blocks, _owner=False)
