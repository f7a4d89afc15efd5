"""Inference worker: dynamic batching of env requests and acting with the policy.

Between rollouts the main process is the learner; during collection it is this inference
worker (VER Appendix A.1: no second CUDA context). Batching rule (VER §2.1, reference impl.):
run the policy once at least `min_batch` requests are ready or once the oldest ready request
has waited half the average inference time (habitat-baselines' `min_wait_time`, a window of
the last 128 inference steps), on at most `max_batch` requests, lagging environments (fewest
steps collected this rollout, then in the run) first, so slow envs are not starved further.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from rearrange.runtime.shared_memory import SharedBuffers
from rearrange.ver_backend.graph_acting import ActingStep
from rearrange.ver_backend.host_cost import HostCost
from rearrange.ver_backend.numpy_acting import NumpyActingStep
from rearrange.ver_backend.rollout_storage import RolloutStorage

INFERENCE_TIME_WINDOW = 128
"""Inference steps averaged for the batching wait (habitat-baselines: 128)."""
DEFAULT_INFERENCE_S = 0.02
"""Average inference time assumed before any was measured (wait 10 ms, as the reference's
initial `min_wait_time`)."""


def lagging_key(storage: RolloutStorage):
    """Sort key of an env id: fewest steps this rollout, then fewest in the run, then index."""
    this_rollout, total = storage.steps_this_rollout, storage.total_collected
    return lambda e: (int(this_rollout[e]), int(total[e]), int(e))


def lagging_order(storage: RolloutStorage, env_ids: Sequence[int]) -> np.ndarray:
    """Positions of `env_ids` sorted by `lagging_key` (vectorised)."""
    ids = np.asarray(env_ids, np.int64)
    return np.lexsort((ids, storage.total_collected[ids], storage.steps_this_rollout[ids]))


@dataclass
class DynamicBatcher:
    """When to run inference and on which requests (pure logic, unit-testable)."""

    min_batch: int
    max_batch: int
    lockstep: bool = False  # DD-PPO: wait for every active env

    def should_infer(
        self, num_ready: int, num_busy: int, waited_s: float, avg_inference_s: float
    ) -> bool:
        """`num_busy`: envs still simulating (could join the batch by waiting);
        `avg_inference_s`: average duration of an inference step."""
        if num_ready == 0:
            return False
        if self.lockstep or num_busy == 0:
            return num_busy == 0
        if num_ready >= self.min_batch:
            return True
        return waited_s >= 0.5 * avg_inference_s

    def select(self, ready: Sequence[int], key) -> list[int]:
        """Up to `max_batch` of `ready` (in arrival order), lagging envs first: `key(env)`
        (see `lagging_key`) orders them, ties keep arrival order."""
        limit = len(ready) if self.lockstep else self.max_batch
        order = sorted(range(len(ready)), key=lambda k: (key(ready[k]), k))
        return [ready[k] for k in order[:limit]]

    def select_lagging(self, ready: Sequence[int], storage: RolloutStorage) -> list[int]:
        """`select` with `lagging_key(storage)`, vectorised (the collector's hot path)."""
        limit = len(ready) if self.lockstep else self.max_batch
        order = lagging_order(storage, ready)[:limit]
        return [ready[k] for k in order.tolist()]


class InferenceWorker:
    """Runs the policy on a batch of envs, records the steps and returns the actions."""

    def __init__(
        self,
        policy: nn.Module,
        storage: RolloutStorage,
        buffers: SharedBuffers,
        acting=None,
    ):
        """`acting(obs, hidden, prev_action, not_done)` runs the policy's act step (default
        `policy.act`; the trainer passes a `graph_acting.ActingStep`, CUDA graphs on GPU, or
        a `numpy_acting.NumpyActingStep` on CPU). An `acting` with a `refresh()` method holds
        a copy of the weights: it is refreshed before the first act of each policy version."""
        self.policy, self.storage, self.buffers = policy, storage, buffers
        self.acting = acting or policy.act
        self._refresh = getattr(acting, "refresh", None)
        self._acting_version: int | None = None  # policy version the acting copy holds
        self.device = storage.device
        self.batch_sizes: list[int] = []
        self.policy_version = 0
        self.inference_times: deque[float] = deque(maxlen=INFERENCE_TIME_WINDOW)
        self.cost: HostCost | None = None

    @property
    def avg_inference_s(self) -> float:
        """Mean duration of the recent inference steps (`act` calls)."""
        if not self.inference_times:
            return DEFAULT_INFERENCE_S
        return sum(self.inference_times) / len(self.inference_times)

    def batch_obs(self, env_ids: Sequence[int], final: bool = False) -> dict[str, torch.Tensor]:
        ids = np.asarray(env_ids, np.int64)
        source = self.buffers.final_obs if final else self.buffers.obs
        return {k: torch.from_numpy(v[ids]).to(self.device) for k, v in source.items()}

    def _grad_off(self):
        """No autograd while acting: inference mode on CPU (a quarter less per-op overhead
        for a small policy than no_grad), no_grad on a GPU, whose CUDA graphs keep static
        buffers across calls."""
        return torch.inference_mode() if self.device.type == "cpu" else torch.no_grad()

    def act(self, env_ids: Sequence[int]) -> None:
        """Act on the envs' current observations; writes actions into shared memory."""
        with self._grad_off():
            self._act(env_ids)

    def _refresh_acting(self) -> None:
        """Renew the acting step's copy of the weights once per policy version."""
        if self._refresh is not None and self._acting_version != self.policy_version:
            self._refresh()
            self._acting_version = self.policy_version

    def _act(self, env_ids: Sequence[int]) -> None:
        start = time.perf_counter()
        self._refresh_acting()
        cost = self.cost
        batch = self.storage.stage(env_ids, self.buffers.obs_rows)
        t = cost.add("stage", start) if cost else 0.0
        value, action, log_prob, hidden_out = self.acting(
            batch.obs, batch.hidden, batch.prev_action, batch.not_done
        )
        if cost:
            if cost.synchronize and self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
            t = cost.add("policy", t)
        self.storage.commit(batch, value, action, log_prob, hidden_out, self.policy_version)
        t = cost.add("commit", t) if cost else 0.0
        self.buffers.actions[batch.env_ids] = action.cpu().numpy()
        if cost:
            cost.add("actions_d2h", t)
        self.batch_sizes.append(len(batch.env_ids))
        self.inference_times.append(time.perf_counter() - start)

    def values(self, env_ids: Sequence[int]) -> dict[int, float]:
        """V of the envs' current observations (bootstrap for envs without a pending step)."""
        return self._values_of(env_ids, final=False)

    def final_values(self, env_ids: Sequence[int]) -> dict[int, float]:
        """V(final observation) of envs whose in-flight step just ended their episode by a
        time limit: the recurrent state and previous action are those after that step, i.e.
        the ones the policy would have continued the episode with."""
        return self._values_of(env_ids, final=True)

    def _values_of(self, env_ids: Sequence[int], final: bool) -> dict[int, float]:
        """{env: V} of the envs' current (`final`: final) observations; a final observation
        continues its episode (not_done True)."""
        if not env_ids:
            return {}
        with self._grad_off():
            obs = self.batch_obs(env_ids, final=final)
            hidden, prev_action, not_done = self.storage.policy_inputs(env_ids)
            if final:
                not_done = torch.ones(len(env_ids), dtype=torch.bool, device=self.device)
            value = self._value(obs, hidden, prev_action, not_done)
            return {e: float(v) for e, v in zip(env_ids, value.view(-1).cpu())}

    def _value(self, obs, hidden, prev_action, not_done) -> torch.Tensor:
        """V through the acting step when it is an `ActingStep` (on CUDA a graph replay: the
        eager forward there costs ~5x the replay, and a time-limit end needs one per poll) or
        a `NumpyActingStep` (its mean action, no noise drawn), else the policy's value head
        alone. The value does not depend on the action noise."""
        if isinstance(self.acting, ActingStep):
            return self.acting(obs, hidden, prev_action, not_done)[0]
        if isinstance(self.acting, NumpyActingStep):
            self._refresh_acting()
            return self.acting(obs, hidden, prev_action, not_done, deterministic=True)[0]
        return self.policy.get_value(obs, hidden, prev_action, not_done)


def now() -> float:
    return time.perf_counter()
