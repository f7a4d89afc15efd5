"""Lock-step collection of one DAgger round: every env steps once per step of the round.

At each step the student acts on its observation (every key of the env's row but the
teacher's label) and the executed action is, per env, the teacher's with probability β, else
the student's. The student's action is its mode (the mean), not a sample: the deployed skill
acts with the mode (`eval_skill`, `LearnedSkill(deterministic=True)`), so the states the
student visits here are the ones it meets at evaluation, which is the distribution DAgger
must label; a sample would add the learned σ's noise (σ = 1 at the start, as wide as the
action range) and fill the buffer with states the deployed student never reaches. Variety
comes from β's mix of teacher and student actions instead.

Each step is recorded with the teacher's action as its label (clipped to the action range,
what the env executes of it), whichever action was executed: DAgger's relabelling.

The student's previous-action input (the paper's policy embeds it) is, by default, its own
previous output, not the executed action (`distill.prev_action`). Deployed, the two are the
same. Here a teacher step would hand the student the teacher's action as input, and the
teacher's actions are smooth in time, so "repeat the previous action" fits the labels and the
student learns to copy (the copycat problem of behaviour cloning with action history):
measured on fixed-base pick after 90k steps with "executed", 0 of 4 val episodes alone, 4 of 4
with the teacher's action fed in as its previous action, training success 90 % at β = 0.1.

Stop veto (`distill.stop_veto`, skills with a stop action: nav). A student that calls stop
where the teacher would not ends its episode, so DAgger labels one state of each such mistake
and never the states that follow it (the goal behind the counter it stopped in front of, the
last turn to the goal's heading). With the veto, the env executes the teacher's stop value on
those steps (the rest of the action stays the student's) and the episode goes on; the label is
the teacher's, as on every step. The student's previous-action input keeps its own stop call,
as in a HAB chain, whose stop mask also ignores a stop called away from the goal.

Grip veto (`distill.grip_veto`, skills with a grip: pick, with `distill.grip_clear`). The same
for a grip the student closes where its label says open: a close beside a neighbour grasps
the neighbour and ends the pick, so DAgger labels the one state before it and the student
never learns the way past (measured: 65k steps with grip_clear labels alone left the
base-moving depth pick 7 of its 8 wrong picks, 6-47 steps in). With the veto the env
executes the teacher's open grip on those steps (the arm and base stay the student's) and the
episode goes on beside the neighbour, labelled.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from rearrange.distill.buffer import RoundStorage
from rearrange.distill.config import PREV_ACTIONS
from rearrange.distill.teacher_labels import TEACHER_KEY
from rearrange.runtime.env_worker import stuck_error


@dataclass
class RoundStats:
    steps: int = 0
    seconds: float = 0.0
    abs_diff: float = 0.0
    """Mean over steps and action dimensions of |clip(student mean) − clip(teacher action)|."""
    teacher_share: float = 0.0
    """Share of executed actions that were the teacher's."""
    beta: float = 0.0
    """Mean β over the round."""
    stop_vetoes: int = 0
    """Student stop calls the env did not execute (the teacher would not stop there)."""
    grip_vetoes: int = 0
    """Student grip closes the env did not execute (the teacher's label was open)."""
    episodes: list[dict[str, Any]] = field(default_factory=list)


class LockstepCollector:
    """Steps the pool's N envs together with the student and the DAgger mix."""

    def __init__(
        self,
        pool,
        policy: nn.Module,
        device: torch.device,
        timeout_s: float,
        prev_action: str = "student",
        stop_index: int | None = None,
        grip_index: int | None = None,
    ):
        """`prev_action`: the student's previous-action input, "student" (its own previous
        mean) or "executed" (whoever's action the env ran). `stop_index`: the stop action's
        position, to veto the student's stop calls the teacher does not make (None: off);
        `grip_index` the same for the grip's closes (None: off)."""
        if prev_action not in PREV_ACTIONS:
            raise ValueError(f"prev_action={prev_action!r}: use one of {PREV_ACTIONS}")
        self.pool, self.policy, self.device, self.timeout_s = pool, policy, device, timeout_s
        self.prev_from_student = prev_action == "student"
        self.stop_index, self.grip_index = stop_index, grip_index
        self.buffers = pool.buffers
        self.num_envs = n = pool.num_envs
        self.keys = sorted(k for k in pool.observation_space.spaces if k != TEACHER_KEY)
        self.action_dim = int(np.prod(pool.action_space.shape))
        self.hidden = policy.initial_hidden(n, device)
        self.prev = np.zeros((n, self.action_dim), np.float32)
        self.not_done = np.zeros(n, bool)  # False: the next step begins an episode

    def obs_dtypes(self) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
        """(shape, dtype) of each student key as the pool's rows hold it (depth: float16)."""
        return {k: (self.buffers.obs[k].shape[1:], self.buffers.obs[k].dtype) for k in self.keys}

    def start(self) -> None:
        """Wait for every env's first observation (the workers reset on start)."""
        self._wait(range(self.num_envs))

    def collect(
        self, storage: RoundStorage, beta: Callable[[int], float], step0: int
    ) -> RoundStats:
        """Fill `storage` with one round; β is read at each step's env-step count."""
        n, raw = self.num_envs, self.buffers.obs
        stats, t0 = RoundStats(), time.monotonic()
        diff = share = beta_sum = 0.0
        for t in range(storage.steps):
            b = beta(step0 + t * n)
            not_done = torch.from_numpy(self.not_done).to(self.device)
            hidden_in = self.hidden * not_done.view(-1, 1, 1).to(self.hidden.dtype)
            prev_in = self.prev * self.not_done[:, None]
            obs = {
                k: torch.from_numpy(np.ascontiguousarray(raw[k], np.float32)).to(self.device)
                for k in self.keys
            }
            with torch.no_grad():
                _, mean, _, hidden_out = self.policy.act(
                    obs, hidden_in, torch.from_numpy(prev_in).to(self.device), not_done,
                    deterministic=True,
                )  # fmt: skip
            student = mean.cpu().numpy().astype(np.float32)
            teacher = np.array(raw[TEACHER_KEY], np.float32)
            target = np.clip(teacher, -1.0, 1.0)
            use_teacher = np.random.random(n) < b
            executed = np.where(use_teacher[:, None], teacher, student).astype(np.float32)
            if self.stop_index is not None:
                stats.stop_vetoes += veto_stops(executed, teacher, use_teacher, self.stop_index)
            if self.grip_index is not None:
                stats.grip_vetoes += veto_grips(executed, teacher, use_teacher, self.grip_index)
            chunk_start = t % storage.chunk_len == 0
            storage.record(
                t, {k: raw[k] for k in self.keys}, prev_in, target, ~self.not_done,
                hidden_in.cpu().numpy() if chunk_start else None,
            )  # fmt: skip
            self.buffers.actions[:] = executed
            self.pool.step(range(n))
            stats.episodes += self._wait(range(n))
            scalars = self.buffers.scalars
            done = np.asarray(scalars["terminated"] | scalars["truncated"], bool)
            fed_back = student if self.prev_from_student else executed
            self.prev = np.where(done[:, None], 0.0, fed_back).astype(np.float32)
            self.not_done = ~done
            self.hidden = hidden_out
            diff += float(np.abs(np.clip(student, -1.0, 1.0) - target).mean())
            share += float(use_teacher.mean())
            beta_sum += b
        steps = storage.steps
        stats.steps, stats.seconds = steps * n, time.monotonic() - t0
        stats.abs_diff, stats.teacher_share = diff / steps, share / steps
        stats.beta = beta_sum / steps
        return stats

    def _wait(self, env_ids) -> list[dict[str, Any]]:
        """Block until every env of `env_ids` has answered; the episodes that ended."""
        pending, episodes = set(env_ids), []
        deadline = time.monotonic() + self.timeout_s
        while pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise stuck_error(self.pool, sorted(pending), self.timeout_s)
            for result in self.pool.poll(min(left, 1.0), len(pending)):
                pending.discard(result.env_id)
                if result.episode is not None:
                    episodes.append(result.episode)
        return episodes


def veto_stops(
    executed: np.ndarray, teacher: np.ndarray, use_teacher: np.ndarray, stop: int
) -> int:
    """In place: where the student's action runs and calls stop (> 0) but the teacher's does
    not, the executed stop value becomes the teacher's. Returns how many were vetoed."""
    return _veto(executed, teacher, use_teacher, stop, executed[:, stop] > 0, teacher[:, stop] <= 0)


def veto_grips(
    executed: np.ndarray, teacher: np.ndarray, use_teacher: np.ndarray, grip: int
) -> int:
    """In place: where the student's action runs and closes the grip (>= 0, a grasp) but the
    teacher's is open (< 0), the executed grip becomes the teacher's. Returns how many."""
    return _veto(executed, teacher, use_teacher, grip, executed[:, grip] >= 0, teacher[:, grip] < 0)


def _veto(executed, teacher, use_teacher, index: int, student_on, teacher_off) -> int:
    """In place: where the student's action ran with part `index` on and the teacher's has
    it off, the executed value becomes the teacher's; how many were vetoed."""
    veto = ~use_teacher & student_on & teacher_off
    executed[veto, index] = teacher[veto, index]
    return int(veto.sum())
