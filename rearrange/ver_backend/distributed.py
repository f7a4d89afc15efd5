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

GPU placement: local rank r trains on cuda:(r mod #GPUs), so a node may run more ranks than
it has GPUs. NCCL cannot put two ranks on one GPU; when ranks share one, the default group is
gloo instead (it all-reduces and broadcasts CUDA tensors, slower), with a one-line warning.
Inference and learning of a rank share its one CUDA context (VER App. A.1: the main process
plays both roles); env workers never touch CUDA, they render through EGL on the rank's GPU
(rearrange/sim/egl_device.py).
"""

from __future__ import annotations

import datetime
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

log = logging.getLogger(__name__)


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


def _cuda_index(name: str, local_rank: int, gpu_count: int) -> int | None:
    """The CUDA index device `name` means for `local_rank` on a node with `gpu_count` GPUs
    (None: CPU). 'auto' and a bare 'cuda' spread the local ranks over the GPUs round-robin;
    'cuda:N' is GPU N for every rank."""
    if name == "cpu":
        return None
    if name in ("auto", "cuda"):
        return local_rank % gpu_count if gpu_count > 0 else None
    if name.startswith("cuda:") and name[5:].isdigit():
        return int(name[5:])
    raise ValueError(f"device {name!r}: use 'auto', 'cpu', 'cuda' or 'cuda:N'")


def resolve_device(name: str, local_rank: int = 0) -> torch.device:
    """The torch device of local rank `local_rank`: 'auto' → cuda:(LOCAL_RANK mod #GPUs) if
    CUDA is available, else cpu; 'cuda' → the same GPU, CUDA required; 'cuda:N' → GPU N."""
    _cuda_index(name, 0, 1)  # a bad name fails here, whatever the machine
    available = torch.cuda.is_available()
    if name not in ("auto", "cpu") and not available:
        raise ValueError(f"device {name!r} requested but CUDA is not available: use device=cpu")
    gpu_count = torch.cuda.device_count() if available else 0
    index = _cuda_index(name, local_rank, gpu_count)
    if index is None:
        return torch.device("cpu")
    if index >= gpu_count:
        raise ValueError(
            f"device {name!r}: this machine has {gpu_count} CUDA device(s) (cuda:0.."
            f"cuda:{gpu_count - 1}); use device=auto or a smaller index"
        )
    return torch.device("cuda", index)


def rank_device(name: str) -> torch.device:
    """`resolve_device` for this process's LOCAL_RANK (torchrun; 0 without it): the device the
    trainer will use, e.g. for the env workers' render device before the trainer starts."""
    return resolve_device(name, int(os.environ.get("LOCAL_RANK", "0")))


def ranks_share_gpu(name: str, local_world_size: int, gpu_count: int) -> bool:
    """Whether two of a node's `local_world_size` ranks would train on the same GPU."""
    if gpu_count <= 0:
        return False
    indices = [_cuda_index(name, r, gpu_count) for r in range(local_world_size)]
    used = [i for i in indices if i is not None]
    return len(set(used)) < len(used)


def default_backend(device: torch.device, shared_gpu: bool) -> str:
    """Backend of the default group: NCCL with one GPU per rank, else gloo (CPU training, or
    ranks sharing a GPU, which NCCL refuses)."""
    return "nccl" if device.type == "cuda" and not shared_gpu else "gloo"


def _any_rank(store: dist.Store, key: str, flag: bool, rank: int, world_size: int) -> bool:
    """True when `flag` is set on any rank: every rank posts its flag, then reads them all
    (the ranks of nodes with fewer GPUs must not pick NCCL while the others pick gloo)."""
    store.set(f"{key}/{rank}", "1" if flag else "0")
    keys = [f"{key}/{r}" for r in range(world_size)]
    store.wait(keys)
    return any(store.get(k) == b"1" for k in keys)


def init_distributed(device_name: str = "auto", timeout_s: float = 600.0) -> DistContext:
    """Single process unless WORLD_SIZE > 1 (torchrun); gloo on CPU, NCCL with one GPU per
    rank, gloo when ranks share a GPU (a warning says so)."""
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
    backend = _agreed_backend(device, device_name, store, rank, world_size)
    pg_store = dist.PrefixStore("rearrange/pg", store)
    dist.init_process_group(
        backend, store=pg_store, rank=rank, world_size=world_size, timeout=timeout
    )
    control = dist.new_group(backend="gloo", timeout=timeout)
    return DistContext(
        rank, world_size, local_rank, device, dist.PrefixStore("rearrange/ver", store), control
    )


def _agreed_backend(
    device: torch.device,
    device_name: str,
    store: dist.Store,
    rank: int,
    world_size: int,
    local_world_size: int | None = None,
) -> str:
    """The default group's backend, the same on every rank (gloo if any node shares a GPU).
    `local_world_size`: ranks on this node (default: torchrun's LOCAL_WORLD_SIZE, else all)."""
    if device.type != "cuda":
        return "gloo"
    if local_world_size is None:
        local_world_size = int(os.environ.get("LOCAL_WORLD_SIZE", str(world_size)))
    gpu_count = torch.cuda.device_count()
    shared = ranks_share_gpu(device_name, local_world_size, gpu_count)
    shared = _any_rank(
        dist.PrefixStore("rearrange/placement", store), "shared_gpu", shared, rank, world_size
    )
    if shared and rank == 0:
        log.warning(
            "ranks share a GPU (%d local ranks, %d GPUs, device=%s): NCCL needs one GPU per "
            "rank, so gradients are all-reduced over gloo (slower); run one rank per GPU for NCCL",
            local_world_size,
            gpu_count,
            device_name,
        )
    return default_backend(device, shared)
