"""What each skill is, defined once (DESIGN.md §4, the Habitat 2.0 skill definitions).

A skill is one `SkillDef`: its action parts, step limits, reward coefficients, success
target, grip rule, sensors, articulation, episode builder and PDDL actions, as plain data.
`SKILLS` holds the package's seven; `register_skill` adds one from outside
(docs/ADDING_A_SKILL.md). Each layer above keeps its own registry of what it implements,
keyed by skill name or by the names a definition gives (a grip rule, a sensor, an episode
builder), and `tests/test_skill_registry_coverage.py` checks that every registry covers
every skill.

Everything here is plain data over numpy, so every layer reads it: the episode generator
(sim), the skill envs (tasks), the runtime skills, the planner, the training config and the
HAB evaluation. Nothing in it imports another part of the package.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# ---------------------------------------------------------------------------------- actions

ARM_DOF = 7  # arm joint deltas in [-1, 1] x 0.0125 rad
BASE_DOF = 2  # linear, angular base velocity
PART_WIDTHS = {"arm": ARM_DOF, "grip": 1, "base": BASE_DOF, "stop": 1}


@dataclass(frozen=True)
class ActionLayout:
    """Where each action part sits in a skill's flat action vector.

    Parts are "arm" (7 joint deltas), "grip" (1, >= 0 grasp), "base" (2: linear, angular)
    and "stop" (1, >= 0 stop). A part that the skill does not have is None.
    """

    arm: slice | None = None
    grip: int | None = None
    base: slice | None = None
    stop: int | None = None
    size: int = 0

    @staticmethod
    def from_parts(parts: list[tuple[str, int]]) -> ActionLayout:
        """Builds a layout from an ordered list of (part name, width)."""
        kwargs: dict[str, Any] = {}
        start = 0
        for part, width in parts:
            if part in ("arm", "base"):
                kwargs[part] = slice(start, start + width)
            elif part in ("grip", "stop"):
                kwargs[part] = start
            else:
                raise ValueError(f"unknown action part {part!r}; expected arm, grip, base, stop")
            start += width
        return ActionLayout(size=start, **kwargs)

    def compose(
        self,
        arm: np.ndarray | None = None,
        grip: float | None = None,
        base: np.ndarray | None = None,
        stop: bool = False,
    ) -> np.ndarray:
        """A flat action in [-1, 1]; missing parts are zero, stop is +1 / -1."""
        a = np.zeros(self.size, dtype=np.float32)
        if self.arm is not None and arm is not None:
            a[self.arm] = arm
        if self.grip is not None and grip is not None:
            a[self.grip] = grip
        if self.base is not None and base is not None:
            a[self.base] = base
        if self.stop is not None:
            a[self.stop] = 1.0 if stop else -1.0
        return np.clip(a, -1.0, 1.0)


# ---------------------------------------------------------------------------------- target


@dataclass
class SkillTarget:
    """What a skill acts on. Fields a skill does not use stay None.

    obj_index: episode object index (pick; place: the held object).
    goal_pos: world position to place the object at (place).
    nav_goal: (x, y, yaw) in the world the nav skill drives to.
    articulation: "fridge" | "drawer_0" | "drawer_1" ... (open / close skills).
    art_target: joint value the open / close skill drives its articulation to.
    receptacle: receptacle of the goal (place) or of the object (pick); informative.
    """

    obj_index: int | None = None
    goal_pos: Any = None  # 3 floats (array or tuple)
    nav_goal: Any = None  # 3 floats (array or tuple)
    articulation: str | None = None
    art_target: float | None = None
    receptacle: str | None = None


# ---------------------------------------------------------------------------------- success


@dataclass
class Thresholds:
    """Success thresholds (Habitat 2.0 values)."""

    ee_rest: float = 0.15  # m, EE to resting position
    place: float = 0.15  # m, object to goal
    # m: place may let go only with the object this close to its goal (the release mask,
    # tasks/grip_rules.py); the success radius by default. Not a Habitat threshold: a place
    # trained to let go nearer leaves the chain's drift room inside the success radius.
    place_release: float = 0.15
    # m per step: > 0 makes place judge a released object once it has come to rest (moved
    # less than this in the last step) and fail it ("drop") if it slides out of the success
    # radius first; 0 (off): success the moment it is inside (Habitat's). Not a Habitat
    # threshold: teachers trained without it let go with the arm moving and throw the object.
    place_settle: float = 0.0
    nav_dist: float = 1.5  # m, geodesic
    nav_angle: float = 0.2617993877991494  # rad (15 degrees)
    articulation: float = 0.05  # joint units (rad for the fridge hinge, m for drawers)
    fridge_open: float = 1.2208  # rad
    drawer_open: float = 0.45  # m


SUCCESS = Thresholds()  # the defaults, for code that takes no config

# ---------------------------------------------------------------------------------- rewards


@dataclass
class RewardConfig:
    """Reward coefficients. Every task reports all of its terms every step (zeros included)."""

    # pick / place: change of the EE->object (pick) / object->goal (place) distance, then of
    # the EE->rest distance once the object is held (pick) / released (place).
    dist: float = 2.0
    pick: float = 2.0  # bonus for grasping the target object (pick)
    place: float = 5.0  # bonus for releasing the object within the place threshold (place)
    drop: float = 0.5  # penalty for letting the object go where it should not; ends episode
    wrong_pick: float = 0.5  # penalty for grasping a non-target object; ends episode
    constraint: float = 1.0  # penalty on a step where the suction hold was pulled apart
    force: float = 1e-4  # per newton of robot<->world contact force ...
    force_cap: float = 0.01  # ... capped at this per step
    use_force: bool = True  # nav: force penalty only for training (VER paper)
    force_end: float = 1.0  # penalty when the force limit ends the episode (Habitat: 1.0)
    slack: float = 0.005  # penalty every step (makes the policy hurry)
    success: float = 10.0
    # nav
    angle: float = 1.0  # change of |heading error|, only inside `angle_radius`
    angle_radius: float = 3.0
    # open / close
    art_dist: float = 10.0  # change of |joint - target|
    grasp: float = 5.0  # first grasp of the handle
    marker_dist: float = 1.0  # change of EE->handle distance before the joint reaches target
    ee_dist: float = 1.0  # change of EE->rest distance after the joint reaches target
    ee_round_door: bool = True  # ... measured round an open door's panel (tasks/door_path.py)
    at_state: float = 5.0  # first time the joint is within threshold of its target
    wrong_grasp: float = 5.0  # grasping an object instead of the handle; ends episode


# ---------------------------------------------------------------------------------- definition

# What a skill acts on, i.e. which SkillTarget fields its episodes fill: "object" (obj_index
# and goal_pos of the episode's first target), "nav_goal" (extras["nav_goal"]) or
# "articulation" (extras["articulation"] and the joint value it drives it to).
TARGET_KINDS = ("object", "nav_goal", "articulation")


@dataclass(frozen=True)
class ArticulatedSkill:
    """An open/close skill: which articulations it works (name prefix) and which way."""

    articulation: str  # "fridge" or "drawer" (the drawers are drawer_0, drawer_1, ...)
    opens: bool  # True: drives the joint to open (it starts closed); False: to closed


# Runtime skills (the HRL executor). DESIGN §6: default skill step limit 200, nav 300.
DEFAULT_STEP_LIMIT = 200
NAV_STEP_LIMIT = 300
# HAB apartments need more: nav paths reach ~13 m, ~400 steps at 1 m/s plus turns. A
# base-moving (NoNav) manipulation skill navigates first, so it gets a nav's worth of steps
# on top of its own (`step_limit_for`).
NAV_STEP_LIMIT_HAB = 500


# The sensors the "state_rays" obs preset adds to "state": nav's range scan for a skill with
# `SkillDef.ray_scan`, the arm clearance scan for one with `arm_scan` (tasks/sensors.py). A
# policy whose observations hold either was trained under that preset.
SCAN_SENSORS = ("rays", "arm_rays")


@dataclass(frozen=True)
class SkillDef:
    """One skill, everything the layers above need to know about it, as plain data.

    The names it gives (`sensors`, `grip_rule`, `episode_builder`, `pddl_actions`) are keys
    of the registries of the layer that implements them (tasks/sensors.py,
    tasks/grip_rules.py, sim/episodes/builders.py, planner/domain.pddl).
    """

    name: str
    actions: tuple[str, ...]
    """Action parts in order, without base movement: "arm", "grip", "base", "stop"
    (PART_WIDTHS). A skill whose parts include "base" always drives; one without gets
    "base" appended in its "+ base movement" variant."""
    step_limit: int
    """The skill task env's episode step limit (Habitat's; DESIGN §4.2)."""
    target: str
    """What it acts on (TARGET_KINDS)."""
    sensors: tuple[str, ...]
    """The state sensors it observes (tasks/sensors.py), with base movement."""
    episode_builder: str
    """The episode builder that draws its training episodes (sim/episodes/builders.py)."""
    grip_rule: str | None = None
    """How its grip command is overridden (tasks/grip_rules.py); needed with a grip part."""
    rewards: RewardConfig = field(default_factory=RewardConfig)
    """Its reward coefficients (`default_rewards` hands out a copy)."""
    base_movement_extra_steps: int = 0
    """Steps its "+ base movement" task env gets on top of `step_limit`."""
    base_movement_sensors: tuple[str, ...] = ()
    """Sensors of `sensors` it observes only when it drives the base (DESIGN §8.2)."""
    ray_scan: bool = False
    """Whether it also observes the obstacle range scan under the "state_rays" preset."""
    arm_scan: bool = False
    """Whether it also observes the arm clearance scan ("arm_rays": distances from the EE,
    wrist and elbow to what blocks the arm) under the "state_rays" preset."""
    runtime_step_limit: int = DEFAULT_STEP_LIMIT
    """A runtime skill's own step cap, fixed base (`step_limit_for`)."""
    hab_step_limit: int | None = None
    """Its step cap in HAB episodes when that differs from its own (HAB_STEP_LIMITS)."""
    articulation: ArticulatedSkill | None = None
    """Open/close skills: the articulation it works and which way."""
    starts_holding: bool = False
    """Its episodes start with the target object held (place)."""
    pddl_actions: tuple[str, ...] = ()
    """The PDDL domain's actions that run this skill (planner/domain.pddl); () for a skill
    the planner never calls."""

    def __post_init__(self) -> None:
        unknown = [p for p in self.actions if p not in PART_WIDTHS]
        if unknown or len(set(self.actions)) != len(self.actions):
            raise ValueError(
                f"skill {self.name!r}: action parts {self.actions} must be distinct names "
                f"from {', '.join(PART_WIDTHS)}"
            )
        if self.target not in TARGET_KINDS:
            raise ValueError(
                f"skill {self.name!r}: target {self.target!r}; use one of {', '.join(TARGET_KINDS)}"
            )
        if (self.target == "articulation") != (self.articulation is not None):
            raise ValueError(
                f"skill {self.name!r}: an articulation target needs `articulation` (and only it)"
            )
        if "grip" in self.actions and self.grip_rule is None:
            raise ValueError(f"skill {self.name!r}: a grip part needs a grip rule")

    @property
    def has_base_movement_variant(self) -> bool:
        """Whether it has a "+ base movement" variant (it does not always drive)."""
        return "base" not in self.actions

    @property
    def uses_arm(self) -> bool:
        return "arm" in self.actions

    def layout(self, base_movement: bool = False) -> ActionLayout:
        parts = list(self.actions)
        if base_movement and self.has_base_movement_variant:
            parts.append("base")
        return ActionLayout.from_parts([(p, PART_WIDTHS[p]) for p in parts])


# ---------------------------------------------------------------------------------- the skills

MANIPULATION_ACTIONS = ("arm", "grip")
# goal_from_obj (place): the goal relative to the held object itself; obj_goal_sensor (goal
# from the EE) alone cannot tell where the object hangs, which varies with where a learned
# pick's suction cup touched it. goal_dir (nav): the two angles of goal_polar / goal_heading
# as (cos, sin) pairs; the raw wrapped angles jump from +pi to -pi with the goal straight
# behind, and the stop decision needs the heading error near 0, where (cos, sin) stays smooth.
# art_joint_to_target (open/close, base movement only): without it a base-moving policy
# cannot tell "not grasped yet" from "opened and released"; from the fixed work pose the
# handle's place already tells the joint, and with it fixed-base open_cab stopped learning
# (docs/DESIGN.md §8.2). Checkpoints trained before a sensor was added ignore its key.
ART_SENSORS = ("joint", "ee_pos", "is_holding", "marker_rel_pos", "art_joint_to_target")
# Closing is rewarded by the EE-distance and marker-distance terms only.
CLOSE_REWARDS = RewardConfig(art_dist=0.0, grasp=0.0, at_state=0.0, ee_dist=1.0, marker_dist=1.0)

NAV = SkillDef(
    name="nav",
    actions=("base", "stop"),  # nav never moves the arm
    step_limit=400,
    target="nav_goal",
    sensors=("joint", "goal_polar", "goal_heading", "goal_dir"),
    episode_builder="object",  # ends where a pick of the episode's object would start
    grip_rule="keep_current",  # whatever the robot holds stays held (no grip part of its own)
    rewards=RewardConfig(dist=1.0, angle=1.0),
    ray_scan=True,
    runtime_step_limit=NAV_STEP_LIMIT,
    hab_step_limit=NAV_STEP_LIMIT_HAB,
    pddl_actions=("nav",),
)
PICK = SkillDef(
    name="pick",
    actions=MANIPULATION_ACTIONS,
    step_limit=300,
    target="object",
    sensors=("joint", "is_holding", "ee_pos", "obj_start_sensor", "relative_resting_position"),
    episode_builder="object",
    grip_rule="keep_on_when_holding",
    arm_scan=True,
    # pick-at-container: the pick skill run from where the robot opened the container
    pddl_actions=("pick", "pick-at-container"),
)
PLACE = SkillDef(
    name="place",
    actions=MANIPULATION_ACTIONS,
    step_limit=300,
    target="object",
    sensors=(
        "joint",
        "is_holding",
        "ee_pos",
        "obj_goal_sensor",
        "relative_resting_position",
        "goal_from_obj",
    ),
    episode_builder="object",
    grip_rule="keep_on_until_goal",
    arm_scan=True,
    starts_holding=True,
    pddl_actions=("place",),
)


def _articulated(name: str, articulation: str, opens: bool, **limits: Any) -> SkillDef:
    return SkillDef(
        name=name,
        actions=MANIPULATION_ACTIONS,
        target="articulation",
        sensors=ART_SENSORS,
        episode_builder="articulation",
        grip_rule="hold_handle_until_target",
        rewards=RewardConfig() if opens else CLOSE_REWARDS,
        base_movement_sensors=("art_joint_to_target",),
        arm_scan=True,  # they work doors and drawers round the arm
        articulation=ArticulatedSkill(articulation, opens),
        pddl_actions=(name.replace("_", "-"),),
        **limits,
    )


# Step limits of the open/close tasks: the Habitat 2.0 200, but open_fridge: in a world that
# blocks the arm (SimConfig.world_blocks_robot) the gripper must come back round the open
# door's free edge to its rest pose, which takes the scripted skill 209-291 steps
# (benchmarks/results/oracle_blocking/); at 200 no honest episode succeeds. Their "+ base
# movement" variants start at `robot_start_far` (up to 2 m geodesic away, ±30°): driving to a
# pose that keeps the whole handle travel in reach takes up to ~100 steps on top of the
# fixed-base work (the scripted oracles needed ~180 of the 200 from the work pose alone);
# open_fridge's 300 already covers it (96 % scripted at 300).
# open_fridge keeps its 300 in HAB episodes too (a runtime skill's own cap is 200).
OPEN_FRIDGE = _articulated("open_fridge", "fridge", True, step_limit=300, hab_step_limit=300)
CLOSE_FRIDGE = _articulated(
    "close_fridge", "fridge", False, step_limit=200, base_movement_extra_steps=100
)
OPEN_CAB = _articulated("open_cab", "drawer", True, step_limit=200, base_movement_extra_steps=100)
CLOSE_CAB = _articulated(
    "close_cab", "drawer", False, step_limit=200, base_movement_extra_steps=100
)

# ---------------------------------------------------------------------------------- registry

SKILLS: dict[str, SkillDef] = {}
# Views of SKILLS for the callers that read them by name; register_skill keeps the dicts in
# step. SKILL_NAMES and MANIPULATION_SKILLS name the package's own skills (`skill_names()`
# includes registered ones).
ARTICULATED_SKILLS: dict[str, ArticulatedSkill] = {}
HAB_STEP_LIMITS: dict[str, int] = {}  # per-skill caps in HAB episodes (the episode: 3000)


def register_skill(definition: SkillDef) -> SkillDef:
    """Adds a skill (once; registering an equal definition again is a no-op, so a module
    that registers on import may be imported twice). Returns it."""
    known = SKILLS.get(definition.name)
    if known is not None and known != definition:
        raise ValueError(f"skill {definition.name!r} is already defined differently")
    SKILLS[definition.name] = definition
    if definition.articulation is not None:
        ARTICULATED_SKILLS[definition.name] = definition.articulation
    if definition.hab_step_limit is not None:
        HAB_STEP_LIMITS[definition.name] = definition.hab_step_limit
    return definition


def skill_def(name: str) -> SkillDef:
    """The definition of skill `name`; ValueError naming the known skills."""
    try:
        return SKILLS[name]
    except KeyError:
        raise ValueError(f"unknown skill {name!r}; known skills: {', '.join(SKILLS)}") from None


def skill_names() -> tuple[str, ...]:
    """Every defined skill: the package's seven first, then registered ones."""
    return tuple(SKILLS)


for _d in (NAV, PICK, PLACE, OPEN_FRIDGE, CLOSE_FRIDGE, OPEN_CAB, CLOSE_CAB):
    register_skill(_d)

SKILL_NAMES = skill_names()
# The skills that work with the arm (all but nav); with base movement they also drive.
MANIPULATION_SKILLS = tuple(n for n in SKILL_NAMES if SKILLS[n].uses_arm)

# ---------------------------------------------------------------------------------- derived


def action_layout(skill: str, base_movement: bool = False) -> ActionLayout:
    """A skill's action layout. Manipulation: [7 arm deltas, grip] (+ [linear, angular] base
    with base movement); nav: [linear, angular, stop] (nav never moves the arm)."""
    return skill_def(skill).layout(base_movement)


def task_step_limit(skill: str, base_movement: bool = False) -> int:
    """The skill task env's episode step limit (`SkillDef.step_limit`, plus
    `base_movement_extra_steps` for the base-movement variants)."""
    d = skill_def(skill)
    return d.step_limit + (d.base_movement_extra_steps if base_movement else 0)


def step_limit_for(skill: str, base_movement: bool = False) -> int:
    """A runtime skill's own step cap (its `is_done` fires there).

    Base-moving skills get a HAB nav's 500 steps on top of the 200: in TP-SRL(NoNav) a
    pick/place/open/close must first drive there itself (the plan has no nav step). This
    is deliberately larger than the skill task envs' limits (`task_step_limit`: 300, and
    200 + 100 for the base-moving articulated tasks): those envs truncate first, so in
    training and in `oracle_success` the env's limit is the one that binds; the cap here
    only matters in HAB episodes, whose 3000-step budget bounds the total."""
    d = skill_def(skill)
    drives = base_movement and d.has_base_movement_variant
    return d.runtime_step_limit + (NAV_STEP_LIMIT_HAB if drives else 0)


def default_rewards(skill: str) -> RewardConfig:
    """The skill's reward coefficients (DESIGN §4): nav's distance term weighs 1.0; closing
    is rewarded by EE-distance and marker-distance terms only."""
    return dataclasses.replace(skill_def(skill).rewards)


def articulation_shortfall(skill: str, joint: float, target: float) -> float:
    """How far an open/close skill's joint still is from its target, in the skill's
    direction (0 at or past it). An open joint pulled past its target counts as open (a
    drawer at its 0.5 m stop against the 0.45 m target), as the HAB predicates say
    (opened: joint >= threshold); |joint - target| refused exactly that, and the
    base-moving open_cab, pulling with the base, stopped at the stop and never succeeded."""
    if ARTICULATED_SKILLS[skill].opens:
        return max(0.0, float(target) - float(joint))
    return max(0.0, float(joint) - float(target))
