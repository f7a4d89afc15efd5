"""Episode datasets: deterministic generation for the skill tasks and HAB scenarios, JSON I/O.

Files: `config` (task names, `EpisodeGenConfig`), `scene_draw` (objects on receptacles),
`arm_starts` (where the previous skill left the arm and the held object), `builders` (one
per task), `generation` (scene pools, `generate_episodes`), `json_io` (save / load). Robot
poses come from `rearrange.sim.placement`.

Every episode is generated from its own RNG stream `(seed, task, split, index)`, so
episode i never depends on how many episodes come before it. Scenes come from the split's
seed set (`SCENE_SEEDS`) through small pools: each block of `EPISODES_PER_BLOCK`
consecutive episodes draws from `SCENES_PER_BLOCK` scenes picked by `(seed, split, block)`
(the same for every task), so scenes are shared and their layout and NavMap (kept in an
LRU cache across calls) are built once. A draw that cannot be completed (no room on a
receptacle, no spawn point) is retried on another scene of the pool, then on any scene.

Conventions the tasks rely on (beyond `episode_types.py`):
- skill tasks have exactly one Target; pick's goal is a valid place pose on another
  receptacle (so pick and place episodes share a format); nav's `extras["nav_goal"]` is
  `[x, y, yaw]` in front of the target object's receptacle, facing it exactly, with the
  object within the arm's reach (a valid pick start without the yaw noise).
- pick, place, open/close: `robot_start` is a *close* spawn: the target (object, goal or
  handle at the episode's joint value) is within `reach_max` of the shoulder, heading
  facing it ± `yaw_noise` (Habitat 2.0's no-base-movement skills). `extras
  ["robot_start_far"]` = [x, y, yaw] is a *far* spawn for the "+ base movement" variants:
  within `spawn_max_dist` geodesic of the target, facing it ± `yaw_noise`.
- pick, place: `extras["arm_start"]` (7 arm joints) is where the previous skill left the
  arm (docs/DESIGN.md §8.2): exactly at rest or with the EE within the skills' 0.15 m rest
  tolerance (`arm_starts.arm_start`); the sim starts the arm there.
- place: `extras["holding"]` is the held object's index; its ObjectPlacement is where it
  was picked from (the sim moves it into the gripper at reset). The start is drawn like
  the state a pick leaves (`arm_starts.pick_end`): the arm as above and `extras["held_pose"]` (the object's
  pose in the gripper body frame, [x, y, z, qw, qx, qy, qz]: touching the suction cup or
  palm from some side, the object upright up to a tilt, any yaw). The spawn's clearance
  check uses that arm and held object; with no spawn within `reach_max`, it may stand
  back up to `place_far_reach` (the HAB executor's relaxed stand poses).
- open/close tasks: `extras["articulation"]` names the articulation; no targets.
- `articulations` lists every articulation of the layout explicitly.
- every robot pose (starts, far starts, nav goals) passes `RobotPlacement.pose_ok`
  (`rearrange.sim.placement`): the sim's base check, outside an open fridge door's swing,
  and the resting robot (arm measured from the MuJoCo model, plus a held object) touching
  no wall, furniture box, door, drawer or object.
"""

from rearrange.sim.episodes.config import (
    TASKS,
    EpisodeError,
    EpisodeGenConfig,
    LayoutFn,
    check_task_split,
)
from rearrange.sim.episodes.generation import (
    EPISODES_PER_BLOCK,
    SCENE_SEEDS,
    SCENES_PER_BLOCK,
    default_layout_fn,
    generate_episodes,
    scene_assets,
    scene_pool,
)
from rearrange.sim.episodes.json_io import (
    SCHEMA,
    SCHEMA_VERSION,
    episode_from_dict,
    load_episodes,
    save_episodes,
)

__all__ = [
    "EPISODES_PER_BLOCK",
    "SCENES_PER_BLOCK",
    "SCENE_SEEDS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "TASKS",
    "EpisodeError",
    "EpisodeGenConfig",
    "LayoutFn",
    "check_task_split",
    "default_layout_fn",
    "episode_from_dict",
    "generate_episodes",
    "load_episodes",
    "save_episodes",
    "scene_assets",
    "scene_pool",
]
