"""Named numpy arrays in `multiprocessing.shared_memory` blocks, attachable by spec.

The PQL replay buffer, the speed-ratio counters and the parameter slots live in these: the
Actor and the two learners map the same memory, so nothing array-sized is pickled between
processes. `shared=False` gives plain arrays with the same interface (serial mode, tests).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from multiprocessing import shared_memory

import numpy as np

from rearrange.runtime.shared_memory import ArraySpec, open_block, release_blocks

Layout = dict[str, tuple[tuple[int, ...], np.dtype]]


@dataclass
class SharedArrays:
    """Arrays by name; `specs` (picklable) lets another process attach them."""

    arrays: dict[str, np.ndarray]
    specs: dict[str, ArraySpec] = field(default_factory=dict)
    _blocks: list[shared_memory.SharedMemory] = field(default_factory=list, repr=False)
    _owner: bool = False

    @classmethod
    def create(cls, layout: Layout, shared: bool = True) -> SharedArrays:
        """Zeroed arrays (in shared memory unless `shared=False`)."""
        arrays, specs, blocks = {}, {}, []
        for key, (shape, dtype) in layout.items():
            dtype = np.dtype(dtype)
            if not shared:
                arrays[key] = np.zeros(shape, dtype)
                continue
            nbytes = max(1, int(np.prod(shape)) * dtype.itemsize)
            block = shared_memory.SharedMemory(create=True, size=nbytes)
            blocks.append(block)
            arrays[key] = np.ndarray(shape, dtype, buffer=block.buf)
            arrays[key][...] = 0
            specs[key] = ArraySpec(block.name, tuple(shape), dtype.str)
        return cls(arrays, specs, blocks, _owner=shared)

    @classmethod
    def attach(cls, specs: dict[str, ArraySpec]) -> SharedArrays:
        """Map arrays created by `create` in another process."""
        arrays, blocks = {}, []
        for key, spec in specs.items():
            block = open_block(spec.name)
            blocks.append(block)
            arrays[key] = np.ndarray(spec.shape, np.dtype(spec.dtype), buffer=block.buf)
        return cls(arrays, dict(specs), blocks, _owner=False)

    def __getitem__(self, key: str) -> np.ndarray:
        return self.arrays[key]

    def close(self) -> None:
        """Detach (and, in the creating process, free) the blocks."""
        self.arrays = {}
        release_blocks(self._blocks, self._owner)
        self._blocks = []
