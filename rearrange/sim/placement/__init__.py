"""Where the robot may stand: one home for robot placement.

- `footprints`: the base's 2-D collision check (`Footprints`, `SwingingParts`), the boxes
  `RearrangeSim` blocks base moves with;
- `clearance`: whether the resting robot (arm, held object) touches the scene at a pose;
- `spawns`: `RobotPlacement`, the one pose test (`pose_ok`) and the spawn samplers the
  episode generator draws starts and nav goals with;
- `work_poses`: where to stand to open or close a door or drawer;
- `stand_poses`: the same tests on the live sim, for the HAB executor's nav goals and the
  base-moving oracles.

Plain numpy over the layout and the NavMap; the arm's shape is measured once from the
MuJoCo Fetch model (`clearance.arm_discs`).
"""

from rearrange.sim.placement.clearance import RobotClearance, arm_discs
from rearrange.sim.placement.footprints import Footprints, SwingingParts
from rearrange.sim.placement.spawns import (
    NoPlacement,
    PlacementConfig,
    RobotPlacement,
    shoulder_reach,
)
from rearrange.sim.placement.stand_poses import (
    COMFORT_REACH,
    FAR_REACH,
    best_ready_pose,
    held_disc_now,
    in_ready_pose,
    nav_goal_pose,
    placement_now,
    ready_pose,
)
from rearrange.sim.placement.work_poses import (
    WORK_REACH,
    articulation_work_pose,
    fridge_hinge,
    handle_travel_ends,
)

__all__ = [
    "COMFORT_REACH",
    "FAR_REACH",
    "WORK_REACH",
    "Footprints",
    "NoPlacement",
    "PlacementConfig",
    "RobotClearance",
    "RobotPlacement",
    "SwingingParts",
    "arm_discs",
    "articulation_work_pose",
    "best_ready_pose",
    "fridge_hinge",
    "handle_travel_ends",
    "held_disc_now",
    "in_ready_pose",
    "nav_goal_pose",
    "placement_now",
    "ready_pose",
    "shoulder_reach",
]
