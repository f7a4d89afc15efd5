"""Environment workers: one process per environment, talking through shared memory.

Worker i waits for a STEP command on its pipe, reads its action from the shared `actions`
array, steps the env (auto-resetting at episode end), writes observation/reward/flags into
row i of the shared arrays (plus, when the episode was truncated by a time limit, its final
observation, so the learner can bootstrap from it) and answers STEP_DONE (with the finished
episode's summary, if any). The inference worker waits on all pipes plus every process
sentinel at once (one epoll selector registered at start), so a dead worker is noticed
immediately instead of hanging.

The pipes carry one-byte messages (`send_bytes`, no pickling) on the hot path: a step costs
the main process one small write and one small read per env; only an episode's summary or a
worker's error is pickled.

`SerialEnvPool` runs the same `EnvRunner` in-process (debugging, fast tests).
"""

from __future__ import annotations

import contextlib
import enum
import faulthandler
import math
import multiprocessing as mp
import os
import pickle
import selectors
import signal
import sys
import time
import traceback
import warnings
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import gymnasium as gym
import numpy as np

from rearrange.runtime.run import TrainProcessError
from rearrange.runtime.shared_memory import (
    SharedBuffers,
    attach_buffers,
    create_buffers,
)

EnvFactory = Callable[[int], gym.Env]
PollPriority = Callable[[int], Any]
"""Sort key of an env id: results with the smallest key are taken first (quota cuts)."""
# Env workers render with EGL/llvmpipe and run numpy/torch: one thread each, or N workers
# oversubscribe the cores.
SINGLE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "LP_NUM_THREADS": "1"}


class WorkerCmd(bytes, enum.Enum):
    STEP = b"S"
    CLOSE = b"C"


class WorkerMsg(bytes, enum.Enum):
    STEP_DONE = b"D"  # new observation in shared memory, no episode ended
    EPISODE = b"P"  # the same, followed by the pickled finished-episode summary
    ERROR = b"E"  # followed by the pickled (one-line exception, traceback)


_STEP = WorkerCmd.STEP.value
_DONE = WorkerMsg.STEP_DONE.value


def encode_reply(episode: dict[str, Any] | None) -> bytes:
    """A worker's answer to STEP: one byte, plus the episode summary when one ended."""
    if episode is None:
        return _DONE
    return WorkerMsg.EPISODE.value + pickle.dumps(episode, protocol=pickle.HIGHEST_PROTOCOL)


class EnvWorkerError(TrainProcessError):
    """An env worker died or raised; the message names the env index and the cause.

    The worker's traceback (if it sent one) is kept in `worker_traceback`, not in the message."""

    process = "env worker"


@dataclass
class StepResult:
    """Env `env_id` has a new observation in the buffers (its previous step is done)."""

    env_id: int
    episode: dict[str, Any] | None = None


@dataclass
class TaskEnvFactory:
    """Picklable factory for the skill tasks: env i gets seed `seed + i`."""

    task: str
    config: Any
    split: str = "train"
    seed: int = 0
    render_device: str | None = None
    """Torch device of the trainer ('cuda:1'): with MUJOCO_GL=egl the env renders on that GPU
    (rearrange/sim/egl_device.py); None or 'cpu': MuJoCo's default device."""
    env_class: type | None = None
    """The task's env class (set from the task registry): pickled by reference, so a spawned
    worker imports the module that defines it, and a skill that module registers from
    outside the package (docs/ADDING_A_SKILL.md) is known there too."""

    def __post_init__(self) -> None:
        if self.env_class is None:
            from rearrange.tasks import TASK_REGISTRY

            self.env_class = TASK_REGISTRY.get(self.task)

    def __call__(self, index: int) -> gym.Env:
        from rearrange.sim.egl_device import select_egl_device
        from rearrange.tasks import make_env

        select_egl_device(self.render_device)  # before the env's first renderer
        return make_env(self.task, self.config, self.split, self.seed + index)


class EnvRunner:
    """Steps one env and moves its data in and out of row `index` of the buffers."""

    def __init__(self, index: int, env: gym.Env, buffers: SharedBuffers):
        self.index, self.env, self.buffers = index, env, buffers
        self._return, self._length, self._terms = 0.0, 0, {}

    def reset(self, seed: int | None) -> None:
        obs, _ = self.env.reset(seed=seed)
        self.buffers.write_obs(self.index, obs)
        for name in ("reward", "terminated", "truncated", "success"):
            self.buffers.scalars[name][self.index] = 0

    def step(self) -> dict[str, Any] | None:
        """One env step with the action in shared memory; returns the episode summary at its end."""
        i, buf = self.index, self.buffers
        obs, reward, terminated, truncated, info = self.env.step(buf.actions[i].copy())
        reward = float(reward)
        if not math.isfinite(reward):
            warnings.warn(f"env {i}: non-finite reward {reward} replaced by -1", stacklevel=1)
            reward = -1.0
        self._accumulate(reward, info)
        episode = None
        if terminated or truncated:
            episode = self._episode_summary(info)
            if truncated and not terminated:  # the return continues: keep s_final for V(s_final)
                buf.write_final_obs(i, obs)
            obs, _ = self.env.reset()
        buf.write_obs(i, obs)
        sc = buf.scalars
        sc["reward"][i], sc["terminated"][i], sc["truncated"][i] = reward, terminated, truncated
        sc["success"][i] = bool(info.get("success", False))
        sc["steps_simulated"][i] += 1
        return episode

    def _accumulate(self, reward: float, info: dict) -> None:
        self._return += reward
        self._length += 1
        for key, value in info.get("reward_terms", {}).items():
            self._terms[key] = self._terms.get(key, 0.0) + float(value)

    def _episode_summary(self, info: dict) -> dict[str, Any]:
        summary = {
            "success": float(bool(info.get("success", False))),
            "return": self._return,
            "length": self._length,
            "reward_terms": dict(self._terms),
        }
        self._return, self._length, self._terms = 0.0, 0, {}
        return summary


def _set_low_priority(nice: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        os.nice(nice)


def worker_main(
    index: int, factory: EnvFactory, specs, layout, conn: Connection, seed: int, nice: int
):
    """Entry point of env worker `index` (runs in its own process)."""
    # Ctrl-C goes to the whole process group: let the main process shut workers down cleanly.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGUSR1"):  # the pool asks a stuck worker for its stack (dump_stacks)
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    _set_low_priority(nice)
    buffers, env = None, None
    try:
        buffers = attach_buffers(specs, layout)
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(1)
        env = factory(index)
        runner = EnvRunner(index, env, buffers)
        runner.reset(seed)
        conn.send_bytes(_DONE)
        while conn.recv_bytes() == _STEP:
            conn.send_bytes(encode_reply(runner.step()))
    except (EOFError, BrokenPipeError):
        pass  # the main process went away
    except BaseException as exc:  # noqa: BLE001 - reported to the main process, then exit
        with contextlib.suppress(Exception):
            error = (f"{type(exc).__name__}: {exc}", traceback.format_exc())
            conn.send_bytes(WorkerMsg.ERROR.value + pickle.dumps(error))
    finally:
        if env is not None:
            with contextlib.suppress(Exception):
                env.close()
        if buffers is not None:
            buffers.close()


@contextlib.contextmanager
def _child_environment(overrides: dict[str, str]):
    """Spawned children inherit os.environ at start: set thread limits only for them."""
    saved = {k: os.environ.get(k) for k in overrides}
    os.environ.update(overrides)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class ProcessEnvPool:
    """N env worker processes (spawn context: safe with EGL, CUDA and threads)."""

    def __init__(
        self,
        factory: EnvFactory,
        num_envs: int,
        seeds: Sequence[int],
        probe_env: gym.Env,
        nice: int = 5,
        start_method: str = "spawn",
    ):
        self.num_envs = num_envs
        self.observation_space = probe_env.observation_space
        self.action_space = probe_env.action_space
        self.buffers = create_buffers(probe_env.observation_space, probe_env.action_space, num_envs)
        ctx = mp.get_context(start_method)
        self._conns: list[Connection] = []
        self._procs = []
        with _child_environment(SINGLE_THREAD_ENV):
            for i in range(num_envs):
                parent, child = ctx.Pipe(duplex=True)
                proc = ctx.Process(
                    target=worker_main,
                    args=(
                        i,
                        factory,
                        self.buffers.specs,
                        self.buffers.layout,
                        child,
                        int(seeds[i]),
                        nice,
                    ),
                    daemon=True,
                    name=f"env-worker-{i}",
                )
                proc.start()
                child.close()
                self._conns.append(parent)
                self._procs.append(proc)
        # One selector for the pool's life: registering 2N fds per wait would cost more than
        # the wait itself at zero-cost envs. key.data: (env index, is the process sentinel).
        self._selector = selectors.DefaultSelector()
        for i, (conn, proc) in enumerate(zip(self._conns, self._procs)):
            self._selector.register(conn.fileno(), selectors.EVENT_READ, (i, False))
            self._selector.register(proc.sentinel, selectors.EVENT_READ, (i, True))

    def step(self, env_ids: Sequence[int]) -> None:
        for i in env_ids:
            try:
                self._conns[i].send_bytes(_STEP)
            except (BrokenPipeError, OSError):
                self._raise_dead(i)

    def poll(
        self, timeout: float, limit: int, priority: PollPriority | None = None
    ) -> list[StepResult]:
        """Results that are ready (at most `limit`), waiting up to `timeout` s for the first.

        When more than `limit` are ready, those with the smallest `priority(env_id)` are
        taken (env index order without one); the others stay unread in their pipes."""
        envs = []
        for key, _ in self._selector.select(max(0.0, timeout)):
            i, is_sentinel = key.data
            if not is_sentinel:
                envs.append(i)
            elif not self._conns[i].poll():  # the worker exited and left no message
                self._raise_dead(i)
        envs.sort(key=priority)
        return [self._receive(i) for i in envs[:limit]]

    def _receive(self, i: int) -> StepResult:
        try:
            message = self._conns[i].recv_bytes()
        except (EOFError, OSError):
            self._raise_dead(i)
        if message == _DONE:
            return StepResult(i)
        kind, payload = message[:1], pickle.loads(message[1:])
        if kind == WorkerMsg.ERROR.value:
            raise EnvWorkerError(
                f"env {i} raised {payload[0]}\n--- worker traceback ---\n{payload[1]}"
            )
        return StepResult(i, payload)

    def _raise_dead(self, i: int):
        proc = self._procs[i]
        proc.join(timeout=1.0)
        raise EnvWorkerError(f"env {i} worker process died (exit code {proc.exitcode})")

    def check_alive(self) -> None:
        for i, proc in enumerate(self._procs):
            if not proc.is_alive():
                if self._conns[i].poll():
                    self._receive(i)  # raises with the worker's exception if it sent one
                self._raise_dead(i)

    def dump_stacks(self, ids, wait_s: float = 0.5) -> bool:
        """Have workers `ids` print their Python stacks to stderr (a stuck one shows where it
        is); True if asked (POSIX only)."""
        if not hasattr(signal, "SIGUSR1"):
            return False
        for i in ids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._procs[i].pid, signal.SIGUSR1)
        time.sleep(wait_s)
        return True

    def kill_worker(self, i: int) -> None:
        """Hard-kill one worker (tests of the dead-worker path)."""
        os.kill(self._procs[i].pid, signal.SIGKILL)

    def close(self) -> None:
        for conn in self._conns:
            with contextlib.suppress(Exception):
                conn.send_bytes(WorkerCmd.CLOSE.value)
        deadline = time.monotonic() + 5.0
        for proc in self._procs:
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=1.0)
        self._selector.close()
        for conn in self._conns:
            conn.close()
        self.buffers.close()


def stuck_error(pool, env_ids: Sequence[int], timeout_s: float) -> EnvWorkerError:
    """The error for envs `env_ids` that returned no step for `timeout_s`: their workers'
    stacks first go to stderr (`dump_stacks`), so the message can point at them."""
    stacks = "their Python stacks are on stderr above; " if pool.dump_stacks(env_ids) else ""
    return EnvWorkerError(
        f"envs {sorted(env_ids)} returned no step for {timeout_s:.0f} s ({stacks}"
        "a worker alive but stuck, or starved of CPU by other processes: check the env's "
        "step(), or raise run.worker_timeout_s and continue with --resume)"
    )


class SerialEnvPool:
    """The same interface, envs stepped in-process when `step` is called."""

    def __init__(
        self, factory: EnvFactory, num_envs: int, seeds: Sequence[int], probe_env: gym.Env
    ):
        self.num_envs = num_envs
        self.observation_space = probe_env.observation_space
        self.action_space = probe_env.action_space
        self.buffers = create_buffers(
            probe_env.observation_space, probe_env.action_space, num_envs, shared=False
        )
        self._runners = [EnvRunner(i, factory(i), self.buffers) for i in range(num_envs)]
        self._results: deque[StepResult] = deque()
        for i, runner in enumerate(self._runners):
            self._guard(i, lambda r=runner, s=int(seeds[i]): r.reset(s))
            self._results.append(StepResult(i))

    def _guard(self, i: int, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as exc:
            raise EnvWorkerError(
                f"env {i} raised {type(exc).__name__}: {exc}", traceback.format_exc()
            ) from exc

    def step(self, env_ids: Sequence[int]) -> None:
        for i in env_ids:
            self._results.append(StepResult(i, self._guard(i, self._runners[i].step)))

    def dump_stacks(self, ids, wait_s: float = 0.0) -> bool:
        """No worker processes: an env stuck here is the caller's own stack."""
        return False

    def poll(
        self, timeout: float, limit: int, priority: PollPriority | None = None
    ) -> list[StepResult]:
        if priority is None or len(self._results) <= limit:
            n = min(limit, len(self._results))
            return [self._results.popleft() for _ in range(n)]
        order = sorted(range(len(self._results)), key=lambda k: priority(self._results[k].env_id))
        take = set(order[:limit])
        results = [r for k, r in enumerate(self._results) if k in take]
        self._results = deque(r for k, r in enumerate(self._results) if k not in take)
        return sorted(results, key=lambda r: priority(r.env_id))

    def check_alive(self) -> None:
        pass

    def close(self) -> None:
        for runner in self._runners:
            with contextlib.suppress(Exception):
                runner.env.close()


def make_env_pool(
    factory: EnvFactory, num_envs: int, seeds: Sequence[int], serial: bool, nice: int = 5
) -> ProcessEnvPool | SerialEnvPool:
    """Probe one env in-process for its spaces, then start the pool."""
    probe = factory(0)
    try:
        if serial:
            return SerialEnvPool(factory, num_envs, seeds, probe)
        return ProcessEnvPool(factory, num_envs, seeds, probe, nice=nice)
    finally:
        probe.close()


def env_seeds(base_seed: int, rank: int, num_envs: int) -> np.ndarray:
    """Distinct seeds per (rank, env)."""
    return np.random.SeedSequence([base_seed, rank]).generate_state(num_envs).astype(np.int64)
