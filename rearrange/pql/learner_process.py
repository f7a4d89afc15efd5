"""The V-learner and P-learner as processes (or in-process runners for serial mode).

`LearnerRunner.step()` is one unit of a learner's work with its syncs: pull what is due
(observation statistics, the lagged policy or the critics), sample, update, count the unit,
publish the new parameters. `learner_main` loops it in a process under ratio control and
answers the trainer's commands (its state for a checkpoint, stop) between units and while
waiting. Commands and replies are enums (no strings on pipes).
"""

from __future__ import annotations

import contextlib
import enum
import multiprocessing as mp
import signal
import threading
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
import torch

from rearrange.pql.config import PQLConfig
from rearrange.pql.control import Control, Stat
from rearrange.pql.networks import ActorSpec
from rearrange.pql.p_learner import PLearner
from rearrange.pql.param_sync import SlotSpec, VectorSlot, publish, pull
from rearrange.pql.ratio import Role
from rearrange.pql.replay import ReplayBuffer, ReplaySpec
from rearrange.pql.v_learner import VLearner
from rearrange.runtime.run import TrainProcessError

STATS = {
    "critic_loss": Stat.CRITIC_LOSS,
    "q_mean": Stat.Q_MEAN,
    "actor_loss": Stat.ACTOR_LOSS,
    "target_mean": Stat.TARGET_MEAN,
}


STARTUP_TIMEOUT_S = 600.0


class LearnerCmd(enum.IntEnum):
    STATE = 0  # reply with the learner's state dict (checkpoint)
    STOP = 1


class LearnerMsg(enum.IntEnum):
    READY = 0
    STATE = 1  # payload: state dict
    ERROR = 2  # payload: (one-line exception, traceback)


class LearnerError(TrainProcessError):
    """A learner process raised or died; the message names it and the cause."""

    process = "learner process"


@dataclass
class Slots:
    """Parameter transfer between the processes."""

    policy: VectorSlot  # P-learner → Actor, V-learner
    critic: VectorSlot  # V-learner → P-learner
    obs_stats: VectorSlot  # Actor → learners (normaliser mean, var, count)

    @property
    def specs(self) -> tuple[SlotSpec, SlotSpec, SlotSpec]:
        return self.policy.spec, self.critic.spec, self.obs_stats.spec

    @classmethod
    def attach(cls, specs: tuple[SlotSpec, SlotSpec, SlotSpec]) -> Slots:
        return cls(*(VectorSlot.attach(s) for s in specs))

    def close(self) -> None:
        for slot in (self.policy, self.critic, self.obs_stats):
            slot.close()


@dataclass
class LearnerSetup:
    """Everything (picklable) a learner needs besides the shared memory."""

    role: Role
    cfg: PQLConfig
    actor: ActorSpec
    device: str
    seed: int
    init_state: dict[str, Any] | None = None


class LearnerRunner:
    """One learner (V or P) with its replay sampling and parameter syncs."""

    def __init__(self, setup: LearnerSetup, replay: ReplayBuffer, control: Control, slots: Slots):
        self.role, self.cfg = setup.role, setup.cfg
        self.replay, self.control, self.slots = replay, control, slots
        torch.manual_seed(setup.seed)
        make = VLearner if self.role == Role.V_LEARNER else PLearner
        self.learner = make(self.cfg, setup.actor, setup.device)
        if setup.init_state is not None:
            self.learner.load_state_dict(setup.init_state)
        self.rng = np.random.default_rng(setup.seed)
        self.updates = 0
        self._have = {"policy": 0, "critic": 0, "obs_stats": 0}
        self.publish()

    @property
    def _own_slot(self) -> VectorSlot:
        return self.slots.critic if self.role == Role.V_LEARNER else self.slots.policy

    @property
    def _own_net(self) -> torch.nn.Module:
        return self.learner.critic if self.role == Role.V_LEARNER else self.learner.actor

    def publish(self) -> None:
        publish(self._own_slot, self._own_net)

    def ready(self) -> bool:
        """Warm-up done and the partner's first parameters published."""
        partner = self.slots.policy if self.role == Role.V_LEARNER else self.slots.critic
        return self.replay.head >= self.cfg.warmup_steps and partner.version > 0

    def _sync(self) -> None:
        stats = self.slots.obs_stats
        if stats.version != self._have["obs_stats"]:
            values, self._have["obs_stats"] = stats.read()
            self.learner.obs_norm.set_stats(values)
        if self.role == Role.V_LEARNER:
            if self.updates % self.cfg.v_policy_sync_interval == 0:
                self._have["policy"] = pull(
                    self.slots.policy, self.learner.policy, self._have["policy"]
                )
        elif self.updates % self.cfg.p_critic_sync_interval == 0:
            self._have["critic"] = pull(
                self.slots.critic, self.learner.critic, self._have["critic"]
            )

    def step(self) -> dict[str, float]:
        """One update; counts it in the shared counters and publishes the result."""
        self._sync()
        cfg = self.cfg
        if self.role == Role.V_LEARNER:
            stats = self.learner.update(
                self.replay.sample_nstep(cfg.batch_size, cfg.nstep, self.rng)
            )
        else:
            stats = self.learner.update(self.replay.sample_obs(cfg.batch_size, self.rng))
        self.updates += 1
        self.control.counters[self.role] += 1
        self.publish()
        for key, value in stats.items():
            self.control.report(STATS[key], value)
        return stats

    def state_dict(self) -> dict[str, Any]:
        return self.learner.state_dict()


def learner_main(
    setup: LearnerSetup,
    replay_spec: ReplaySpec,
    control_specs: dict,
    slot_specs: tuple[SlotSpec, SlotSpec, SlotSpec],
    conn: Connection,
) -> None:
    """Entry point of a learner process: units under ratio control until the stop flag."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the trainer shuts learners down
    torch.set_num_threads(setup.cfg.learner_threads)
    replay = control = slots = None
    try:
        replay, control = ReplayBuffer.attach(replay_spec), Control.attach(control_specs)
        slots = Slots.attach(slot_specs)
        runner = LearnerRunner(setup, replay, control, slots)
        cfg = setup.cfg
        ratio = control.speed_ratio(cfg.beta_a_v, cfg.beta_p_v, cfg.ratio_lead, cfg.ratio_control)
        conn.send((LearnerMsg.READY, None))

        def answer() -> None:
            while conn.poll():
                if conn.recv() == LearnerCmd.STATE:
                    conn.send((LearnerMsg.STATE, runner.state_dict()))
                else:
                    control.stop()

        while not control.stopped:
            answer()
            if not runner.ready():
                time.sleep(1e-3)
                continue
            if ratio.wait_turn(setup.role, lambda: control.stopped, on_wait=answer):
                runner.step()
        answer()
    except (EOFError, BrokenPipeError):
        pass  # the trainer went away
    except BaseException as exc:  # noqa: BLE001 - reported to the trainer, then exit
        with contextlib.suppress(Exception):
            conn.send((LearnerMsg.ERROR, (f"{type(exc).__name__}: {exc}", traceback.format_exc())))
    finally:
        for shared in (replay, control, slots):
            if shared is not None:
                shared.close()


class LearnerProcesses:
    """The two learner processes, as seen from the trainer (Actor) process."""

    def __init__(
        self,
        setups: list[LearnerSetup],
        replay: ReplayBuffer,
        control: Control,
        slots: Slots,
        ctx: Any,
        timeout_s: float,
    ):
        self.control, self.timeout_s = control, timeout_s
        self.roles = [s.role for s in setups]
        self.conns: list[Connection] = []
        self.procs = []
        for setup in setups:
            parent, child = ctx.Pipe(duplex=True)
            args = (setup, replay.spec, control.specs, slots.specs, child)
            name = f"pql-{setup.role.name.lower().replace('_', '-')}"
            proc = ctx.Process(target=learner_main, args=args, daemon=True, name=name)
            with sigint_ignored():
                proc.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(proc)
        for i in range(len(self.procs)):  # importing torch takes minutes on a busy machine
            self._expect(i, LearnerMsg.READY, max(timeout_s, STARTUP_TIMEOUT_S))

    def _name(self, i: int) -> str:
        return self.roles[i].name.lower().replace("_", "-")

    def _died(self, i: int) -> LearnerError:
        self.procs[i].join(timeout=1.0)
        return LearnerError(f"{self._name(i)} process died (exit code {self.procs[i].exitcode})")

    def _receive(self, i: int, timeout: float) -> tuple[LearnerMsg, Any]:
        conn, proc = self.conns[i], self.procs[i]
        deadline = time.monotonic() + timeout
        while not conn.poll(0.05):
            if not proc.is_alive() and not conn.poll():
                raise self._died(i)
            if time.monotonic() > deadline:
                raise LearnerError(
                    f"{self._name(i)} gave no answer for {timeout:.0f} s: it is stuck; "
                    "raise pql.learner_timeout_s if its updates are that slow"
                )
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError):
            raise self._died(i) from None
        if kind == LearnerMsg.ERROR:
            raise LearnerError(f"{self._name(i)} raised {payload[0]}", payload[1])
        return kind, payload

    def _expect(self, i: int, kind: LearnerMsg, timeout_s: float | None = None) -> Any:
        got, payload = self._receive(i, timeout_s or self.timeout_s)
        if got != kind:
            raise LearnerError(f"{self._name(i)} sent {got.name} instead of {kind.name}")
        return payload

    def check(self) -> None:
        """Raise LearnerError if a learner reported an error or died (non-blocking)."""
        for i, (conn, proc) in enumerate(zip(self.conns, self.procs)):
            if conn.poll():
                self._receive(i, self.timeout_s)
            elif not proc.is_alive():
                raise self._died(i)

    def states(self) -> dict[Role, dict[str, Any]]:
        """Each learner's state dict (for a checkpoint)."""
        for conn in self.conns:
            conn.send(LearnerCmd.STATE)
        return {role: self._expect(i, LearnerMsg.STATE) for i, role in enumerate(self.roles)}

    def close(self) -> None:
        self.control.stop()
        for conn in self.conns:
            with contextlib.suppress(Exception):
                conn.send(LearnerCmd.STOP)
        deadline = time.monotonic() + 10.0
        for proc in self.procs:
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=1.0)
        for conn in self.conns:
            conn.close()


@contextlib.contextmanager
def sigint_ignored():
    """Children started meanwhile ignore SIGINT from birth (an ignored signal stays ignored
    across exec, and Python then installs no KeyboardInterrupt handler): a Ctrl-C while they
    import torch reaches only the trainer, which shuts them down."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def spawn_context() -> Any:
    return mp.get_context("spawn")
