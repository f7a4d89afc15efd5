"""Nav: drive the base to the goal pose and call stop.

Reward (DESIGN.md §4): geodesic-distance change x1.0, heading-error change x1.0 inside 3 m,
slack -0.005, force penalty (training; VER). The stop action (> 0) ends the episode. An
episode that starts holding an object (EpisodeGenConfig.nav_hold_prob) fails when the hold
is lost: drop -0.5 (the pick's drop penalty), ends.
Success: stop called with geodesic distance < 1.5 m and heading error < 15 degrees.
"""

from __future__ import annotations

import math

import numpy as np

from rearrange.sim.geometry import wrap_angle

from .actions import DecodedAction
from .base import SkillEnv, StepResult
from .rewards import DistanceDelta, force_term, slack_term

NAV_TERMS = ("dist", "angle", "force", "slack", "drop")


def geodesic_to(sim, goal_xy) -> float:
    """Geodesic base->goal distance; snaps off-grid points, Euclidean if still unreachable."""
    x, y, _ = sim.base_pose()
    nm = sim.navmap
    start, goal = (float(x), float(y)), (float(goal_xy[0]), float(goal_xy[1]))
    d = nm.geodesic_distance(start, goal)
    if not math.isfinite(d):
        d = nm.geodesic_distance(nm.snap(*start), nm.snap(*goal))
    if not math.isfinite(d):
        d = math.dist(start, goal)
    return float(d)


def heading_error(sim, goal_yaw: float) -> float:
    return abs(wrap_angle(float(goal_yaw) - float(sim.base_pose()[2])))


def goal_pose_error(sim, goal) -> tuple[float, float]:
    """(m, rad): the base's Euclidean distance to the goal point of `goal` (x, y, yaw) and
    its heading error, |wrapped goal yaw - base yaw|."""
    x, y, _ = (float(v) for v in sim.base_pose())
    return math.hypot(float(goal[0]) - x, float(goal[1]) - y), heading_error(sim, goal[2])


class NavEnv(SkillEnv):
    def _reset_task(self) -> None:
        goal = self.target.nav_goal
        self._dist = DistanceDelta()
        self._angle = DistanceDelta()
        self._dist.reset(geodesic_to(self.sim, goal[:2]))
        self._angle.reset(heading_error(self.sim, goal[2]))
        self._held = self.sim.held_object()  # carried from the start (nav_hold_prob)

    def _task_step(self, action: DecodedAction) -> StepResult:
        rc, th = self.config.reward, self.config.thresholds
        goal = np.asarray(self.target.nav_goal)
        terms = dict.fromkeys(NAV_TERMS, 0.0)
        dist = geodesic_to(self.sim, goal[:2])
        angle = heading_error(self.sim, goal[2])
        terms["dist"] = self._dist.step(dist, rc.dist)
        angle_delta = self._angle.step(angle, rc.angle)
        terms["angle"] = angle_delta if dist < rc.angle_radius else 0.0
        terms["force"] = force_term(self.sim, rc)
        terms["slack"] = slack_term(rc)
        at_goal = dist < th.nav_dist and angle < th.nav_angle
        dropped = self._held is not None and self.sim.held_object() != self._held
        if dropped:
            terms["drop"] = -rc.drop
        return StepResult(terms, success=action.stop and at_goal, failed=dropped)
