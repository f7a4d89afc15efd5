"""Plain-data episodes for skill tasks and HAB scenarios (no MuJoCo imports).

A skill episode has one target; a HAB episode has several, in the order the
scenario lists them. Episodes are saved as JSON (see `episodes/json_io.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

HAB_SCENARIOS = ("tidy_house", "prepare_groceries", "set_table")
SPLITS = ("train", "val")


@dataclass
class ObjectPlacement:
    """One rigid object: its YCB-like type, pose and the receptacle it rests on."""

    obj_type: str  # key into objects.OBJECT_TYPES, e.g. "cracker_box"
    pos: tuple[float, float, float]
    quat: tuple[float, float, float, float]  # w, x, y, z
    receptacle: str


@dataclass
class Target:
    """Move object `obj_index` from where it is to `goal_pos` on `goal_receptacle`."""

    obj_index: int
    goal_pos: tuple[float, float, float]
    goal_receptacle: str


@dataclass
class Episode:
    episode_id: str
    task: str  # one of skill_spec.SKILL_NAMES or HAB_SCENARIOS
    split: str
    scene_seed: int  # the Layout is apartment.generate_layout(scene_seed, split)
    robot_start: tuple[float, float, float]  # x, y, yaw
    objects: list[ObjectPlacement] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    # articulation name -> initial joint value (missing means closed)
    articulations: dict[str, float] = field(default_factory=dict)
    # skill-specific extras, e.g. nav goal {"nav_goal": [x, y, yaw]}, "holding": obj index
    extras: dict = field(default_factory=dict)
