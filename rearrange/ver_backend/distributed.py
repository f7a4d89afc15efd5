"""torch.distributed glue (DD-PPO): process group, gradient all-reduce, weight broadcast,
and a key-value store shared by the ranks for preemption signals.

Launched by torchrun, a process sees RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR /
MASTER_PORT. We open the TCPStore ourselves (torchrun's agent hosts it when
TORCHELASTIC_USE_AGENT_STORE is set, else rank 0 does) and give the process group a prefixed
view of it, so that rollout-time counters (steps collected, ranks finished) use the same store
without ever blocking the way a collective would.

Two process groups: the default one (NCCL on CUDA, gloo on CPU) carries only the learner's
gradient all-reduce and the initial weight broadcast; a separate gloo group carries the
trainer's small control collectives (steps collected, preemption estimates) on CPU tensors,
as the reference shares its preemption decisions over gloo. With `overlap_learning` the
learner thread all-reduces gradients while the main thread collects and runs the control
collectives: on one group the two sequences would interleave differently on each rank
(gloo aborts on the size mismatch); on two groups each keeps its own order.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from torch import nn


@dataclass
class DistContext:
    """Rank, world size, device and (when distributed) the shared store."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    store: dist.Store | None = None
    control_group: Any = None
    """gloo process group of the control collectives (None: the default group)."""

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    # ------------------------------------------------------------------ collectives
    def grad_sync(self, params: Iterable[nn.Parameter]) -> None:
        """Average gradients across ranks in place (one flat all-reduce, default group)."""
        grads = [p.grad for p in params]
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat)
        flat /= self.world_size
        offset = 0
        for g in grads:
            g.copy_(flat[offset : offset + g.numel()].view_as(g))
            offset += g.numel()

    def broadcast_module(self, module: nn.Module) -> None:
        """Every rank starts from rank 0's weights."""
        if not self.is_distributed:
            return
        for tensor in list(module.parameters()) + list(module.buffers()):
            dist.broadcast(tensor.data, src=0)

    def all_gather_array(self, array: np.ndarray) -> list[np.ndarray]:
        """Each rank's copy of `array` (same shape on all ranks)."""
        if not self.is_distributed:
            return [array]
        local = torch.as_tensor(array, dtype=torch.float64).cpu()
        out = [torch.zeros_like(local) for _ in range(self.world_size)]
        dist.all_gather(out, local, group=self.control_group)
        return [t.numpy() for t in out]

    def all_reduce_sum(self, value: float) -> float:
        """Sum of a scalar over ranks (control group, CPU)."""
        if not self.is_distributed:
            return value
        t = torch.tensor([value], dtype=torch.float64)
        dist.all_reduce(t, group=self.control_group)
        return float(t.item())

    # ------------------------------------------------------------------ store counters
    def add_counter(self, key: str, amount: int) -> int:
        """Atomically add to a shared counter; returns the new total (0-amount reads it)."""
        if self.store is None:
            return amount
        return int(self.store.add(key, amount))

    def barrier(self) -> None:
        if self.is_distributed:
            dist.barrier(group=self.control_group)

    def close(self) -> None:
        if self.is_distributed and dist.is_initialized():
            dist.destroy_process_group()


def resolve_device(name: str, local_rank: int = 0) -> torch.device:
    """'auto' → cuda:LOCAL_RANK if available else cpu."""
    if name == "auto":
        name = f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} requested but CUDA is not available: use device=cpu")
    return torch.device(name)


def init_distributed(device_name: str = "auto", timeout_s: float = 600.0) -> DistContext:
    """Single process unless WORLD_SIZE > 1 (torchrun); gloo on CPU, NCCL with CUDA."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = resolve_device(device_name, local_rank)
    if world_size <= 1:
        return DistContext(device=device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    host = os.environ.get("MASTER_ADDR", "127.0.0.1")
    port = int(os.environ.get("MASTER_PORT", "29500"))
    timeout = datetime.timedelta(seconds=timeout_s)
    agent_store = os.environ.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() == "true"
    store = dist.TCPStore(
        host, port, world_size, is_master=rank == 0 and not agent_store, timeout=timeout
    )
    backend = "nccl" if device.type == "cuda" else "gloo"
    pg_store = dist.PrefixStore("rearrange/pg", store)
    dist.init_process_group(
        backend, store=pg_store, rank=rank, world_size=world_size, timeout=timeout
    )
    control = dist.new_group(backend="gloo", timeout=timeout)
    return DistContext(
        rank, world_size, local_rank, device, dist.PrefixStore("rearrange/ver", store), control
    )
