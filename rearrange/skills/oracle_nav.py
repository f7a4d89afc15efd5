"""Scripted navigation: follow NavMap.shortest_path, turn to the goal yaw, call stop.

Controller: turn-then-drive along the path's straight segments. While the heading error
to the next waypoint is large the robot turns in place (a diff-drive base cannot strafe, and
turning first keeps the inflated-obstacle clearance the path planner assumed).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rearrange.skills.base import SkillError
from rearrange.skills.oracle_common import OracleSkill, wrap_angle

WAYPOINT_TOL = 0.12  # m: a path waypoint counts as passed
TURN_IN_PLACE = 0.5  # rad: heading error above which the robot only turns
DENSIFY = 0.4  # m: max waypoint spacing, so doorways mid-segment get nudged too
STUCK_WINDOW = 8  # steps
BACKUP_STEPS = 6
ARRIVE_DIST = 0.25  # m: close enough to the goal point, now turn to the goal yaw
STOP_DIST = 1.5  # m (geodesic): success radius of the nav task
STOP_ANGLE = math.radians(8.0)  # stop well inside the 15 degree success cone
REPLAN_EVERY = 30  # steps; the path is also recomputed when the robot strays


class OracleNav(OracleSkill):
    name = "nav"

    def __init__(
        self,
        base_movement: bool = True,
        step_limit: int | None = None,
        max_linear: float = 1.0,
        max_angular: float = 1.5,
    ) -> None:
        super().__init__(base_movement=True, step_limit=step_limit)
        self.max_linear = max_linear  # m/s at action 1 (SimConfig.base_max_linear)
        self.max_angular = max_angular  # rad/s at action 1 (SimConfig.base_max_angular)
        self.path: list[tuple[float, float]] = []

    def _reset(self) -> None:
        if self.target.nav_goal is None:
            raise SkillError("nav skill needs SkillTarget.nav_goal = (x, y, yaw)")
        self.path = []
        self._planned_at = -REPLAN_EVERY
        self._trail: list[tuple[float, float]] = []
        self._backing = 0
        self._driving = False

    def _act(self, obs: dict, sim: Any) -> np.ndarray:
        x, y, yaw = (float(v) for v in sim.base_pose())
        gx, gy, gyaw = (float(v) for v in self.target.nav_goal)
        if math.hypot(gx - x, gy - y) < ARRIVE_DIST or self.phase == "align":
            return self._align(sim, yaw, gyaw, gx, gy, x, y)
        if self._backing > 0:  # stuck recovery: reverse a little, then replan
            self._backing -= 1
            if self._backing == 0:
                self.path = []
            return self.layout.compose(base=np.array([-0.5, 0.0]), stop=False)
        if self._stuck(x, y):
            self._backing = BACKUP_STEPS
        if self.steps - self._planned_at >= REPLAN_EVERY or not self.path:
            raw = sim.navmap.shortest_path((x, y), (gx, gy)) or [(gx, gy)]
            dense = _densify(raw, DENSIFY)
            self.path = [dense[0]] + [_nudge(sim.navmap, p) for p in dense[1:-1]] + [dense[-1]]
            self._planned_at = self.steps
        wx, wy = self._next_waypoint(x, y)
        if math.hypot(wx - x, wy - y) < 0.05:  # path exhausted (goal snapped nearby)
            return self._align(sim, yaw, gyaw, gx, gy, x, y)
        err = wrap_angle(math.atan2(wy - y, wx - x) - yaw)
        if self._hurry(sim, x, y, gx, gy):
            return self._align(sim, yaw, gyaw, gx, gy, x, y)
        last_leg = len(self.path) == 1
        return self._drive(err, math.hypot(wx - x, wy - y) if last_leg else 1.0)

    def _hurry(self, sim, x, y, gx, gy) -> bool:
        """Late in the step budget, settle for the success radius instead of the goal point."""
        return self.steps > 0.75 * self.step_limit and self._within(sim, x, y, gx, gy)

    def _next_waypoint(self, x: float, y: float) -> tuple[float, float]:
        """Drive segment by segment: string-pulled paths graze inflated corners, and a
        look-ahead chord would cut through them."""
        while (
            len(self.path) > 1
            and math.hypot(self.path[0][0] - x, self.path[0][1] - y) < WAYPOINT_TOL
        ):
            self.path.pop(0)
        return float(self.path[0][0]), float(self.path[0][1])

    def _stuck(self, x: float, y: float) -> bool:
        """True when the base barely moved over the last STUCK_WINDOW driving steps."""
        self._trail.append((x, y))
        if len(self._trail) < STUCK_WINDOW:
            return False
        x0, y0 = self._trail.pop(0)
        if math.hypot(x - x0, y - y0) < 0.02 and self._driving:
            self._trail.clear()
            return True
        return False

    def _align(self, sim, yaw, gyaw, gx, gy, x, y) -> np.ndarray:
        """At the goal point: turn to the goal yaw, then stop."""
        self.phase = "align"
        err = wrap_angle(gyaw - yaw)
        if abs(err) < STOP_ANGLE and self._within(sim, x, y, gx, gy):
            self.stop_called = True
            return self.layout.compose(base=np.zeros(2), stop=True)
        if abs(err) < STOP_ANGLE:  # facing right but pushed off the goal: go back
            self.phase = "drive"
        return self.layout.compose(base=np.array([0.0, self._turn(err)]), stop=False)

    def _within(self, sim, x, y, gx, gy) -> bool:
        d = sim.navmap.geodesic_distance((x, y), (gx, gy))
        if not math.isfinite(d):
            d = math.hypot(gx - x, gy - y)
        return d < STOP_DIST - 0.3

    def _turn(self, err: float) -> float:
        # Proportional turn that reaches the target without overshoot at 30 Hz.
        dt = 1.0 / 30.0
        return float(np.clip(err / (self.max_angular * dt * 3.0), -1.0, 1.0))

    def _drive(self, err: float, remaining: float) -> np.ndarray:
        angular = self._turn(err)
        if abs(err) > TURN_IN_PLACE:
            linear = 0.0
        else:
            # slow down only on the last leg; cos(err)² keeps turns while driving tight
            linear = float(np.clip(remaining / 0.5, 0.2, 1.0)) * math.cos(err) ** 2
        self._driving = linear > 0
        return self.layout.compose(base=np.array([linear, angular]), stop=False)


_RING = [(math.cos(a), math.sin(a)) for a in np.linspace(0, 2 * math.pi, 16, endpoint=False)]


def _nudge(navmap, p: tuple[float, float], probe: float = 0.15, shift: float = 0.1):
    """Moves a path corner away from nearby obstacles.

    String-pulled paths turn exactly at the inflated obstacle boundary, and the grid's
    discretisation leaves the real footprint a few cm short of it there (doorways).
    """
    px, py = float(p[0]), float(p[1])
    away = np.zeros(2)
    for dx, dy in _RING:
        if not navmap.is_navigable(px + probe * dx, py + probe * dy):
            away -= (dx, dy)
    norm = float(np.linalg.norm(away))
    if norm < 1e-9:
        return px, py
    for scale in (1.0, 0.5):
        q = (px + shift * scale * away[0] / norm, py + shift * scale * away[1] / norm)
        if navmap.is_navigable(*q):
            return q
    return px, py


def _densify(path, spacing: float) -> list[tuple[float, float]]:
    """Inserts points so consecutive waypoints are at most `spacing` apart."""
    out = [(float(path[0][0]), float(path[0][1]))]
    for a, b in zip(path[:-1], path[1:]):
        n = max(1, math.ceil(math.hypot(b[0] - a[0], b[1] - a[1]) / spacing))
        for k in range(1, n + 1):
            out.append((a[0] + (b[0] - a[0]) * k / n, a[1] + (b[1] - a[1]) * k / n))
    return out
