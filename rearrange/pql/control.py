"""The small shared block every PQL process maps: unit counters, wait clocks, the stop flag
and the learners' latest statistics (written by one process each, read by the trainer)."""

from __future__ import annotations

import enum

import numpy as np

from rearrange.pql.ratio import Role, SpeedRatio
from rearrange.pql.shared_arrays import SharedArrays


class Stat(enum.IntEnum):
    """Slots of `stats`: exponential moving averages over recent updates."""

    CRITIC_LOSS = 0
    Q_MEAN = 1
    ACTOR_LOSS = 2
    TARGET_MEAN = 3


EMA = 0.05


class Control:
    def __init__(self, arrays: SharedArrays):
        self.arrays = arrays
        self.counters, self.waited = arrays["counters"], arrays["waited"]
        self.stats, self._stop = arrays["stats"], arrays["stop"]

    @classmethod
    def create(cls, shared: bool = True) -> Control:
        layout = {
            "counters": ((len(Role),), np.int64),
            "waited": ((len(Role),), np.float64),
            "stats": ((len(Stat),), np.float64),
            "stop": ((1,), np.int64),
        }
        control = cls(SharedArrays.create(layout, shared))
        control.stats[:] = np.nan
        return control

    @classmethod
    def attach(cls, specs) -> Control:
        return cls(SharedArrays.attach(specs))

    @property
    def specs(self):
        return self.arrays.specs

    def speed_ratio(self, beta_a_v: float, beta_p_v: float, lead: float, enabled: bool):
        return SpeedRatio(self.counters, self.waited, beta_a_v, beta_p_v, lead, enabled)

    @property
    def stopped(self) -> bool:
        return bool(self._stop[0])

    def stop(self) -> None:
        self._stop[0] = 1

    def report(self, stat: Stat, value: float) -> None:
        old = self.stats[stat]
        self.stats[stat] = value if np.isnan(old) else (1 - EMA) * old + EMA * value

    def close(self) -> None:
        self.arrays.close()
