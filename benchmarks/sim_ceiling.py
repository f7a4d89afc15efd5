"""Simulator-only SPS of an env pool: the ceiling no trainer on the same env processes can beat.

The same env worker processes the trainer starts (`make_env_pool` on the same factory and
env count) are stepped with random actions from the action space, each env again as soon as
its previous step returns (no policy, no barrier, nothing learned). After `warmup` steps per
env (first renders, caches), `steps` steps per env are timed; SPS = steps taken / wall time.

Used by benchmarks/systems_real.py (the "sim-only" column); import `sim_only_sps` for other
ceilings. Light imports only: env workers are spawned and re-import their main module.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

POLL_TIMEOUT_S = 300.0
"""Longest wait for any env to finish a step before the measurement gives up."""


def sim_only_sps(
    factory,
    num_envs: int,
    steps: int,
    seed: int,
    warmup: int = 8,
    serial: bool = False,
    envs_per_worker: int = 1,
) -> float:
    """Env steps per second of `num_envs` envs built by `factory` (`envs_per_worker` per
    process) under random actions, over `steps` steps per env after `warmup` steps per env
    (start-up and resets excluded)."""
    from rearrange.runtime.env_worker import env_seeds, make_env_pool

    if num_envs < 1 or steps < 1 or warmup < 0:
        raise ValueError(
            f"sim_only_sps: need num_envs >= 1, steps >= 1, warmup >= 0; "
            f"got {num_envs}, {steps}, {warmup}"
        )
    seeds = env_seeds(seed, 0, num_envs)
    pool = make_env_pool(factory, num_envs, seeds, serial, envs_per_worker=envs_per_worker)
    try:
        pool.action_space.seed(seed)
        ready = step_pool(pool, [], num_envs, count_first=True)  # every env's reset
        ready = step_pool(pool, ready, num_envs * warmup)
        start = time.perf_counter()
        step_pool(pool, ready, num_envs * steps)
        return num_envs * steps / (time.perf_counter() - start)
    finally:
        pool.close()


def step_pool(pool, ready: Sequence[int], total: int, count_first: bool = False) -> list[int]:
    """Step the `ready` envs with random actions, and every env again as soon as it returns,
    until `total` results have come back; returns the envs that are ready at the end.

    With `count_first`, the results already pending in the pool (its envs' resets) count
    towards `total` and nothing is stepped: it collects the pool's start-up."""
    queue, issued, returned = list(ready), 0, 0
    while returned < total:
        if not count_first:  # one step() per round: a worker hosting k envs gets one message
            batch = queue[: max(0, total - issued)]
            del queue[: len(batch)]
            for i in batch:
                pool.buffers.actions[i] = pool.action_space.sample()
            if batch:
                pool.step(batch)
            issued += len(batch)
        results = pool.poll(POLL_TIMEOUT_S, pool.num_envs)
        if not results:
            raise TimeoutError(
                f"sim-only: no env finished a step in {POLL_TIMEOUT_S:.0f} s "
                f"({returned}/{total} steps done)"
            )
        returned += len(results)
        queue.extend(r.env_id for r in results)
    return queue
