"""Nav stop-masking: one home for the rule, in training and at deployment.

VER Appendix B masks the nav skill's stop while the goal is more than 2 m away at HAB
evaluation. The nav env applies the same function while training (`TaskConfig.stop_mask`),
and the learned skill and the HRL executor apply it at deployment, so the policy is trained
under the action semantics it runs with (the stop analogue of tasks/grip_rules.py). The
distance is the skill's own `goal_polar` reading: no privileged information.
"""

from __future__ import annotations

import math

import numpy as np

from rearrange.skill_spec import SUCCESS

STOP_MASK_DIST = 2.0
# The HAB executor's threshold (ExecutorConfig.stop_mask_dist, `rearrange.eval
# --stop-mask-dist`, `hab_stop_mask_dist`): the nav's training success radius plus the margin
# the paper's 2 m leaves over Habitat's 1.5 m. The shipped nav succeeds only within 0.5 m
# (skill_configs/sensing/nav_cpu.yaml), so a stop 1-2 m out is a failure of its own task and
# leaves the next pick out of reach (docs/DESIGN.md §8.4; the threshold chosen by a sweep on
# val episodes, benchmarks/RESULTS.md). Training keeps STOP_MASK_DIST.
STOP_MASK_MARGIN = 0.5
# ... and on heading: the executor also masks a stop while the goal-heading sensor reads more
# than the nav's training success angle (15 degrees) plus this margin. A nav that stopped
# facing elsewhere left the next pick or place with its target to the side or behind: after
# such stops (> 30 degrees) the pick or place failed 75 of 81 times in the chains measured
# on 2026-12-06 (benchmarks/RESULTS.md, "Nav stop-mask on heading"). Training masks nothing
# on heading (its success already needs the heading).
STOP_MASK_HEADING_MARGIN = math.radians(15.0)
HAB_STOP_MASK_HEADING = SUCCESS.nav_angle + STOP_MASK_HEADING_MARGIN


def hab_stop_mask_dist(success_radius: float | None) -> float:
    """The HAB stop-mask distance for a nav trained to succeed within `success_radius` (m):
    that plus STOP_MASK_MARGIN; the paper's STOP_MASK_DIST when it is unknown (a scripted
    nav, or a checkpoint that does not record it)."""
    if success_radius is None:
        return STOP_MASK_DIST
    return float(success_radius) + STOP_MASK_MARGIN


def mask_nav_stop(
    action: np.ndarray,
    stop_index: int,
    goal_dist: float,
    threshold: float = STOP_MASK_DIST,
    heading_err: float | None = None,
    heading_threshold: float | None = None,
) -> np.ndarray:
    """Forces "don't stop" (−1) in the stop dimension while the goal is farther than
    `threshold` (m), or (both given) the heading error is larger than `heading_threshold`
    (rad, either side)."""
    out = np.array(action, dtype=np.float32, copy=True)
    off_heading = (
        heading_err is not None
        and heading_threshold is not None
        and abs(float(heading_err)) > heading_threshold
    )
    if goal_dist > threshold or off_heading:
        out[stop_index] = -1.0
    return out


def nav_goal_distance(obs: dict, key: str = "goal_polar") -> float:
    """Distance to the nav goal from the nav skill's own polar goal sensor (r, theta...)."""
    if key not in obs:
        raise KeyError(f"nav stop-masking needs observation {key!r}; got {sorted(obs)}")
    return float(np.asarray(obs[key]).reshape(-1)[0])


def nav_goal_heading(obs: dict, key: str = "goal_heading") -> float | None:
    """Heading error (rad, wrapped goal yaw − robot yaw) from the nav's own goal-heading
    sensor; None when the observation has none (the heading mask then does nothing)."""
    if key not in obs:
        return None
    return float(np.asarray(obs[key]).reshape(-1)[0])
