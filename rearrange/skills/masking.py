"""HRL action masks applied to skills at deployment (DESIGN §6, VER Appendix B).

Pure functions on flat action arrays; each returns a new array and never mutates its input.

- Nav stop-masking: at evaluation the nav skill's stop is ignored while its own goal sensor
  says the target is more than 2 m away (no privileged information: the distance is part of
  the skill's observations).
- Grip masking (defined in rearrange/tasks/grip_rules.py, re-exported here): the skill envs
  apply the same rule while training, so deployment changes nothing the policy has not seen.
"""

from __future__ import annotations

import numpy as np

from rearrange.tasks.grip_rules import (  # noqa: F401  (re-exported: the one home is tasks)
    GRIP_KEEP_CURRENT,
    GRIP_KEEP_OFF_AFTER_RELEASE,
    GRIP_KEEP_ON_UNTIL_GOAL,
    GRIP_KEEP_ON_WHEN_HOLDING,
    GRIP_RULES,
    grip_for_hold,
    mask_grip,
    object_near_goal,
)

STOP_MASK_DIST = 2.0


def mask_nav_stop(
    action: np.ndarray, stop_index: int, goal_dist: float, threshold: float = STOP_MASK_DIST
) -> np.ndarray:
    """Forces "don't stop" (−1) in the stop dimension while the goal is farther than threshold."""
    out = np.array(action, dtype=np.float32, copy=True)
    if goal_dist > threshold:
        out[stop_index] = -1.0
    return out


def nav_goal_distance(obs: dict, key: str = "goal_polar") -> float:
    """Distance to the nav goal from the nav skill's own polar goal sensor (r, theta...)."""
    if key not in obs:
        raise KeyError(f"nav stop-masking needs observation {key!r}; got {sorted(obs)}")
    return float(np.asarray(obs[key]).reshape(-1)[0])
