"""Episode generation settings: the task names, the generation config and its errors."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rearrange.sim.episode_types import HAB_SCENARIOS, SPLITS
from rearrange.sim.layout_types import Layout
from rearrange.sim.placement import PlacementConfig
from rearrange.skill_spec import SKILL_NAMES, skill_names


class _TaskNames(Sequence[str]):
    """Every task with episodes: the package's skills, the HAB scenarios, then the skills
    registered from outside (`skill_spec.register_skill`). A task's index seeds its
    episodes (`generation.py`), so registering a skill changes no other task's episodes."""

    def _names(self) -> tuple[str, ...]:
        added = tuple(n for n in skill_names() if n not in SKILL_NAMES)
        return SKILL_NAMES + HAB_SCENARIOS + added

    def __getitem__(self, index):
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __repr__(self) -> str:
        return repr(self._names())


TASKS: Sequence[str] = _TaskNames()


class EpisodeError(ValueError):
    """A bad task/split name or an unreadable episode file (one-line message)."""


@dataclass(frozen=True)
class EpisodeGenConfig(PlacementConfig):
    """Episode generation: the robot placement rules (`PlacementConfig`) plus what goes
    into the scene and where the arm starts."""

    min_objects: int = 5
    max_objects: int = 10  # inclusive
    object_gap: float = 0.01  # free space between object footprints (m)
    fridge_pick_prob: float = 0.2  # pick episodes with the target on the open fridge shelf
    # ... and up to this many other objects on the fridge shelves beside it (uniform 0..N;
    # Prepare Groceries has two objects in the fridge, and a pick trained with the target
    # alone there grabs the other one)
    fridge_pick_others: int = 0
    # pick episodes with the target in an open cabinet drawer (0: never; as fridge_pick_prob,
    # drawn after it): Set Table's bowl comes from a drawer, and a pick trained on open
    # receptacles only failed 44 of the 48 failed Set Table picks, all drawer picks
    drawer_pick_prob: float = 0.0
    # ... with the drawer pulled out this share of its travel (uniform in the range; (1, 1):
    # fully open, no draw). HAB's fixed-base open_cab stops at its success threshold, 0.41 of
    # the 0.45 m, where a pick trained on fully open drawers took 1 of 9
    drawer_pick_open: tuple[float, float] = (1.0, 1.0)
    # ... and the robot standing with the object this far from its shoulder (m; None: the
    # reach band of every close spawn, reach_min..reach_max, which puts the base 0.68-0.87 m
    # from a drawer's object; HAB's nav leaves it 0.44-0.72 m away)
    drawer_pick_reach: tuple[float, float] | None = None
    # pick episodes (open receptacles) standing back: the target reach_max..place_far_reach
    # (0.85-1.0 m) from the shoulder, where the HAB executor's relaxed stand poses leave an
    # object deep on a table (no close stand reaches it); 0: never, every pick within
    # reach_max. Why: in tidy_house every such depth pick failed, most frozen with the
    # gripper on the table short of the object (benchmarks/RESULTS.md, "Far picks")
    pick_far_prob: float = 0.0
    # pick episodes (open receptacles, fridge shelves) starting where a learned nav stops: a
    # stand pose like the HAB executor's nav goal (the target pick_offset_stand from the
    # shoulder, facing it: its 0.75 m goal, relaxed up to FAR_REACH where no closer pose
    # fits) moved pick_offset_range metres in a uniform direction, heading ± pick_offset_yaw,
    # the target within pick_offset_reach of the shoulder; 0: never. Why: in tidy_house and
    # prepare_groceries (seed 0) the depth pick failed 46 of the 82 picks that started with
    # the object 0.9 m or more from the shoulder, 2 of the 142 nearer (benchmarks/RESULTS.md,
    # "Picks where the nav stops")
    pick_offset_prob: float = 0.0
    pick_offset_range: tuple[float, float] = (0.1, 0.35)
    pick_offset_yaw: float = math.radians(15)
    pick_offset_stand: tuple[float, float] = (0.7, 1.0)
    pick_offset_reach: tuple[float, float] = (0.3, 1.1)
    # place episodes whose goal is on the open fridge's shelf (0: never; a place trained on
    # open receptacles only misses fridge goals in Prepare Groceries)
    fridge_place_prob: float = 0.0
    nav_min_dist: float = 2.0  # nav starts at least this far (geodesic) from the goal
    # nav episodes starting at a close spawn in front of another object (where every HAB nav
    # leg starts: right after a pick or place, facing furniture) instead of anywhere (0);
    # off by default: fine-tuning the nav with it did not help in HAB (benchmarks/RESULTS.md)
    nav_stand_start_prob: float = 0.0
    # nav episodes whose target object lies on the open fridge's shelf (as fridge_pick_prob
    # for pick; 0: never, the goals are on open receptacles with the fridge closed); off by
    # default: the nav's misses at the fridge were stand poses the base did not fit, not a
    # nav gap (benchmarks/RESULTS.md)
    nav_fridge_prob: float = 0.0
    # nav episodes starting anywhere closer than nav_min_dist (geodesic) to the goal, any
    # heading (0: never, every start at least nav_min_dist away), as HAB nav legs to the next
    # object or goal on the same furniture start; a nav never trained there stops short
    nav_near_start_prob: float = 0.0
    # nav episodes starting with another object held at the carry pose (CARRY_EE_OFFSET,
    # the arm where the HAB arm reset leaves it: `arm_starts.carry_arm`), as every HAB nav
    # leg to a place goal does; losing it ends the episode as a failure (NavEnv). 0: never.
    # Why: the held object sticks out ~0.4 m past the base's disc, and the arm and object
    # change the head view; the shipped depth nav, never trained carrying, succeeds on 67 %
    # of 100 val episodes that all start carrying (73 % empty-handed; its state teacher 84 %
    # of 50: benchmarks/RESULTS.md, "The carry pose in view")
    nav_hold_prob: float = 0.0
    max_attempts: int = 30  # scenes tried per episode before giving up
    # Pick and place start with the arm where the previous skill left it (docs/DESIGN.md
    # §8.2). A learned pick stops as soon as its EE is within the 0.15 m rest tolerance (HAB:
    # 0.13-0.15 m from rest, ~0.12 m low, joints up to ~0.9 rad off rest) holding the
    # object wherever its suction touched it; a place ends the same way. Skills trained only
    # from the exact rest pose (and place from one grasp) fail from such arms.
    start_rest_prob: float = 0.2  # share of starts with the arm exactly at rest
    arm_start_ee_tol: float = 0.15  # EE to rest (the pick task's ee_rest threshold)
    arm_start_low_prob: float = 0.6  # EE on the lower shell of that ball (`_ee_offset_target`)
    # uniform half-range per arm joint around rest (rad), EE kept within arm_start_ee_tol
    arm_start_spread: tuple[float, ...] = (0.8, 0.4, 0.8, 0.6, 1.0, 0.6, 1.0)
    grasp_top_prob: float = 0.5  # grasps through the suction cup's face (else any side)
    grasp_top_cone: float = math.radians(40)  # spread of those around the gripper axis
    grasp_max_tilt: float = math.radians(20)  # held object's tilt from upright
    grasp_gap: float = 0.005  # m between object and gripper (suction grasps within 0.02)


LayoutFn = Callable[[int, str], Layout]


def check_task_split(task: str, split: str) -> None:
    if task not in TASKS:
        raise EpisodeError(f"unknown task {task!r}; use one of: {', '.join(TASKS)}")
    if split not in SPLITS:
        raise EpisodeError(f"unknown split {split!r}; use one of: {', '.join(SPLITS)}")
