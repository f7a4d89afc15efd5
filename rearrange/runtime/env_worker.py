"""Environment workers: processes that host the environments, talking through shared memory.

By default each worker process hosts one env (VER's layout); `envs_per_worker` = k > 1 puts
envs [w·k, (w+1)·k) in worker w, for machines with fewer cores than envs (docs/DESIGN.md §7).
A STEP command names the worker's envs to step (one byte per env, its index in the worker).
For each, the worker reads the env's action from the shared `actions` array, steps the env
(auto-resetting at episode end), writes observation/reward/flags into the env's row of the
shared arrays (plus, when the episode was truncated by a time limit, its final observation,
so the learner can bootstrap from it), then answers STEP_DONE naming the envs stepped (with
the finished episodes' summaries, if any). The inference worker waits on all pipes plus
every process sentinel at once (one epoll selector registered at start), so a dead worker is
noticed immediately instead of hanging.

The pipes carry short byte messages (`send_bytes`, no pickling) on the hot path: a batch of
steps costs the main process one small write and one small read per worker it touches; only
episode summaries and a worker's error are pickled.

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
import struct
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

from rearrange.runtime.run import MAX_ENVS_PER_WORKER, TrainProcessError
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
_HEADER = struct.Struct("!i")
"""`multiprocessing.connection.Connection`'s frame header: the payload's length."""


def frame(payload: bytes) -> bytes:
    """`payload` framed as `Connection.send_bytes` frames it (a worker's `recv_bytes` reads
    it): the main process writes its STEP messages to the pipe's fd in one `os.write`."""
    return _HEADER.pack(len(payload)) + payload


def _read_exact(fd: int, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_frame(fd: int) -> bytes:
    """One message that `Connection.send_bytes` wrote to the other end of pipe `fd`, read with
    two `os.read` calls (Connection.recv_bytes's Python-level buffering costs ~4x that at the
    one-byte replies of a fast env; the framing is the same)."""
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size))
    return _read_exact(fd, size)


class EnvWorkerError(TrainProcessError):
    """An env worker died or raised; the message names the env index and the cause.

    The worker's traceback (if it sent one) is kept in `worker_traceback`, not in the message."""

    process = "env worker"


@dataclass
class StepResult:
    """Env `env_id` has a new observation in the buffers (its previous step is done)."""

    env_id: int
    episode: dict[str, Any] | None = None


def encode_reply(stepped: bytes, episodes: dict[int, dict[str, Any]] | None) -> bytes:
    """A worker's answer to STEP: the indices (in the worker) of the envs stepped, one byte
    each, plus the summaries of the episodes that ended ({index in the worker: summary})."""
    if not episodes:
        return _DONE + stepped
    payload = pickle.dumps((stepped, episodes), protocol=pickle.HIGHEST_PROTOCOL)
    return WorkerMsg.EPISODE.value + payload


def decode_reply(message: bytes, first_env: int) -> list[StepResult]:
    """The StepResults of a STEP_DONE or EPISODE message from the worker whose first env is
    `first_env` (ERROR messages are the caller's)."""
    if message[:1] == _DONE:
        return [StepResult(first_env + j) for j in message[1:]]
    stepped, episodes = pickle.loads(message[1:])
    return [StepResult(first_env + j, episodes.get(j)) for j in stepped]


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
    first: int,
    factory: EnvFactory,
    specs,
    layout,
    conn: Connection,
    seeds: Sequence[int],
    nice: int,
):
    """Entry point of the env worker hosting envs first, first + 1, ... (one per seed; runs
    in its own process)."""
    # Ctrl-C goes to the whole process group: let the main process shut workers down cleanly.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGUSR1"):  # the pool asks a stuck worker for its stack (dump_stacks)
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    _set_low_priority(nice)
    buffers, runners, current = None, [], first
    try:
        buffers = attach_buffers(specs, layout)
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(1)
        for j, seed in enumerate(seeds):
            current = first + j
            runners.append(EnvRunner(current, factory(current), buffers))
            runners[j].reset(seed)
        conn.send_bytes(_DONE + bytes(range(len(runners))))
        while (message := conn.recv_bytes())[:1] == _STEP:
            episodes = {}
            for j in message[1:]:
                current = first + j
                episode = runners[j].step()
                if episode is not None:
                    episodes[j] = episode
            conn.send_bytes(encode_reply(message[1:], episodes))
    except (EOFError, BrokenPipeError):
        pass  # the main process went away
    except BaseException as exc:  # noqa: BLE001 - reported to the main process, then exit
        with contextlib.suppress(Exception):
            error = (current, f"{type(exc).__name__}: {exc}", traceback.format_exc())
            conn.send_bytes(WorkerMsg.ERROR.value + pickle.dumps(error))
    finally:
        for runner in runners:
            with contextlib.suppress(Exception):
                runner.env.close()
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
    """N envs in ceil(N / envs_per_worker) worker processes (spawn context: safe with EGL,
    CUDA and threads); worker w hosts envs [w·k, (w+1)·k)."""

    def __init__(
        self,
        factory: EnvFactory,
        num_envs: int,
        seeds: Sequence[int],
        probe_env: gym.Env,
        nice: int = 5,
        start_method: str = "spawn",
        envs_per_worker: int = 1,
    ):
        if not 1 <= envs_per_worker <= MAX_ENVS_PER_WORKER:
            raise ValueError(
                f"envs_per_worker={envs_per_worker}: use 1 to {MAX_ENVS_PER_WORKER} "
                "(run.envs_per_worker)"
            )
        self.num_envs, self.envs_per_worker = num_envs, envs_per_worker
        self.observation_space = probe_env.observation_space
        self.action_space = probe_env.action_space
        self.buffers = create_buffers(probe_env.observation_space, probe_env.action_space, num_envs)
        ctx = mp.get_context(start_method)
        self._conns: list[Connection] = []
        self._procs = []
        with _child_environment(SINGLE_THREAD_ENV):
            for first in range(0, num_envs, envs_per_worker):
                parent, child = ctx.Pipe(duplex=True)
                last = min(first + envs_per_worker, num_envs)
                proc = ctx.Process(
                    target=worker_main,
                    args=(
                        first,
                        factory,
                        self.buffers.specs,
                        self.buffers.layout,
                        child,
                        [int(seed) for seed in seeds[first:last]],
                        nice,
                    ),
                    daemon=True,
                    name=f"env-worker-{first // envs_per_worker}",
                )
                proc.start()
                child.close()
                self._conns.append(parent)
                self._procs.append(proc)
        # One selector for the pool's life: registering 2W fds per wait would cost more than
        # the wait itself at zero-cost envs. key.data: (worker index, is the process sentinel).
        self._selector = selectors.DefaultSelector()
        for w, (conn, proc) in enumerate(zip(self._conns, self._procs)):
            self._selector.register(conn.fileno(), selectors.EVENT_READ, (w, False))
            self._selector.register(proc.sentinel, selectors.EVENT_READ, (w, True))
        # Results read from a worker's pipe but not yet handed out (a worker answers for
        # several envs at once; a poll hands out at most `limit`).
        self._unread: list[StepResult] = []
        # The pipes' fds, and the STEP frame of a worker hosting one env (the default).
        self._fds = [conn.fileno() for conn in self._conns]
        self._step_one = frame(_STEP + bytes([0]))

    def worker_of(self, env_id: int) -> int:
        return env_id // self.envs_per_worker

    def _envs_of(self, w: int) -> str:
        first = w * self.envs_per_worker
        last = min(first + self.envs_per_worker, self.num_envs) - 1
        return f"env {first}" if first == last else f"envs {first}-{last}"

    def step(self, env_ids: Sequence[int]) -> None:
        """Send STEP to the workers of `env_ids` (distinct env indices): one message per
        worker."""
        ids = list(env_ids)
        if len(set(ids)) != len(ids) or (ids and not 0 <= min(ids) <= max(ids) < self.num_envs):
            raise ValueError(f"step({ids}): env ids must be distinct and in [0, {self.num_envs})")
        k = self.envs_per_worker
        if k == 1:
            frames = [(i, self._step_one) for i in ids]
        else:
            messages: dict[int, bytearray] = {}
            for i in ids:
                messages.setdefault(i // k, bytearray(_STEP)).append(i % k)
            frames = [(w, frame(bytes(message))) for w, message in messages.items()]
        for w, data in frames:
            try:
                os.write(self._fds[w], data)  # < PIPE_BUF bytes: one atomic write
            except OSError:  # BrokenPipeError included
                self._raise_dead(w)

    def poll(
        self, timeout: float, limit: int, priority: PollPriority | None = None
    ) -> list[StepResult]:
        """Results that are ready (at most `limit`), waiting up to `timeout` s for the first.

        When more than `limit` are ready, those with the smallest `priority(env_id)` are
        taken (env index order without one); the others are kept for the next poll (their
        observations stay in the buffers: an env is not stepped again before it is acted on)."""
        wait = 0.0 if self._unread else max(0.0, timeout)
        for key, _ in self._selector.select(wait):
            w, is_sentinel = key.data
            if not is_sentinel:
                self._unread.extend(self._receive(w))
            elif not self._conns[w].poll():  # the worker exited and left no message
                self._raise_dead(w)
        results = self._unread
        results.sort(key=(lambda r: priority(r.env_id)) if priority else (lambda r: r.env_id))
        self._unread = results[limit:]
        return results[:limit]

    def _receive(self, w: int) -> list[StepResult]:
        try:
            message = read_frame(self._fds[w])
        except (EOFError, OSError):
            self._raise_dead(w)
        if message[:1] == WorkerMsg.ERROR.value:
            env, line, worker_tb = pickle.loads(message[1:])
            raise EnvWorkerError(f"env {env} raised {line}", worker_tb)
        return decode_reply(message, w * self.envs_per_worker)

    def _raise_dead(self, w: int):
        proc = self._procs[w]
        proc.join(timeout=1.0)
        raise EnvWorkerError(f"{self._envs_of(w)} worker process died (exit code {proc.exitcode})")

    def check_alive(self) -> None:
        for w, proc in enumerate(self._procs):
            if not proc.is_alive():
                while self._conns[w].poll():  # its last message may follow step results
                    self._unread.extend(self._receive(w))  # raises on the worker's exception
                self._raise_dead(w)

    def dump_stacks(self, ids, wait_s: float = 0.5) -> bool:
        """Have the workers of envs `ids` print their Python stacks to stderr (a stuck one
        shows where it is); True if asked (POSIX only)."""
        if not hasattr(signal, "SIGUSR1"):
            return False
        for w in sorted({self.worker_of(i) for i in ids}):
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._procs[w].pid, signal.SIGUSR1)
        time.sleep(wait_s)
        return True

    def kill_worker(self, i: int) -> None:
        """Hard-kill the worker of env `i` (tests of the dead-worker path)."""
        os.kill(self._procs[self.worker_of(i)].pid, signal.SIGKILL)

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
    factory: EnvFactory,
    num_envs: int,
    seeds: Sequence[int],
    serial: bool,
    nice: int = 5,
    envs_per_worker: int = 1,
) -> ProcessEnvPool | SerialEnvPool:
    """Probe one env in-process for its spaces, then start the pool (`envs_per_worker` envs
    in each worker process; serial pools step every env in-process)."""
    probe = factory(0)
    try:
        if serial:
            return SerialEnvPool(factory, num_envs, seeds, probe)
        return ProcessEnvPool(
            factory, num_envs, seeds, probe, nice=nice, envs_per_worker=envs_per_worker
        )
    finally:
        probe.close()


def env_seeds(base_seed: int, rank: int, num_envs: int) -> np.ndarray:
    """Distinct seeds per (rank, env)."""
    return np.random.SeedSequence([base_seed, rank]).generate_state(num_envs).astype(np.int64)
