"""Rank-level preemption through the shared store (a local HashStore stands in for TCPStore)."""

import torch.distributed as dist

from rearrange.ver_backend.distributed import DistContext
from rearrange.ver_backend.systems import Collector
from ver_backend.helpers import build_collector


def with_fake_ranks(collector: Collector, world_size: int = 2) -> dist.Store:
    store = dist.HashStore()
    collector.dist = DistContext(rank=0, world_size=world_size, store=store)
    return store


def test_ver_stops_at_the_shared_step_target():
    collector, pool, storage = build_collector("ver", num_envs=3, rollout_steps=10)
    store = with_fake_ranks(collector)
    store.add("steps/0", 12)  # the other rank already collected 12 steps
    collector.steps_target = 20
    stats = collector.collect(0)
    assert stats.preempted
    assert 8 <= stats.steps < 30  # stopped near 20 - 12, far below T·N = 30
    assert int(store.add("steps/0", 0)) == 12 + stats.steps  # all steps reported
    pool.close()


def test_ddppo_preempts_after_sync_fraction_and_quarter_rollout():
    collector, pool, storage = build_collector("ddppo", num_envs=2, rollout_steps=8)
    store = with_fake_ranks(collector, world_size=2)
    store.add("done/0", 2)  # every other rank has finished
    stats = collector.collect(0)
    assert stats.preempted
    # Lock-step: every env has the same count, at least T/4 = 2, less than T.
    counts = storage.steps_this_rollout.tolist()
    assert counts[0] == counts[1] and 2 <= counts[0] < 8
    pool.close()
