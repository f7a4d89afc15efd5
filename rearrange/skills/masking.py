"""HRL action masks applied to skills at deployment (DESIGN §6, VER Appendix B).

Pure functions on flat action arrays; each returns a new array and never mutates its input.

- Nav stop-masking (defined in rearrange/tasks/stop_rule.py, re-exported here): the nav
  skill's stop is ignored while its own goal sensor says the target is farther than the mask
  distance: 2 m while training; in HAB the nav's training success radius + 0.5 m
  (`stop_rule.hab_stop_mask_dist`, 1 m for the shipped nav).
- Grip masking (defined in rearrange/tasks/grip_rules.py, re-exported here): the skill envs
  apply the same rule while training, so deployment changes nothing the policy has not seen.
"""

from __future__ import annotations

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
from rearrange.tasks.stop_rule import (  # noqa: F401  (re-exported: the one home is tasks)
    STOP_MASK_DIST,
    hab_stop_mask_dist,
    mask_nav_stop,
    nav_goal_distance,
)
