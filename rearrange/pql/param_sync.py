"""Network transfer between PQL processes (paper §3.1): shared-memory parameter slots.

The P-learner publishes its policy after every update, the V-learner its critics; consumers
pull a slot when they choose (the Actor before every step, the V-learner every
`v_policy_sync_interval` updates: that lag makes the pulled policy the target policy). A
slot is one flat float32 vector plus a version number, guarded by a lock so a pull never
mixes two publishes. The Actor's observation statistics travel the same way.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters

from rearrange.pql.shared_arrays import SharedArrays
from rearrange.runtime.shared_memory import ArraySpec


@dataclass(frozen=True)
class SlotSpec:
    arrays: dict[str, ArraySpec]
    lock: Any


class VectorSlot:
    """A versioned vector another process can read consistently."""

    def __init__(self, arrays: SharedArrays, lock: Any):
        self.arrays, self.lock = arrays, lock
        self.values, self._version = arrays["values"], arrays["version"]

    @classmethod
    def create(cls, size: int, dtype=np.float32, ctx=None, shared: bool = True) -> VectorSlot:
        layout = {"values": ((size,), dtype), "version": ((1,), np.int64)}
        lock = ctx.Lock() if (shared and ctx is not None) else contextlib.nullcontext()
        return cls(SharedArrays.create(layout, shared), lock)

    @classmethod
    def attach(cls, spec: SlotSpec) -> VectorSlot:
        return cls(SharedArrays.attach(spec.arrays), spec.lock)

    @property
    def spec(self) -> SlotSpec:
        return SlotSpec(self.arrays.specs, self.lock)

    @property
    def version(self) -> int:
        return int(self._version[0])

    def write(self, values: np.ndarray) -> None:
        with self.lock:
            self.values[:] = values
            self._version[0] = self.version + 1

    def read(self) -> tuple[np.ndarray, int]:
        with self.lock:
            return self.values.copy(), self.version

    def close(self) -> None:
        self.arrays.close()


def num_params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def publish(slot: VectorSlot, module: nn.Module) -> None:
    """Copy the module's parameters into the slot."""
    with torch.no_grad():
        slot.write(parameters_to_vector(module.parameters()).detach().cpu().numpy())


def pull(slot: VectorSlot, module: nn.Module, have_version: int) -> int:
    """Load the slot into the module if it holds a newer version; returns the version held."""
    if slot.version == have_version:
        return have_version
    values, version = slot.read()
    device = next(module.parameters()).device
    with torch.no_grad():
        vector_to_parameters(torch.as_tensor(values, device=device), module.parameters())
    return version
