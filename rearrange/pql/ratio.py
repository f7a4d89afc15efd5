"""Speed-ratio control (PQL §3.2): processes wait to hold β_a:v and β_p:v.

    β_a:v = f_a / f_v   (Actor steps of all N envs per V-learner update, paper 1:8)
    β_p:v = f_p / f_v   (P-learner updates per V-learner update, paper 1:2)

Each process counts its units in a shared counter. Before a unit, process X checks every
partner Y it is coupled with (Actor-V, V-P) and waits while

    done_X >= ratio_XY · done_Y + lead          (ratio_XY = f_X / f_Y)

i.e. while it has used up its share of the partner's progress plus `lead` units. With lead 1
the Actor collects step k+1 while the V-learner trains on step k, the V-learner never runs
more than one update beyond the data and the policy, and the P-learner never more than one
update beyond the critics. No deadlock: of two coupled processes at most one is ahead.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable

import numpy as np


class Role(enum.IntEnum):
    ACTOR = 0
    V_LEARNER = 1
    P_LEARNER = 2


PARTNERS: dict[Role, tuple[Role, ...]] = {
    Role.ACTOR: (Role.V_LEARNER,),
    Role.V_LEARNER: (Role.ACTOR, Role.P_LEARNER),
    Role.P_LEARNER: (Role.V_LEARNER,),
}


def may_start(own_done: int, partner_done: int, ratio: float, lead: float) -> bool:
    """Whether a process that has done `own_done` units may start another, given a partner
    that has done `partner_done` and the target ratio f_own / f_partner."""
    return own_done < ratio * partner_done + lead


class SpeedRatio:
    """The ratio rule over shared counters ([3] int64 units done per Role, this session) and
    wait clocks ([3] float64 seconds spent waiting per Role)."""

    def __init__(
        self,
        counters: np.ndarray,
        waited: np.ndarray,
        beta_a_v: float,
        beta_p_v: float,
        lead: float = 1.0,
        enabled: bool = True,
    ):
        self.counters, self.waited = counters, waited
        self.lead, self.enabled = lead, enabled
        # f_X / f_Y for every coupled pair, in units of each process.
        self.ratios = {
            (Role.ACTOR, Role.V_LEARNER): beta_a_v,
            (Role.V_LEARNER, Role.ACTOR): 1.0 / beta_a_v,
            (Role.P_LEARNER, Role.V_LEARNER): beta_p_v,
            (Role.V_LEARNER, Role.P_LEARNER): 1.0 / beta_p_v,
        }

    def done(self, role: Role) -> int:
        return int(self.counters[role])

    def record(self, role: Role, units: int = 1) -> None:
        """`role` finished `units` units (only that role's process writes its counter)."""
        self.counters[role] = self.counters[role] + units

    def may_run(self, role: Role) -> bool:
        if not self.enabled:
            return True
        own = self.done(role)
        return all(
            may_start(own, self.done(p), self.ratios[(role, p)], self.lead) for p in PARTNERS[role]
        )

    def wait_turn(
        self,
        role: Role,
        should_stop: Callable[[], bool],
        on_wait: Callable[[], None] | None = None,
        sleep_s: float = 5e-4,
    ) -> bool:
        """Block until `role` may run (True) or `should_stop()` (False); time spent waiting
        goes to the role's wait clock. `on_wait` runs between polls (answer commands, check
        partners are alive)."""
        if self.may_run(role):
            return not should_stop()
        start = time.perf_counter()
        try:
            while not self.may_run(role):
                if should_stop():
                    return False
                if on_wait is not None:
                    on_wait()
                time.sleep(sleep_s)
        finally:
            self.waited[role] = self.waited[role] + (time.perf_counter() - start)
        return not should_stop()

    def next_in_serial(self) -> Role | None:
        """Serial mode: the role to run next (the one furthest behind among those allowed)."""
        allowed = [r for r in Role if self.may_run(r)]
        if not allowed:
            return None
        progress = {
            Role.ACTOR: self.done(Role.ACTOR) / self.ratios[(Role.ACTOR, Role.V_LEARNER)],
            Role.V_LEARNER: float(self.done(Role.V_LEARNER)),
            Role.P_LEARNER: self.done(Role.P_LEARNER)
            / self.ratios[(Role.P_LEARNER, Role.V_LEARNER)],
        }
        return min(allowed, key=lambda r: (progress[r], r))
