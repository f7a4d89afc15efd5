"""HRL action masks applied to skills at deployment (DESIGN §6, VER Appendix B).

Pure functions on flat action arrays; each returns a new array and never mutates its input.

- Nav stop-masking: at evaluation the nav skill's stop is ignored while its own goal sensor
  says the target is more than 2 m away (no privileged information: the distance is part of
  the skill's observations).
- Grip masking: pick keeps the grip on once it holds the object, place keeps it off once it
  has released the object, nav keeps whatever the robot currently holds.
"""

from __future__ import annotations

import numpy as np

STOP_MASK_DIST = 2.0

# Grip rules per skill: how the grip dimension is overridden.
GRIP_KEEP_ON_WHEN_HOLDING = "keep_on_when_holding"
GRIP_KEEP_OFF_AFTER_RELEASE = "keep_off_after_release"
GRIP_KEEP_CURRENT = "keep_current"
GRIP_RULES = {
    "pick": GRIP_KEEP_ON_WHEN_HOLDING,
    "place": GRIP_KEEP_OFF_AFTER_RELEASE,
    "nav": GRIP_KEEP_CURRENT,
}


def mask_nav_stop(
    action: np.ndarray, stop_index: int, goal_dist: float, threshold: float = STOP_MASK_DIST
) -> np.ndarray:
    """Forces "don't stop" (−1) in the stop dimension while the goal is farther than threshold."""
    out = np.array(action, dtype=np.float32, copy=True)
    if goal_dist > threshold:
        out[stop_index] = -1.0
    return out


def grip_for_hold(is_holding: bool) -> float:
    """The grip command that keeps the current hold: +1 keeps a held object, −1 stays open."""
    return 1.0 if is_holding else -1.0


def mask_grip(
    action: np.ndarray,
    grip_index: int | None,
    rule: str | None,
    is_holding: bool,
    has_released: bool = False,
) -> np.ndarray:
    """Overrides the grip dimension by `rule` (see GRIP_RULES); no-op without a grip dimension."""
    out = np.array(action, dtype=np.float32, copy=True)
    if grip_index is None or rule is None:
        return out
    if rule == GRIP_KEEP_ON_WHEN_HOLDING:
        if is_holding:
            out[grip_index] = 1.0
    elif rule == GRIP_KEEP_OFF_AFTER_RELEASE:
        if has_released:
            out[grip_index] = -1.0
    elif rule == GRIP_KEEP_CURRENT:
        out[grip_index] = grip_for_hold(is_holding)
    else:
        raise ValueError(
            f"unknown grip rule {rule!r}; expected one of {sorted(GRIP_RULES.values())}"
        )
    return out


def nav_goal_distance(obs: dict, key: str = "goal_polar") -> float:
    """Distance to the nav goal from the nav skill's own polar goal sensor (r, theta...)."""
    if key not in obs:
        raise KeyError(f"nav stop-masking needs observation {key!r}; got {sorted(obs)}")
    return float(np.asarray(obs[key]).reshape(-1)[0])
