"""Scripted navigation: follow NavMap.shortest_path to the goal pose precisely, then stop.

`PathFollower` is the base controller, shared with the base-moving pick/place oracles
(navigate-then-manipulate, for NoNav). The sim's base is kinematic: a velocity command moves
it exactly (unless a wall blocks it), so the follower drives to the goal point within
`pos_tol` and turns to the goal yaw within `yaw_tol` (a few cm and degrees) instead of
settling for the nav task's 1.5 m success radius: the nav goal is a pick-ready pose
(CONTRACTS §1), and stopping short leaves the target out of the arm's reach.

Driving: turn in place while the heading error to the next waypoint is large (a diff-drive
base cannot strafe, and the string-pulled path turns exactly at the inflated obstacle
boundary, so cutting a corner means touching it), else drive at full speed with a
proportional heading correction, and slow down only to land on the goal point.

Paths are planned on `sim.planning_navmap()` (open doors as obstacles). A large in-place
turn that would sweep the arm or a held object into a loose object (`arm_sweep`) goes the
other way round, or the base first backs away from the furniture.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rearrange.sim.config import SimConfig
from rearrange.sim.geometry import wrap_angle
from rearrange.sim.simulator import Simulator
from rearrange.skills.arm_sweep import turn_clear
from rearrange.skills.base import SkillError
from rearrange.skills.oracle_common import OracleSkill


@dataclass(frozen=True)
class FollowerConfig:
    pos_tol: float = 0.03
    """m: the goal point counts as reached."""
    yaw_tol: float = math.radians(2.0)
    """rad: the goal heading counts as reached."""
    waypoint_tol: float = 0.08
    """m: an intermediate waypoint counts as passed."""
    turn_in_place: float = 0.8
    """rad: heading error above which the base only turns (below it, it arcs: the corner
    of a string-pulled path is on the inside of the turn, so arcing swings outward)."""
    reverse_dist: float = 0.6
    """m: a goal closer than this and behind the robot is reached by reversing."""
    densify: float = 0.4
    """m: max waypoint spacing, so doorways mid-segment get nudged off the walls too."""
    replan_every: int = 60
    """steps between path re-plans (also after a stuck recovery)."""
    stuck_window: int = 10
    """steps over which a driving base must move at least 1 cm."""
    backup_steps: int = 6
    """steps reversing after getting stuck."""
    sweep_turn: float = 0.3
    """rad: turns larger than this are checked for sweeping the arm into loose objects
    (`arm_sweep`); a blocked turn goes the other way round, or backs away first."""
    sweep_backup: int = 24
    """max steps reversing (at half speed) to make room for a turn."""


class PathFollower:
    """Drives the base along the NavMap's shortest path to a goal pose (x, y, yaw)."""

    def __init__(
        self,
        max_linear: float | None = None,
        max_angular: float | None = None,
        config: FollowerConfig | None = None,
    ) -> None:
        # m/s and rad/s at action 1; None reads SimConfig.base_max_linear / _angular.
        self.max_linear = max_linear
        self.max_angular = max_angular
        self.policy_dt = SimConfig().policy_dt  # s per step; command() reads the sim's
        self.cfg = config or FollowerConfig()
        self.goal = (0.0, 0.0, 0.0)
        self.reset(self.goal)

    def reset(self, goal: tuple[float, float, float]) -> None:
        self.goal = tuple(float(v) for v in goal)
        self.path: list[tuple[float, float]] = []
        self.steps = 0
        self._planned_at = 0
        self._trail: list[tuple[float, float]] = []
        self._backing = 0
        self.aligning = False
        self._turn_dir = 0.0  # sign of a committed in-place turn (0: none)
        self._no_skip_until = 0
        self._swept_back = 0

    def command(self, sim: Any) -> np.ndarray | None:
        """The [linear, angular] base action in [-1, 1] for this step; None once at the goal."""
        self.steps += 1
        if self.max_linear is None:
            self.max_linear = float(sim.config.base_max_linear)
        if self.max_angular is None:
            self.max_angular = float(sim.config.base_max_angular)
        self.policy_dt = float(sim.config.policy_dt)
        x, y, yaw = (float(v) for v in sim.base_pose())
        gx, gy, gyaw = self.goal
        dist = math.hypot(gx - x, gy - y)
        # Once aligning, a nudge of a few mm (arm contacts) must not restart the drive.
        if dist < self.cfg.pos_tol or (self.aligning and dist < 2.5 * self.cfg.pos_tol):
            self.aligning = True
            err = wrap_angle(gyaw - yaw)
            if abs(err) < self.cfg.yaw_tol:
                return None
            err = self._clear_turn(sim, err)
            return np.array([0.0, self._turn(err if err is not None else wrap_angle(gyaw - yaw))])
        self.aligning = False
        if self._backing > 0:  # stuck recovery: reverse a little, then replan
            self._backing -= 1
            if self._backing == 0:
                self.path = []
            return np.array([-0.5, 0.0])
        if self._stuck(x, y):
            self._backing = self.cfg.backup_steps
            # a line-of-sight shortcut grazing an obstacle got it stuck: follow the
            # (nudged) grid path itself for a while
            self._no_skip_until = self.steps + self.cfg.replan_every
        if not self.path or self.steps - self._planned_at >= self.cfg.replan_every:
            self._plan(sim, x, y)
        wx, wy = self._next_waypoint(sim, x, y)
        final = len(self.path) == 1
        action = self._drive(x, y, yaw, wx, wy, final)
        if action[0] != 0.0 or abs(self._heading_err) < self.cfg.sweep_turn:
            self._turn_dir = 0.0
            return action
        err = self._clear_turn(sim, self._heading_err)
        if err is None:  # both ways sweep something: back away (arm first) if possible
            if self._swept_back < self.cfg.sweep_backup and self._room_behind(sim, x, y, yaw):
                self._swept_back += 1
                self.path = []  # replan from where the backing ends
                return np.array([-0.5, 0.0])
            return action
        return np.array([0.0, self._turn(err)])

    # --- keeping the arm clear of loose objects ----------------------------------------
    def _clear_turn(self, sim, err: float) -> float | None:
        """The turn to make for heading error `err`: the short way, or the long way round
        when only the short way sweeps the arm into an object; None when both do. A chosen
        direction is kept until the turn ends (else it would flip half way)."""
        if abs(err) < self.cfg.sweep_turn:
            self._turn_dir = 0.0
            return err
        if self._turn_dir:
            return err if err * self._turn_dir > 0 else err - math.copysign(2 * math.pi, err)
        long_way = err - math.copysign(2 * math.pi, err)
        for cand in (err, long_way):
            if turn_clear(sim, cand):
                self._turn_dir = math.copysign(1.0, cand)
                return cand
        return None

    def _room_behind(self, sim, x: float, y: float, yaw: float, step: float = 0.1) -> bool:
        return bool(
            planning_map(sim).is_navigable(x - step * math.cos(yaw), y - step * math.sin(yaw))
        )

    # --- path ------------------------------------------------------------------------
    def _plan(self, sim, x: float, y: float) -> None:
        gx, gy, _ = self.goal
        nm = planning_map(sim)
        raw = nm.shortest_path((x, y), (gx, gy)) or [(x, y), (gx, gy)]
        dense = _densify(raw, self.cfg.densify)
        inner = [_nudge(nm, p) for p in dense[1:-1]]
        # The path starts and ends at snapped cells; the real goal may sit a few cm off
        # the grid (poses come from the sim's exact footprint check).
        self.path = inner + [(gx, gy)]
        self._planned_at = self.steps

    def _next_waypoint(self, sim, x: float, y: float) -> tuple[float, float]:
        """Pops passed waypoints, and skips ahead when the next-but-one is in plain view
        (after a recovery or a slide along a wall the robot may be past a waypoint)."""
        nm, tol = planning_map(sim), self.cfg.waypoint_tol
        while len(self.path) > 1:
            px, py = self.path[0]
            skip_ok = self.steps >= self._no_skip_until and nm.line_of_sight((x, y), self.path[1])
            if math.hypot(px - x, py - y) < tol or skip_ok:
                self.path.pop(0)
                continue
            break
        return self.path[0]

    def _stuck(self, x: float, y: float) -> bool:
        """True when the base barely moved over the last window of driving steps."""
        self._trail.append((x, y))
        if len(self._trail) < self.cfg.stuck_window:
            return False
        x0, y0 = self._trail.pop(0)
        if math.hypot(x - x0, y - y0) < 0.01 and self._driving:
            self._trail.clear()
            return True
        return False

    # --- control ---------------------------------------------------------------------
    def _drive(self, x, y, yaw, wx, wy, final: bool) -> np.ndarray:
        remaining = math.hypot(wx - x, wy - y)
        err = wrap_angle(math.atan2(wy - y, wx - x) - yaw)
        sign = 1.0
        if final and remaining < self.cfg.reverse_dist and abs(err) > 2.0:
            err, sign = wrap_angle(err + math.pi), -1.0  # goal just behind: back up to it
        angular = self._turn(err)
        self._heading_err = err
        if abs(err) > self.cfg.turn_in_place:
            linear = 0.0
        elif final:
            # land on the goal point: at most the remaining distance this step
            linear = min(1.0, remaining / (self.max_linear * self.policy_dt)) * math.cos(err)
        else:
            linear = math.cos(err) ** 2
        self._driving = linear > 0
        return np.array([sign * linear, angular])

    def _turn(self, err: float) -> float:
        """Angular action that turns by `err` this step, or at full speed when larger."""
        return float(np.clip(err / (self.max_angular * self.policy_dt), -1.0, 1.0))

    _driving = False
    _heading_err = 0.0


class OracleNav(OracleSkill):
    name = "nav"

    def __init__(
        self,
        base_movement: bool = True,
        step_limit: int | None = None,
        max_linear: float | None = None,
        max_angular: float | None = None,
        config: FollowerConfig | None = None,
    ) -> None:
        super().__init__(base_movement=True, step_limit=step_limit)
        self.follower = PathFollower(max_linear, max_angular, config)

    @property
    def path(self) -> list[tuple[float, float]]:
        return self.follower.path

    def _reset(self) -> None:
        if self.target.nav_goal is None:
            raise SkillError("nav skill needs SkillTarget.nav_goal = (x, y, yaw)")
        self.follower.reset(self.target.nav_goal)

    def _act(self, obs: dict, sim: Any) -> np.ndarray:
        base = self.follower.command(sim)
        if base is None:
            self.phase = "stop"
            self.stop_called = True
            return self.layout.compose(base=np.zeros(2), stop=True)
        self.phase = "align" if self.follower.aligning else "drive"
        return self.layout.compose(base=base, stop=False)


def planning_map(sim: Simulator):
    """The NavMap paths are planned on: the static one with open doors as obstacles."""
    return sim.planning_navmap()


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
