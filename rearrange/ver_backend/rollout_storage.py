"""VER rollout storage: one flat buffer of (T+1)·N step slots.

A slot is allocated when the policy acts on an observation (the step becomes *pending*: its
action is in flight) and *completed* when the env's result arrives: its reward, done flag and,
for a time-limit end, the value of the episode's final observation are written back into that
slot. A rollout ends after T·N completions; each env then still has
at most one pending slot, which `start_next_rollout` moves to the front of the buffer, so the
in-flight step is collected by the next rollout (no step lost or duplicated, VER §2.2).
The learner only ever sees completed slots, in slot (= collection) order.

Where each field lives (docs/DESIGN.md §7): what the policy produces (observation rows,
actions, log-probs, values, recurrent state) stays on the policy's device and is written one
batch at a time into contiguous slots; what the envs report (reward, done, truncation) and
the bookkeeping (env, episode and step ids, policy version) are host numpy arrays written
with vectorised indexing, and reach the device once per rollout in `build_rollout`.
Observations are kept as the packed rows of `obs_rows.ObsRowLayout`, so a batch is gathered
from shared memory and copied to the device as one block.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from gymnasium import spaces
from torch import Tensor

from rearrange.runtime.obs_rows import ObsRowLayout
from rearrange.ver_backend.rollout import STEP_TENSOR_FIELDS, Rollout

_DEVICE_FIELDS = ("obs_rows", "actions", "prev_actions", "log_probs", "values", "hidden_in")
_POLICY_FIELDS = ("actions", "prev_actions", "log_probs", "values", "hidden_in", "hidden",
                  "prev_action")  # fmt: skip
_HOST_FIELDS = ("rewards", "dones", "episode_starts", "env_ids", "episode_ids", "step_ids",
                "policy_versions", "truncated", "final_values", "complete")  # fmt: skip


@dataclass
class PolicyBatch:
    """The inputs of one acting step, staged in the slots it will occupy."""

    env_ids: np.ndarray  # [B] host
    env_index: Tensor  # [B] long, on the device
    obs: dict[str, Tensor]  # per key [B, ...] views of the slots' observation rows
    hidden: Tensor  # [B, R, H] recurrent state before masking
    prev_action: Tensor  # [B, A]
    not_done: Tensor  # [B] bool: False where this observation starts an episode


class RolloutStorage:
    """Flat VER buffer plus each env's recurrent state and pending slot."""

    def __init__(
        self,
        num_envs: int,
        rollout_steps: int,
        observation_space: spaces.Dict,
        action_space: spaces.Box,
        num_recurrent_layers: int,
        hidden_size: int,
        device: torch.device | str = "cpu",
        layout: ObsRowLayout | None = None,
        staged: bool | None = None,
    ):
        """`staged`: gather a batch into a host staging block and copy it to the device in one
        go (None: on CUDA, where the block is pinned; on CPU the rows go straight into their
        slots). Tests set it on CPU to check the staging path without a GPU."""
        n, a = num_envs, int(np.prod(action_space.shape))
        self.num_envs, self.rollout_steps, self.device = n, rollout_steps, torch.device(device)
        self.capacity = (rollout_steps + 1) * n
        self.layout = layout or ObsRowLayout(observation_space)
        c, dev, f32 = self.capacity, self.device, torch.float32
        self.obs_rows = torch.zeros(c, self.layout.row_bytes, dtype=torch.uint8, device=dev)
        self.obs = self.layout.torch_views(self.obs_rows)  # per-key views of every slot
        self.actions = torch.zeros(c, a, dtype=f32, device=dev)
        self.prev_actions = torch.zeros(c, a, dtype=f32, device=dev)
        self.log_probs = torch.zeros(c, dtype=f32, device=dev)
        self.values = torch.zeros(c, dtype=f32, device=dev)
        self.hidden_in = torch.zeros(c, num_recurrent_layers, hidden_size, dtype=f32, device=dev)
        self.rewards = np.zeros(c, np.float32)
        self.dones = np.zeros(c, bool)
        self.episode_starts = np.zeros(c, bool)
        self.env_ids = np.zeros(c, np.int64)
        self.episode_ids = np.zeros(c, np.int64)
        self.step_ids = np.zeros(c, np.int64)
        self.policy_versions = np.zeros(c, np.int64)
        self.complete = np.zeros(c, bool)
        self.truncated = np.zeros(c, bool)
        self.final_values = np.zeros(c, np.float32)
        # Per-env state carried across rollouts.
        self.hidden = torch.zeros(n, num_recurrent_layers, hidden_size, dtype=f32, device=dev)
        self.prev_action = torch.zeros(n, a, dtype=f32, device=dev)
        self.not_done = np.zeros(n, bool)  # False: the next obs starts an episode
        self.pending = np.full(n, -1, np.int64)  # slot whose action is in flight, -1 if none
        self.episode_id = np.zeros(n, np.int64)
        self.next_step_id = np.zeros(n, np.int64)
        self.steps_this_rollout = np.zeros(n, np.int64)
        self.total_collected = np.zeros(n, np.int64)
        self.num_used = 0
        self.num_complete = 0
        cuda = self.device.type == "cuda"
        self._staged = cuda if staged is None else staged
        # On CPU the policy's fields are host memory too: the hot path (stage, commit) writes
        # them through NumPy views, whose small indexed copies cost a fraction of torch's.
        self._np = (
            {name: getattr(self, name).numpy() for name in _POLICY_FIELDS}
            if self.device.type == "cpu" and not self._staged
            else None
        )
        # Host staging of a batch: observation rows, then the env id and not_done as a
        # trailer, so one copy (from pinned memory on CUDA) moves a whole batch. The block is
        # reused by the next batch: safe, because `act` reads the actions back to the host
        # (a sync) before the next batch is staged.
        self._trailer = self.layout.row_bytes
        width = self.layout.row_bytes + 16
        self._staging = torch.zeros(n, width, dtype=torch.uint8, pin_memory=cuda)
        self._staging_np = self._staging.numpy()
        self._staged_ids = self._staging_np[:, self._trailer : self._trailer + 8].view(np.int64)

    # ------------------------------------------------------------------ collection
    def has_pending(self, env_id: int) -> bool:
        return self.pending[env_id] >= 0

    def policy_inputs(self, env_ids: Sequence[int]) -> tuple[Tensor, Tensor, Tensor]:
        """(hidden [B,R,H], prev_action [B,A], not_done [B]) to act on these envs' next obs."""
        ids = np.asarray(env_ids, np.int64)
        idx = torch.from_numpy(ids).to(self.device)
        not_done = torch.from_numpy(self.not_done[ids]).to(self.device)
        return self.hidden[idx], self.prev_action[idx], not_done

    def _check_free(self, ids: np.ndarray) -> None:
        busy = self.pending[ids] >= 0
        if busy.any():
            bad = ids[busy].tolist()
            raise RuntimeError(f"envs {bad} already have an in-flight step: complete it first")
        if self.num_used + len(ids) > self.capacity:
            raise RuntimeError(f"rollout buffer full ({self.capacity} slots): rollout not ended")

    def stage(self, env_ids: Sequence[int], obs_rows: np.ndarray) -> PolicyBatch:
        """Copy the envs' current observation rows (from the [N, row_bytes] shared block)
        into the next free slots and return the policy's inputs for them."""
        ids = np.asarray(env_ids, np.int64)
        self._check_free(ids)
        b, lo = len(ids), self.num_used
        rows = self.obs_rows[lo : lo + b]
        if self._staged:
            staged = self._staging_np[:b]
            np.take(obs_rows, ids, axis=0, out=staged[:, : self._trailer], mode="clip")
            self._staged_ids[:b, 0] = ids
            staged[:, self._trailer + 8] = self.not_done[ids]
            block = self._staging[:b].to(self.device, non_blocking=True, copy=True)
            rows.copy_(block[:, : self._trailer])
            env_index = block[:, self._trailer : self._trailer + 8].view(torch.int64).view(b)
            not_done = block[:, self._trailer + 8].bool()
        else:  # the slots themselves are host memory: gather straight into them
            np.take(obs_rows, ids, axis=0, out=rows.numpy(), mode="clip")
            env_index = torch.from_numpy(ids)
            not_done = torch.from_numpy(self.not_done[ids])
        obs = {k: v[lo : lo + b] for k, v in self.obs.items()}
        if self._np is not None:
            hidden = torch.from_numpy(self._np["hidden"][ids])
            prev_action = torch.from_numpy(self._np["prev_action"][ids])
            return PolicyBatch(ids, env_index, obs, hidden, prev_action, not_done)
        return PolicyBatch(
            ids, env_index, obs, self.hidden[env_index], self.prev_action[env_index], not_done
        )

    def commit(
        self,
        batch: PolicyBatch,
        values: Tensor,
        actions: Tensor,
        log_probs: Tensor,
        hidden_out: Tensor,
        policy_version: int,
    ) -> None:
        """Record the policy's output for a staged batch: its slots become pending."""
        ids, e = batch.env_ids, batch.env_index
        b, lo = len(ids), self.num_used
        hi = lo + b
        if self._np is not None:
            self._commit_host(batch, values, actions, log_probs, hidden_out, lo, hi)
        else:
            keep = batch.not_done.to(torch.float32)
            self.hidden_in[lo:hi] = batch.hidden * keep.view(-1, 1, 1)
            self.prev_actions[lo:hi] = batch.prev_action * keep.view(-1, 1)
            self.actions[lo:hi] = actions
            self.log_probs[lo:hi] = log_probs.view(-1)
            self.values[lo:hi] = values.view(-1)
            self.hidden[e] = hidden_out.to(torch.float32)
            self.prev_action[e] = self.actions[lo:hi]
        self.episode_starts[lo:hi] = ~self.not_done[ids]
        self.env_ids[lo:hi] = ids
        self.episode_ids[lo:hi] = self.episode_id[ids]
        self.step_ids[lo:hi] = self.next_step_id[ids]
        self.policy_versions[lo:hi] = policy_version
        for name in ("complete", "rewards", "dones", "truncated", "final_values"):
            getattr(self, name)[lo:hi] = 0
        self.not_done[ids] = True
        self.pending[ids] = np.arange(lo, hi)
        self.next_step_id[ids] += 1
        self.num_used = hi

    def _commit_host(self, batch, values, actions, log_probs, hidden_out, lo: int, hi: int):
        """commit's policy-field writes on CPU, through the NumPy views (same values)."""
        f, ids = self._np, batch.env_ids
        hidden, prev = batch.hidden.numpy(), batch.prev_action.numpy()
        not_done = self.not_done[ids]
        if not_done.all():  # no episode starts here: nothing to zero
            f["hidden_in"][lo:hi] = hidden
            f["prev_actions"][lo:hi] = prev
        else:
            keep = not_done.astype(np.float32)
            np.multiply(hidden, keep[:, None, None], out=f["hidden_in"][lo:hi])
            np.multiply(prev, keep[:, None], out=f["prev_actions"][lo:hi])
        f["actions"][lo:hi] = actions.detach().numpy()
        f["log_probs"][lo:hi] = log_probs.detach().numpy().reshape(-1)
        f["values"][lo:hi] = values.detach().numpy().reshape(-1)
        f["hidden"][ids] = hidden_out.detach().numpy()
        f["prev_action"][ids] = f["actions"][lo:hi]

    def insert(
        self,
        env_ids: Sequence[int],
        obs: Mapping[str, Tensor],
        values: Tensor,
        actions: Tensor,
        log_probs: Tensor,
        hidden_out: Tensor,
        policy_version: int,
    ) -> None:
        """Allocate pending slots for the policy's output on `env_ids`' observations given
        as a dict of [B, ...] tensors (tests and tools; collection uses stage/commit)."""
        ids = np.asarray(env_ids, np.int64)
        packed = self.layout.pack({k: np.asarray(obs[k].cpu()) for k in self.layout.fields})
        rows = np.zeros((self.num_envs, self.layout.row_bytes), np.uint8)
        rows[ids] = packed
        batch = self.stage(ids, rows)
        self.commit(batch, values, actions, log_probs, hidden_out, policy_version)

    def complete_steps(
        self,
        env_ids: np.ndarray,
        rewards: np.ndarray,
        dones: np.ndarray,
        truncated: np.ndarray,
        final_values: np.ndarray,
    ) -> None:
        """The envs' in-flight steps finished: write rewards and end flags into their slots.

        `truncated`: the episode ended by a time limit (not terminated); `final_values` is
        V(final observation), which the return of such a step bootstraps from."""
        ids = np.asarray(env_ids, np.int64)
        slots = self.pending[ids]
        if (slots < 0).any():
            bad = ids[slots < 0].tolist()
            raise RuntimeError(f"envs {bad} have no in-flight step to complete")
        truncated = np.asarray(truncated, bool)
        dones = np.asarray(dones, bool)
        if (truncated & ~dones).any():
            bad = ids[truncated & ~dones].tolist()
            raise ValueError(f"envs {bad}: a truncated step ends its episode: pass done=True")
        self.rewards[slots] = rewards
        self.dones[slots] = dones
        self.truncated[slots] = truncated
        self.final_values[slots] = np.where(truncated, final_values, 0.0)
        self.complete[slots] = True
        self.pending[ids] = -1
        self.num_complete += len(ids)
        self.steps_this_rollout[ids] += 1
        self.total_collected[ids] += 1
        ended = ids[dones]
        self.not_done[ended] = False
        self.episode_id[ended] += 1

    def complete_step(
        self,
        env_id: int,
        reward: float,
        done: bool,
        truncated: bool = False,
        final_value: float = 0.0,
    ) -> None:
        """`complete_steps` for one env."""
        one = np.array([env_id], np.int64)
        self.complete_steps(one, [reward], [done], [truncated], [final_value])

    # ------------------------------------------------------------------ hand-off
    def completed_indices(self) -> np.ndarray:
        return np.flatnonzero(self.complete[: self.num_used])

    def bootstrap_values(self, values_without_pending: dict[int, float] | None = None) -> Tensor:
        """[N]: value of each env's pending step (or the given value for envs without one);
        0 where the env's last completed step ended its episode."""
        given = values_without_pending or {}
        out = np.zeros(self.num_envs, np.float32)
        for e, value in given.items():
            if self.pending[e] < 0 and self.not_done[e]:
                out[e] = value
        pending = np.flatnonzero(self.pending >= 0)
        slots = self.pending[pending]
        live = pending[~self.episode_starts[slots]]
        result = torch.from_numpy(out).to(self.device)
        if live.size:
            live_slots = torch.from_numpy(self.pending[live]).to(self.device)
            result[torch.from_numpy(live).to(self.device)] = self.values[live_slots]
        return result

    def build_rollout(self, bootstrap_values: Tensor, stale: Rollout | None = None) -> Rollout:
        """The completed steps as a contract §6 Rollout (copies; the buffer can be reused).

        `stale` (preemption fill) is a set of older steps of the same envs, placed first:
        they come right before this rollout's steps in each env's time line."""
        idx_np = self.completed_indices()
        idx = torch.from_numpy(idx_np).to(self.device)
        rows = self.obs_rows.index_select(0, idx)
        obs = {k: v.contiguous() for k, v in self.layout.torch_views(rows).items()}
        fields = {}
        for name in STEP_TENSOR_FIELDS:
            value = getattr(self, name)
            if isinstance(value, np.ndarray):
                fields[name] = torch.from_numpy(value[idx_np]).to(self.device)
            else:
                fields[name] = value.index_select(0, idx)
        rollout = Rollout(
            obs=obs,
            **fields,
            bootstrap_values=bootstrap_values,
            is_stale=torch.zeros(idx.numel(), dtype=torch.bool, device=self.device),
        )
        return rollout if stale is None else concat_rollouts(stale, rollout)

    def completed_step_ids(self) -> tuple[Tensor, Tensor, Tensor]:
        """(env_ids, episode_ids, step_ids) of the completed steps (CPU), for checks and tests."""
        idx = self.completed_indices()
        ids = (self.env_ids[idx], self.episode_ids[idx], self.step_ids[idx])
        return tuple(torch.from_numpy(a) for a in ids)

    def start_next_rollout(self) -> None:
        """Move every pending (in-flight) slot to the front and forget completed ones."""
        envs = np.flatnonzero(self.pending >= 0)
        src_np = self.pending[envs]
        src = torch.from_numpy(src_np).to(self.device)
        k = len(envs)
        for name in _DEVICE_FIELDS:
            tensor = getattr(self, name)
            tensor[:k] = tensor.index_select(0, src)
        for name in _HOST_FIELDS:
            array = getattr(self, name)
            array[:k] = array[src_np]
        self.pending[envs] = np.arange(k)
        self.num_used = k
        self.num_complete = 0
        self.steps_this_rollout[:] = 0


def concat_rollouts(first: Rollout, second: Rollout) -> Rollout:
    """Steps of `first` (marked stale) followed by `second`; `second`'s bootstrap values."""

    def cat(a: Tensor, b: Tensor) -> Tensor:
        return torch.cat([a, b.to(a.device)], 0)

    return Rollout(
        obs={k: cat(first.obs[k], second.obs[k]) for k in second.obs},
        **{name: cat(getattr(first, name), getattr(second, name)) for name in STEP_TENSOR_FIELDS},
        bootstrap_values=second.bootstrap_values,
        is_stale=cat(torch.ones_like(first.is_stale), second.is_stale),
    )


def stale_fill(previous: Rollout | None, num_steps: int) -> Rollout | None:
    """The last `num_steps` fresh steps of `previous` (per env, a suffix of its time line, so
    GAE over them stays exact), or None if there is nothing to fill."""
    if previous is None or num_steps <= 0:
        return None
    fresh = torch.nonzero(~previous.is_stale).view(-1)
    take = fresh[-num_steps:]
    if take.numel() == 0:
        return None
    filled = previous.select_steps(take)
    filled.is_stale = torch.ones(take.numel(), dtype=torch.bool, device=take.device)
    return filled
