"""Experience collection for the three systems compared in the VER paper.

- `ver`: collect T·N steps in total, from whichever envs deliver them (VER §2.2). The
  rollout ends at the T·N-th completed step; envs still simulating keep their in-flight
  action, which the next rollout collects, while envs that were waiting for inference act on
  their observation with the new weights after the update (reference implementation). When
  more results are ready than the rollout still needs, lagging envs' results are taken first.
- `nover`: the same asynchronous collection, but exactly T steps per env; an env that has its
  T steps waits (parked) until the next rollout.
- `ddppo`: all envs stepped in lock-step (one batch per step), T steps each; with several
  ranks, stragglers are preempted once `ddppo_sync_fraction` of the ranks finished and every
  env has ≥ T/4 steps (DD-PPO §3).
- `collect_only` (benchmark upper bound) is `ver` with the learning phase skipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rearrange.runtime.env_worker import StepResult, stuck_error
from rearrange.ver_backend.distributed import DistContext
from rearrange.ver_backend.host_cost import HostCost
from rearrange.ver_backend.inference import DynamicBatcher, InferenceWorker, lagging_key, now
from rearrange.ver_backend.preemption import PreemptionDecider
from rearrange.ver_backend.rollout_storage import RolloutStorage

SYSTEMS = ("ver", "nover", "ddppo", "collect_only")
WATCHDOG_TICK_S = 0.5


@dataclass
class CollectStats:
    steps: int = 0
    seconds: float = 0.0
    episodes: list[dict[str, Any]] = field(default_factory=list)
    batch_sizes: list[int] = field(default_factory=list)
    preempted: bool = False


class Collector:
    """Drives env pool + inference worker until the rollout's quota of steps is complete."""

    def __init__(
        self,
        pool,
        storage: RolloutStorage,
        inference: InferenceWorker,
        system: str,
        batcher: DynamicBatcher,
        dist_ctx: DistContext | None = None,
        decider: PreemptionDecider | None = None,
        ddppo_sync_fraction: float = 0.6,
        worker_timeout_s: float = 120.0,
    ):
        if system not in SYSTEMS:
            raise ValueError(f"unknown system {system!r}: use one of {', '.join(SYSTEMS)}")
        self.pool, self.storage, self.inference = pool, storage, inference
        self.system, self.batcher = system, batcher
        self.dist = dist_ctx or DistContext()
        self.decider = decider
        self.sync_fraction = ddppo_sync_fraction
        self.worker_timeout_s = worker_timeout_s
        self.lagging_key = lagging_key(storage)
        self.ready: list[int] = []  # fresh obs not yet acted on, arrival order
        self.ready_since = np.zeros(storage.num_envs)  # when each ready env's obs arrived
        self.busy: set[int] = set()  # action sent, result not consumed
        self.parked: set[int] = set()  # has its T steps this rollout (nover / ddppo)
        self.last_arrival = np.full(storage.num_envs, math.nan)
        self.steps_target: int | None = None  # VER multi-rank preemption S* (all ranks)
        self.cost: HostCost | None = None  # per-part timing (benchmarks), see host_cost.py

    @property
    def per_env_cap(self) -> int | None:
        return self.storage.rollout_steps if self.system in ("nover", "ddppo") else None

    # ------------------------------------------------------------------ one rollout
    def collect(self, rollout_index: int) -> CollectStats:
        stats = CollectStats()
        start = now()
        # Step times are measured between arrivals within a rollout: the gap across the
        # learning phase is not an env step time (it would bias the preemption decider's S*).
        self.last_arrival[:] = math.nan
        parked = sorted(self.parked)
        self.ready.extend(parked)
        self.ready_since[parked] = start
        self.parked.clear()
        self.inference.batch_sizes = stats.batch_sizes
        quota = self.storage.rollout_steps * self.storage.num_envs
        self._reported, self._checked_at = 0, -1
        last_progress = now()
        while self.storage.num_complete < quota:
            if self._preempt(rollout_index):
                stats.preempted = True
                break
            if self.try_infer():
                continue
            if self.poll(quota, stats):
                last_progress = now()
            elif now() - last_progress > self.worker_timeout_s:
                self._raise_stuck()
        # Envs in `ready` wait: they act with the weights after the update (only actions
        # already being simulated are carried to the next rollout).
        self._report_done(rollout_index)
        stats.steps = self.storage.num_complete
        stats.seconds = now() - start
        if self.cost is not None:
            self.cost.steps += stats.steps
        return stats

    def bootstrap_values(self):
        """[N] bootstrap values; envs without an in-flight step are evaluated now."""
        idle = np.flatnonzero(self.storage.pending < 0).tolist()
        return self.storage.bootstrap_values(self.inference.values(idle))

    # ------------------------------------------------------------------ inference side
    def batch_wait_s(self) -> float:
        """Longest wait for a fuller batch: half the average inference time (reference)."""
        return 0.5 * self.inference.avg_inference_s

    def try_infer(self) -> bool:
        """Run inference on a batch of the ready envs if the batcher says so (True: ran)."""
        if not self.ready:
            return False
        waited = now() - self.ready_since[self.ready[0]]
        if not self.batcher.should_infer(
            len(self.ready), len(self.busy), waited, self.inference.avg_inference_s
        ):
            return False
        self.infer(self.batcher.select_lagging(self.ready, self.storage))
        return True

    def infer(self, batch: list[int]) -> None:
        """Act for the envs in `batch` and send them their actions."""
        self.inference.act(batch)
        if len(batch) == len(self.ready):
            self.ready = []
        else:
            chosen = set(batch)
            self.ready = [e for e in self.ready if e not in chosen]
        self.busy.update(batch)
        t = now() if self.cost else 0.0
        self.pool.step(batch)
        if self.cost:
            self.cost.add("send", t)

    # ------------------------------------------------------------------ env side
    def poll(self, quota: int, stats: CollectStats) -> bool:
        """Take the env results that arrive within the batching wait (lagging envs first,
        at most what the rollout's quota has left); True if any arrived."""
        if self.ready and not self.batcher.lockstep:
            waited = now() - self.ready_since[self.ready[0]]
            timeout = max(0.0, self.batch_wait_s() - waited)
        else:
            timeout = WATCHDOG_TICK_S
        # The rollout's quota cut: lagging envs' results first, the rest stay in flight.
        limit = max(1, quota - self.storage.num_complete)
        cost = self.cost
        t = now() if cost else 0.0
        results = self.pool.poll(timeout, limit, self.lagging_key)
        if cost:
            cost.add("wait", t)  # blocking in the selector plus reading the replies
        if results:
            t = now() if cost else 0.0
            self._handle_all(results, stats)
            if cost:
                cost.add("complete", t)
        return bool(results)

    def _handle_all(self, results: list[StepResult], stats: CollectStats) -> None:
        """Record a poll's results: rewards and end flags into storage (one vectorised write),
        finished episodes into the stats, and each env into ready or parked."""
        t, sc, storage = now(), self.pool.buffers.scalars, self.storage
        ids = np.fromiter((r.env_id for r in results), np.int64, len(results))
        self.busy.difference_update(ids.tolist())
        if self.decider is not None:
            for e in ids[~np.isnan(self.last_arrival[ids])].tolist():
                self.decider.record_step(e, t - self.last_arrival[e])
        self.last_arrival[ids] = t
        live = ids[storage.pending[ids] >= 0]
        if live.size:
            terminated, truncated = sc["terminated"][live], sc["truncated"][live]
            cut = truncated & ~terminated  # time limit: bootstrap from V(final observation)
            final = np.zeros(live.size, np.float32)
            if cut.any():
                values = self.inference.final_values(live[cut].tolist())
                final[cut] = [values[e] for e in live[cut].tolist()]
            storage.complete_steps(live, sc["reward"][live], terminated | truncated, cut, final)
        stats.episodes.extend(r.episode for r in results if r.episode is not None)
        cap = self.per_env_cap
        if cap is None:
            self.ready.extend(ids.tolist())
            self.ready_since[ids] = t
            return
        full = storage.steps_this_rollout[ids] >= cap
        self.parked.update(ids[full].tolist())
        self.ready.extend(ids[~full].tolist())
        self.ready_since[ids[~full]] = t

    def _raise_stuck(self) -> None:
        self.pool.check_alive()
        # Every env neither ready nor parked owes a result: a step in flight, or its first
        # observation while its worker starts.
        owing = sorted(set(range(self.storage.num_envs)) - set(self.ready) - self.parked)
        raise stuck_error(self.pool, owing, self.worker_timeout_s)

    # ------------------------------------------------------------------ multi-rank
    def _preempt(self, rollout_index: int) -> bool:
        # Ask the store only when this rank made progress (once per inference batch at most).
        if not self.dist.is_distributed or self.storage.num_complete == self._checked_at:
            return False
        self._checked_at = self.storage.num_complete
        if self.system == "ddppo":
            done = self.dist.add_counter(f"done/{rollout_index}", 0)
            min_steps = int(self.storage.steps_this_rollout.min())
            enough = min_steps >= self.storage.rollout_steps // 4
            return enough and done >= self.sync_fraction * self.dist.world_size
        if self.steps_target is not None:
            delta = self.storage.num_complete - self._reported
            self._reported = self.storage.num_complete
            total = self.dist.add_counter(f"steps/{rollout_index}", delta)
            return total >= self.steps_target
        return False

    def _report_done(self, rollout_index: int) -> None:
        if self.dist.is_distributed:
            self.dist.add_counter(f"done/{rollout_index}", 1)
            self.dist.add_counter(
                f"steps/{rollout_index}", self.storage.num_complete - self._reported
            )
