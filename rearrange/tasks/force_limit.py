"""Habitat's `force_terminate` in this world: an episode that pushes the robot into the world
too hard, or too long, ends as a failure with cause `excessive_force`.

`sim.contact_force()` is the force measure (N, one value per policy step): the solver forces
of the robot's contacts with free objects, plus PENETRATION_STIFFNESS (1e4 N/m) times the
depth of each robot-geom pair's overlap with walls, furniture, doors and drawers, which
block it (`SimConfig.world_blocks_robot`, so a pair held at the 1 cm block depth reads
100 N). It accumulates as Habitat's RobotForce measure does: only a rise of more than
`min_force` over the force last counted adds (that rise), a drop lowers the reference, so a
steady contact adds once and repeated bumping adds every time; the episode ends once the
accumulated force (or one step's, `max_instant`) passes its limit (docs/DESIGN.md §3).
"""

from __future__ import annotations

from dataclasses import dataclass

EXCESSIVE_FORCE = "excessive_force"  # the failure cause, in eval_skill and the HAB report


@dataclass
class ForceLimit:
    """Thresholds (N) of Habitat's `force_terminate` measure; <= 0 turns one off."""

    max_accum: float = 5000.0
    """The accumulated rises of the force (see the module doc; Habitat 2.0's skill configs:
    max_accum_force 5000)."""
    max_instant: float = -1.0
    """One step's force (Habitat 2.0: none)."""
    min_force: float = 20.0
    """A rise of at most this over the last counted force adds nothing (Habitat's RobotForce
    min_force)."""

    def __post_init__(self) -> None:
        if self.min_force < 0:
            raise ValueError(f"force_limit.min_force must be >= 0 N, got {self.min_force}")


class ForceMeter:
    """The episode's accumulated force against a `ForceLimit`."""

    def __init__(self, limit: ForceLimit) -> None:
        self.limit = limit
        self.reset()

    def reset(self) -> None:
        self.accum = 0.0  # N, the rises counted so far
        self.peak = 0.0  # N, the largest one-step force so far
        self.exceeded = False
        self._last: float | None = None  # the force the next rise is measured from

    def update(self, force: float) -> bool:
        """Add one policy step's force; True once the limit is exceeded (and from then on)."""
        force = float(force)
        lim = self.limit
        self.peak = max(self.peak, force)
        if self._last is None:  # Habitat: the first reading only sets the reference
            self._last = force
        elif force - self._last > lim.min_force:
            self.accum += force - self._last
            self._last = force
        elif force < self._last:
            self._last = force
        over_accum = 0 < lim.max_accum < self.accum
        over_instant = 0 < lim.max_instant < force
        self.exceeded = self.exceeded or over_accum or over_instant
        return self.exceeded
