"""Per-task episode builders: what each task puts in the scene and where the robot starts.

Each builder fills a `SceneDraw` and returns (robot start, targets, extras); see the
conventions in `rearrange.sim.episodes`. A skill's builder is the one its definition names
(`SkillDef.episode_builder`, a key of EPISODE_BUILDERS); a HAB scenario has its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping

from rearrange.sim.episodes.arm_starts import arm_start, pick_end
from rearrange.sim.episodes.scene_draw import NoRoom, SceneDraw
from rearrange.sim.layout_types import Receptacle
from rearrange.sim.objects import OBJECT_TYPES
from rearrange.sim.placement import NoPlacement
from rearrange.skill_spec import ARTICULATED_SKILLS, SKILLS, skill_def


def _is_drawer(r: Receptacle) -> bool:
    return r.in_drawer


def _is_fridge(r: Receptacle) -> bool:
    return r.in_fridge


def _build_pick(sc: SceneDraw, task: str) -> tuple:
    sc.static_doors = True  # pick, place, nav: an open door stays open, it blocks its panel
    open_recs = sc.open_receptacles()
    in_fridge = task == "pick" and sc.rng.random() < sc.cfg.fridge_pick_prob
    if task == "nav" and sc.cfg.nav_fridge_prob > 0:  # no draw at 0: episodes as they were
        in_fridge = sc.rng.random() < sc.cfg.nav_fridge_prob
    in_drawer = (  # no draw at 0: episodes as they were
        task == "pick"
        and not in_fridge
        and sc.cfg.drawer_pick_prob > 0
        and sc.rng.random() < sc.cfg.drawer_pick_prob
    )
    if in_fridge or in_drawer:
        src = sc.pick_receptacle(sc.receptacles(_is_fridge if in_fridge else _is_drawer))
        sc.open_articulations.add(src.container)
    else:
        src = sc.pick_receptacle(open_recs)
    idx = sc.add_object(sc.random_type(), src)
    if in_drawer:  # the receptacle is the closed drawer's floor: ride out with the drawer
        _pull_out(sc, idx, src)
    extras: dict = {}
    if task == "nav" and sc.cfg.nav_hold_prob > 0 and sc.rng.random() < sc.cfg.nav_hold_prob:
        # carrying another object at the carry pose, as a HAB nav leg to a place goal does
        held = sc.add_object(sc.random_type(), sc.pick_receptacle(open_recs))
        sc.held = extras["holding"] = held
        arm, held_pose, sc.arm_discs, sc.held_disc = pick_end(
            sc.rng, OBJECT_TYPES[sc.objects[held].obj_type], sc.cfg, carry=True
        )
        extras["arm_start"], extras["held_pose"] = arm, held_pose
    if in_fridge and sc.cfg.fridge_pick_others > 0:
        shelves = sc.receptacles(_is_fridge)
        for _ in range(int(sc.rng.integers(sc.cfg.fridge_pick_others + 1))):
            try:
                sc.add_object(sc.random_type(), sc.pick_receptacle(shelves))
            except NoRoom:
                pass
    sc.add_clutter(sc.num_objects())
    to_fridge = (
        task == "place"
        and sc.cfg.fridge_place_prob > 0
        and sc.rng.random() < sc.cfg.fridge_place_prob
    )
    if to_fridge:  # a goal on the open fridge's shelf (Prepare Groceries' third object)
        goal_rec = sc.pick_receptacle(sc.receptacles(_is_fridge))
        sc.open_articulations.add(goal_rec.container)
    else:
        goal_rec = sc.pick_receptacle(open_recs, exclude=src.name)
    target = sc.target(idx, goal_rec)
    obj_xy = sc.objects[idx].pos[:2]
    spec = skill_def(task)
    if spec.target == "object":  # pick, place: start within reach of the object or goal
        if spec.starts_holding:
            sc.held = idx
            extras["holding"] = idx
            arm, held_pose, sc.arm_discs, sc.held_disc = pick_end(
                sc.rng, OBJECT_TYPES[sc.objects[idx].obj_type], sc.cfg
            )
            extras["arm_start"], extras["held_pose"] = arm, held_pose
            where = target.goal_pos[:2]
            approach = sc.front_yaw(sc.layout.receptacle(target.goal_receptacle).furniture)
            start = sc.spawn_place(where, approach)
        else:  # the arm as the previous skill (a place, a nav) left it
            extras["arm_start"], sc.arm_discs = arm_start(sc.rng, sc.cfg)
            where, approach = obj_xy, sc.front_yaw(src.furniture)
            band = sc.cfg.drawer_pick_reach if in_drawer else None
            start = _pick_start(
                sc, where, approach, band, not (in_drawer or in_fridge), offset_ok=not in_drawer
            )
        extras["robot_start_far"] = list(sc.spawn_near(where, approach))
    else:  # nav: end where a pick of the target would start (facing it, within reach)
        goal = sc.spawn_close(obj_xy, sc.front_yaw(src.furniture), yaw_noise=0.0)
        start = _nav_start(sc, goal, idx)
        extras["nav_goal"] = list(goal)
    return start, [target], extras


def _pick_start(sc: SceneDraw, where, approach: float, band, far_ok: bool, offset_ok: bool):
    """A pick's close spawn; with `pick_offset_prob` (open receptacles and the fridge) one
    where a learned nav stops (`RobotPlacement.spawn_nav_stop`); with `pick_far_prob` (open
    receptacles only) one standing back, the target reach_max..place_far_reach from the
    shoulder, where the HAB executor's relaxed stand poses leave an object deep on a table
    (`stand_poses.FAR_REACH`); else (or no such cell) the usual band. No draw at 0:
    episodes as they were."""
    cfg = sc.cfg
    if offset_ok and cfg.pick_offset_prob > 0 and sc.rng.random() < cfg.pick_offset_prob:
        try:
            return sc.spawn_nav_stop(
                where,
                approach,
                cfg.pick_offset_stand,
                cfg.pick_offset_range,
                cfg.pick_offset_yaw,
                cfg.pick_offset_reach,
            )
        except NoPlacement:
            pass
    if far_ok and cfg.pick_far_prob > 0 and sc.rng.random() < cfg.pick_far_prob:
        try:
            return sc.spawn_close(where, approach, band=(cfg.reach_max, cfg.place_far_reach))
        except NoPlacement:
            pass
    return sc.spawn_close(where, approach, band=band)


def _pull_out(sc: SceneDraw, idx: int, drawer_rec: Receptacle) -> None:
    """Pull the drawer out (fully, or `drawer_pick_open` of its travel) and move object
    `idx`, placed on the drawer's floor where the drawer is closed, out with it (receptacle
    boxes are at the closed joint value)."""
    art = sc.layout.articulation(drawer_rec.container)
    yaw = sc.layout.furniture_named(art.furniture).front_yaw
    lo, hi = sc.cfg.drawer_pick_open
    share = lo if lo == hi else float(sc.rng.uniform(lo, hi))  # no draw at (1, 1)
    travel = share * (art.open - art.closed)
    if share != 1.0:
        sc.articulation_override[art.name] = art.closed + travel
    o = sc.objects[idx]
    x, y, z = o.pos
    o.pos = (x + travel * math.cos(yaw), y + travel * math.sin(yaw), z)


NAV_STAND_START_TRIES = 5  # other objects tried for a stand start before "anywhere"


def _nav_start(sc: SceneDraw, goal, target: int) -> tuple[float, float, float]:
    """A nav start: with nav_near_start_prob anywhere closer than nav_min_dist (geodesic) to
    `goal`, any heading; else at least nav_min_dist from it: with nav_stand_start_prob a
    close spawn in front of another object (as if it had just been picked or placed there),
    else (or when none qualifies) anywhere."""
    cfg = sc.cfg
    if cfg.nav_near_start_prob > 0 and sc.rng.random() < cfg.nav_near_start_prob:
        try:  # no draw at 0: episodes as they were
            return sc.spawn_anywhere(away_from=goal[:2], max_dist=cfg.nav_min_dist)
        except NoPlacement:
            pass
    if cfg.nav_stand_start_prob > 0 and sc.rng.random() < cfg.nav_stand_start_prob:
        others = [i for i in range(len(sc.objects)) if i != target]
        for i in sc.rng.permutation(others)[:NAV_STAND_START_TRIES]:
            obj = sc.objects[int(i)]
            front = sc.front_yaw(sc.layout.receptacle(obj.receptacle).furniture)
            try:
                pose = sc.spawn_close(obj.pos[:2], front)
            except NoPlacement:
                continue
            if sc.navmap.geodesic_distance(pose[:2], goal[:2]) >= cfg.nav_min_dist:
                return pose
    return sc.spawn_anywhere(away_from=goal[:2], min_dist=cfg.nav_min_dist)


def _build_articulated(sc: SceneDraw, task: str) -> tuple:
    spec = ARTICULATED_SKILLS[task]
    prefix = spec.articulation
    arts = [a for a in sc.layout.articulations if a.name.startswith(prefix)]
    if not arts:
        raise NoRoom(f"layout has no {prefix}")
    art = arts[int(sc.rng.integers(len(arts)))]
    if not spec.opens:  # a closing task starts open
        sc.open_articulations.add(art.name)
    sc.add_clutter(sc.num_objects())
    handle = sc.clearance().handle_pos(art.name)  # where it is at the episode's joint value
    approach = sc.front_yaw(art.furniture)
    start = sc.spawn_work(art, handle)
    far = sc.spawn_near(handle[:2], approach)
    return start, [], {"articulation": art.name, "robot_start_far": list(far)}


def _build_tidy_house(sc: SceneDraw, task: str) -> tuple:
    sc.add_clutter(max(5, sc.num_objects()))
    if len(sc.objects) < 5:
        raise NoRoom("tidy_house needs 5 objects")
    order = sc.rng.permutation(len(sc.objects))[:5]
    targets = []
    for i in order:
        src = sc.objects[int(i)].receptacle
        targets.append(sc.target(int(i), sc.pick_receptacle(sc.open_receptacles(), exclude=src)))
    return sc.spawn_anywhere(), targets, {}


def _build_prepare_groceries(sc: SceneDraw, task: str) -> tuple:
    """Habitat 2.0: two objects from the fridge to the counter, one from the counter back."""
    fridge = sc.pick_receptacle(sc.receptacles(_is_fridge))
    counters = sc.receptacles(lambda r: r.container is None and r.name.startswith("counter"))
    sc.open_articulations.add(fridge.container)
    from_fridge = [sc.add_object(sc.random_type(), fridge) for _ in range(2)]
    counter = sc.pick_receptacle(counters)
    from_counter = sc.add_object(sc.random_type(), counter)
    sc.add_clutter(sc.num_objects())
    targets = [sc.target(i, sc.pick_receptacle(counters)) for i in from_fridge]
    targets.append(sc.target(from_counter, fridge))
    return sc.spawn_anywhere(), targets, {}


def _build_set_table(sc: SceneDraw, task: str) -> tuple:
    """Habitat 2.0: a bowl from a closed drawer, then fruit from the closed fridge, to the table."""
    drawer = sc.pick_receptacle(sc.receptacles(_is_drawer))
    fridge = sc.pick_receptacle(sc.receptacles(_is_fridge))
    tables = sc.receptacles(lambda r: r.container is None and r.name.startswith("table"))
    bowl = OBJECT_TYPES["bowl"]
    if bowl.footprint_radius > min(drawer.surface.half_size[:2]):
        bowl = sc.random_type(max_half_height=0.03)
    fruit = OBJECT_TYPES[str(sc.rng.choice(["apple", "orange", "lemon"]))]
    first = sc.add_object(bowl, drawer)
    second = sc.add_object(fruit, fridge)
    sc.add_clutter(sc.num_objects())
    table = sc.pick_receptacle(tables)
    return sc.spawn_anywhere(), [sc.target(first, table), sc.target(second, table)], {}


Builder = Callable[[SceneDraw, str], tuple]
# The skills' builders, by the name a definition gives: "object" draws objects on
# receptacles with a goal receptacle for the first (nav, pick, place), "articulation" a
# fridge or drawer to work.
EPISODE_BUILDERS: dict[str, Builder] = {
    "object": _build_pick,
    "articulation": _build_articulated,
}
SCENARIO_BUILDERS: dict[str, Builder] = {
    "tidy_house": _build_tidy_house,
    "prepare_groceries": _build_prepare_groceries,
    "set_table": _build_set_table,
}


def register_episode_builder(name: str, builder: Builder) -> None:
    """A builder a skill defined outside the package can name (`SkillDef.episode_builder`)."""
    EPISODE_BUILDERS[name] = builder


class _TaskBuilders(Mapping[str, Builder]):
    """BUILDERS[task]: a defined skill's builder (by its definition) or a scenario's."""

    def __getitem__(self, task: str) -> Builder:
        if task in SCENARIO_BUILDERS:
            return SCENARIO_BUILDERS[task]
        if task not in SKILLS:
            raise KeyError(task)
        return EPISODE_BUILDERS[SKILLS[task].episode_builder]

    def __iter__(self) -> Iterator[str]:
        return iter((*SKILLS, *SCENARIO_BUILDERS))

    def __len__(self) -> int:
        return len(SKILLS) + len(SCENARIO_BUILDERS)


BUILDERS: Mapping[str, Builder] = _TaskBuilders()
