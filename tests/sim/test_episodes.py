"""Episode generation on hand-made layouts (and generated ones when apartment.py is there)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import math

import numpy as np
import pytest
from sim_layouts import small_apartment

from rearrange.sim.episode_types import HAB_SCENARIOS, Episode
from rearrange.sim.episodes import (
    SCENE_SEEDS,
    TASKS,
    EpisodeError,
    generate_episodes,
    load_episodes,
    save_episodes,
)
from rearrange.sim.layout_types import Layout, Receptacle
from rearrange.sim.navmap import NavMap
from rearrange.sim.objects import OBJECT_TYPES
from rearrange.skill_spec import SKILL_NAMES

_LAYOUTS: dict[tuple[int, str], Layout] = {}


def fixture_layout(seed: int, split: str) -> Layout:
    if (seed, split) not in _LAYOUTS:
        _LAYOUTS[(seed, split)] = small_apartment(seed, split)
    return _LAYOUTS[(seed, split)]


def gen(task: str, n: int = 4, split: str = "val", seed: int = 0) -> list[Episode]:
    return generate_episodes(task, split, n, seed, layout_fn=fixture_layout)


def on_receptacle(pos, rec: Receptacle, obj_type: str) -> bool:
    """pos x/y within the surface (local frame) and resting on its top face."""
    box = rec.surface
    dx, dy = pos[0] - box.center[0], pos[1] - box.center[1]
    c, s = math.cos(box.yaw), math.sin(box.yaw)
    u, v = c * dx + s * dy, -s * dx + c * dy
    inside = abs(u) <= box.half_size[0] + 1e-6 and abs(v) <= box.half_size[1] + 1e-6
    z = rec.top_z + OBJECT_TYPES[obj_type].half_height
    return inside and abs(pos[2] - z) <= 0.003


def check_objects(ep: Episode, layout: Layout) -> None:
    assert 5 <= len(ep.objects) <= 10
    for o in ep.objects:
        assert on_receptacle(o.pos, layout.receptacle(o.receptacle), o.obj_type), o
        assert o.quat == (1.0, 0.0, 0.0, 0.0)
    for i, a in enumerate(ep.objects):
        for b in ep.objects[i + 1 :]:
            if a.receptacle == b.receptacle:
                gap = (
                    OBJECT_TYPES[a.obj_type].footprint_radius
                    + OBJECT_TYPES[b.obj_type].footprint_radius
                )
                assert math.dist(a.pos[:2], b.pos[:2]) >= gap
    for t in ep.targets:
        obj = ep.objects[t.obj_index]
        assert on_receptacle(t.goal_pos, layout.receptacle(t.goal_receptacle), obj.obj_type)


@pytest.mark.parametrize("task", TASKS)
def test_every_task_generates_valid_episodes(task):
    for i, ep in enumerate(gen(task)):
        layout = fixture_layout(ep.scene_seed, "val")
        assert ep.episode_id == f"{task}-val-{i:04d}" and ep.task == task
        assert 0 <= ep.scene_seed < SCENE_SEEDS["val"]
        assert set(ep.articulations) == {"fridge", "drawer_0", "drawer_1"}
        check_objects(ep, layout)
        assert NavMap(layout).is_navigable(*ep.robot_start[:2])
        assert -math.pi <= ep.robot_start[2] <= math.pi


def test_generation_is_deterministic_and_split_dependent():
    assert gen("pick", 6) == gen("pick", 6)
    assert gen("pick", 6, seed=1) != gen("pick", 6)
    val, train = gen("tidy_house", 6, "val"), gen("tidy_house", 6, "train")
    assert [e.split for e in train] == ["train"] * 6
    assert [e.scene_seed for e in val] != [e.scene_seed for e in train]
    # episode i does not depend on how many come before it
    assert gen("place", 3)[2] == gen("place", 5)[2]


def test_pick_spawns_within_2m_geodesic_facing_the_target():
    for ep in gen("pick", 10):
        nm = NavMap(fixture_layout(ep.scene_seed, "val"))
        x, y, yaw = ep.robot_start
        obj = ep.objects[ep.targets[0].obj_index]
        assert nm.is_navigable(x, y)
        assert nm.geodesic_distance((x, y), obj.pos[:2]) <= 2.0
        facing = math.atan2(obj.pos[1] - y, obj.pos[0] - x)
        err = (yaw - facing + math.pi) % (2 * math.pi) - math.pi
        assert abs(err) <= math.radians(30) + 1e-3


def test_place_starts_holding_near_the_goal():
    for ep in gen("place", 6):
        nm = NavMap(fixture_layout(ep.scene_seed, "val"))
        (target,) = ep.targets
        assert ep.extras["holding"] == target.obj_index
        assert ep.objects[target.obj_index].receptacle != target.goal_receptacle
        assert nm.geodesic_distance(ep.robot_start[:2], target.goal_pos[:2]) <= 2.0


def test_nav_goal_is_navigable_in_front_of_the_target_receptacle():
    for ep in gen("nav", 6):
        nm = NavMap(fixture_layout(ep.scene_seed, "val"))
        gx, gy, gyaw = ep.extras["nav_goal"]
        obj = ep.objects[ep.targets[0].obj_index]
        assert nm.is_navigable(gx, gy)
        assert math.dist((gx, gy), obj.pos[:2]) < 1.5
        assert gyaw == pytest.approx(math.atan2(obj.pos[1] - gy, obj.pos[0] - gx), abs=1e-4)
        assert nm.geodesic_distance(ep.robot_start[:2], (gx, gy)) >= 2.0


@pytest.mark.parametrize(
    "task, name, state",
    [
        ("open_fridge", "fridge", 0.0),
        ("close_fridge", "fridge", 1.2208),
        ("open_cab", "drawer", 0.0),
        ("close_cab", "drawer", 0.45),
    ],
)
def test_articulation_tasks_start_state_and_spawn(task, name, state):
    for ep in gen(task, 4):
        layout = fixture_layout(ep.scene_seed, "val")
        art = ep.extras["articulation"]
        assert art.startswith(name) and ep.articulations[art] == state
        assert sum(v != 0 for v in ep.articulations.values()) == (state != 0)
        handle = layout.articulations[[a.name for a in layout.articulations].index(art)]
        dist = NavMap(layout).geodesic_distance(ep.robot_start[:2], handle.handle_closed_pos[:2])
        assert dist <= 2.0


def test_hab_scenarios_targets_and_containers(tmp_path):
    for task in HAB_SCENARIOS:
        save_episodes(tmp_path / f"{task}.json.gz", gen(task, 4))
    tidy = load_episodes(tmp_path / "tidy_house.json.gz")
    for ep in tidy:
        layout = fixture_layout(ep.scene_seed, "val")
        assert len(ep.targets) == 5 and len({t.obj_index for t in ep.targets}) == 5
        assert all(layout.receptacle(o.receptacle).container is None for o in ep.objects)
        assert all(layout.receptacle(t.goal_receptacle).container is None for t in ep.targets)
        assert all(v == 0.0 for v in ep.articulations.values())
        check_objects(ep, layout)
    for ep in load_episodes(tmp_path / "prepare_groceries.json.gz"):
        layout = fixture_layout(ep.scene_seed, "val")
        assert ep.articulations["fridge"] == pytest.approx(1.2208)
        src = [ep.objects[t.obj_index].receptacle for t in ep.targets]
        dst = [t.goal_receptacle for t in ep.targets]
        assert src[:2] == ["fridge_shelf_0"] * 2 and all(d.startswith("counter") for d in dst[:2])
        assert src[2].startswith("counter") and dst[2] == "fridge_shelf_0"
        check_objects(ep, layout)
    for ep in load_episodes(tmp_path / "set_table.json.gz"):
        layout = fixture_layout(ep.scene_seed, "val")
        first, second = (ep.objects[t.obj_index] for t in ep.targets)
        assert layout.receptacle(first.receptacle).container.startswith("drawer")
        assert layout.receptacle(second.receptacle).container == "fridge"
        assert all(t.goal_receptacle.startswith("table") for t in ep.targets)
        assert all(v == 0.0 for v in ep.articulations.values())
        check_objects(ep, layout)


@pytest.mark.parametrize("name", ["eps.json", "eps.json.gz"])
def test_save_load_round_trip(tmp_path, name):
    episodes = gen("place", 3) + gen("nav", 2) + gen("set_table", 2)
    save_episodes(tmp_path / "sub" / name, episodes)
    assert load_episodes(tmp_path / "sub" / name) == episodes


def test_load_errors_name_the_problem(tmp_path):
    with pytest.raises(EpisodeError, match="nope.json.gz not found"):
        load_episodes(tmp_path / "nope.json.gz")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(EpisodeError, match="bad.json is corrupt"):
        load_episodes(bad)
    badgz = tmp_path / "bad.json.gz"
    badgz.write_bytes(b"not gzip at all")
    with pytest.raises(EpisodeError, match="bad.json.gz is corrupt"):
        load_episodes(badgz)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"episodes": []}))
    with pytest.raises(EpisodeError, match="not a rearrange episode file"):
        load_episodes(other)
    old = tmp_path / "old.json.gz"
    with gzip.open(old, "wt") as f:
        json.dump({"schema": "rearrange.episodes", "version": 99, "episodes": []}, f)
    with pytest.raises(EpisodeError, match="schema version 99"):
        load_episodes(old)
    broken = tmp_path / "broken.json"
    doc = {
        "schema": "rearrange.episodes",
        "version": 1,
        "episodes": [dataclasses.asdict(gen("pick", 1)[0])],
    }
    del doc["episodes"][0]["robot_start"]
    broken.write_text(json.dumps(doc))
    with pytest.raises(EpisodeError, match="malformed episode"):
        load_episodes(broken)


def test_unknown_task_and_split():
    with pytest.raises(EpisodeError, match="unknown task 'fly'"):
        generate_episodes("fly", "val", 1, 0, layout_fn=fixture_layout)
    with pytest.raises(EpisodeError, match="unknown split 'test'"):
        generate_episodes("pick", "test", 1, 0, layout_fn=fixture_layout)


def test_layout_without_a_fridge_gives_a_clear_error():
    def no_fridge(seed: int, split: str) -> Layout:
        layout = small_apartment(seed, split)
        layout.receptacles = [r for r in layout.receptacles if r.container != "fridge"]
        return layout

    with pytest.raises(EpisodeError, match="could not generate set_table episode 0"):
        generate_episodes("set_table", "val", 1, 0, layout_fn=no_fridge)


@pytest.mark.parametrize("task", SKILL_NAMES + HAB_SCENARIOS)
def test_generated_apartments(task):
    apartment = pytest.importorskip("rearrange.sim.apartment")
    episodes = generate_episodes(task, "val", 2, 0)
    assert episodes == generate_episodes(task, "val", 2, 0)
    for ep in episodes:
        layout = apartment.generate_layout(ep.scene_seed, "val")
        check_objects(ep, layout)
        nm = NavMap(layout)
        assert nm.is_navigable(*ep.robot_start[:2])
        if task == "pick":
            obj = ep.objects[ep.targets[0].obj_index]
            assert nm.geodesic_distance(ep.robot_start[:2], obj.pos[:2]) <= 2.0


def test_open_fridge_door_keeps_spawns_clear():
    """With the fridge open the robot never starts inside the door's swing."""
    layout = fixture_layout(0, "val")
    hinge = (3.4 + 0.4, 0.4 + 0.38)  # front face, side opposite the handle at x = 3.1
    episodes = gen("close_fridge", 6) + gen("prepare_groceries", 4)
    for ep in episodes:
        x, y, _ = ep.robot_start
        in_front = y - hinge[1] > -0.05  # the fridge faces +y
        assert not in_front or math.dist((x, y), hinge) >= 0.8 + 0.3, ep.episode_id
    assert NavMap(layout).is_navigable(3.3, 1.3)  # the swing area is free on the map itself


def test_pick_sometimes_from_the_open_fridge():
    episodes = gen("pick", 30)
    from_fridge = [
        e for e in episodes if e.objects[e.targets[0].obj_index].receptacle == "fridge_shelf_0"
    ]
    assert from_fridge and all(
        e.articulations["fridge"] == pytest.approx(1.2208) for e in from_fridge
    )
    others = [e for e in episodes if e not in from_fridge]
    assert all(e.articulations["fridge"] == 0.0 for e in others)


def test_spawn_heading_keeps_the_resting_arm_off_walls():
    from rearrange.sim.episodes import EpisodeGenConfig, scene_assets
    from rearrange.sim.episodes.arm_starts import arm_kinematics
    from rearrange.sim.placement import RobotPlacement

    cfg = EpisodeGenConfig()
    layout, navmap, footprints = scene_assets(0, "val", fixture_layout, cfg.robot_radius)
    sc = RobotPlacement(layout, navmap, np.random.default_rng(0), cfg, footprints)
    # 0.5 m from the divider wall (x = 4): the ~0.68 m arm hits it facing +x, not facing -x
    assert navmap.is_navigable(3.5, 1.5)
    assert not sc.pose_ok(3.5, 1.5, 0.0)
    assert sc.pose_ok(3.5, 1.5, math.pi)
    for ep in gen("pick", 8) + gen("tidy_house", 4):
        layout = fixture_layout(ep.scene_seed, "val")
        navmap = scene_assets(ep.scene_seed, "val", fixture_layout, cfg.robot_radius)[1]
        sc = RobotPlacement(layout, navmap, np.random.default_rng(0), cfg)
        sc.objects = ep.objects
        # the episode's world: a fridge pick starts with the door open, in front of it
        sc.open_articulations = {k for k, v in ep.articulations.items() if v != 0.0}
        sc.static_doors = ep.task == "pick"
        if "arm_start" in ep.extras:  # the arm as the episode starts it, not at rest
            kin = arm_kinematics()
            kin.set_arm(np.asarray(ep.extras["arm_start"]))
            sc.arm_discs = kin.arm_discs(base_radius=cfg.robot_radius)
        assert sc.pose_ok(*ep.robot_start)


def test_episodes_start_collision_free_in_the_mujoco_sim():
    pytest.importorskip("rearrange.sim.world")
    from rearrange.sim.config import SimConfig
    from rearrange.sim.world import RearrangeSim

    sim = RearrangeSim(SimConfig(depth_width=16, depth_height=16, rgb_width=16, rgb_height=16))
    for task in TASKS:
        for ep in generate_episodes(task, "val", 3, 0):
            sim.reset(ep)
            start = np.array([sim.object_pos(i) for i in range(sim.num_objects)])
            for _ in range(10):
                sim.step(None, None, None)
            assert sim.collision_count == 0, ep.episode_id
            moved = np.linalg.norm(
                np.array([sim.object_pos(i) for i in range(sim.num_objects)]) - start, axis=1
            )
            if sim.held_object() is not None:
                moved[sim.held_object()] = 0.0
            assert moved.max() < 0.01, ep.episode_id  # objects rest where they were placed


def test_fridge_picks_start_in_front_of_the_opening():
    """The door stays open through a pick: the robot may stand where the door's sweep was,
    but not behind the door or beside the fridge (where the arm cannot reach inside)."""
    from rearrange.sim.episodes import EpisodeGenConfig

    cfg = EpisodeGenConfig(fridge_pick_prob=1.0)
    for ep in generate_episodes("pick", "val", 6, 0, layout_fn=fixture_layout, config=cfg):
        fridge = next(
            f for f in fixture_layout(ep.scene_seed, "val").furniture if f.kind == "fridge"
        )
        front = np.array([math.cos(fridge.front_yaw), math.sin(fridge.front_yaw)])
        out = (np.array(ep.robot_start[:2]) - np.array(fridge.center[:2])) @ front
        assert ep.articulations["fridge"] == pytest.approx(1.2208)
        assert out > fridge.half_size[0] + cfg.robot_radius, ep.episode_id  # in front of it


def test_drawer_picks_take_the_target_from_an_open_drawer_in_front_of_its_cabinet():
    from rearrange.sim.episodes import EpisodeGenConfig

    cfg = EpisodeGenConfig(drawer_pick_prob=1.0, fridge_pick_prob=0.0)
    for ep in generate_episodes("pick", "val", 6, 0, layout_fn=fixture_layout, config=cfg):
        layout = fixture_layout(ep.scene_seed, "val")
        rec = layout.receptacle(ep.objects[ep.targets[0].obj_index].receptacle)
        assert rec.container is not None and rec.container.startswith("drawer"), ep.episode_id
        art = next(a for a in layout.articulations if a.name == rec.container)
        assert ep.articulations[art.name] == pytest.approx(art.open)  # pulled out
        cab = layout.furniture_named(art.furniture)
        front = np.array([math.cos(cab.front_yaw), math.sin(cab.front_yaw)])
        # the object rode out with the drawer: beyond the cabinet's front, on the open
        # drawer's floor (the receptacle box is the closed drawer's, art.open behind)
        obj = np.array(ep.objects[ep.targets[0].obj_index].pos)
        closed = (obj[:2] - np.array(rec.surface.center[:2])) @ front
        assert closed == pytest.approx(art.open - art.closed, abs=rec.surface.half_size[0])
        assert (obj[:2] - np.array(cab.center[:2])) @ front > cab.half_size[0] - 0.1
        out = (np.array(ep.robot_start[:2]) - np.array(cab.center[:2])) @ front
        assert out >= cab.half_size[0] + cfg.robot_radius - 1e-6, ep.episode_id  # in front


def test_drawer_pick_prob_zero_leaves_the_episodes_as_they_were():
    from rearrange.sim.episodes import EpisodeGenConfig

    base = generate_episodes("pick", "val", 4, 0, layout_fn=fixture_layout)
    zero = generate_episodes(
        "pick", "val", 4, 0, layout_fn=fixture_layout, config=EpisodeGenConfig(drawer_pick_prob=0.0)
    )
    assert base == zero


def test_drawer_picks_pull_the_drawer_part_way_with_the_object_on_it():
    """drawer_pick_open=(0.5, 0.5) draws nothing more than fully open drawers do, so the same
    episode index on the same scene holds the same object draw: the drawer stands at half
    its travel and the object exactly half the travel less far out."""
    from rearrange.sim.episodes import EpisodeGenConfig

    full_cfg = EpisodeGenConfig(drawer_pick_prob=1.0, fridge_pick_prob=0.0)
    half_cfg = dataclasses.replace(full_cfg, drawer_pick_open=(0.5, 0.5))
    full = generate_episodes("pick", "val", 6, 0, layout_fn=fixture_layout, config=full_cfg)
    half = generate_episodes("pick", "val", 6, 0, layout_fn=fixture_layout, config=half_cfg)
    compared = 0
    for a, b in zip(full, half):
        if a.scene_seed != b.scene_seed:
            continue
        layout = fixture_layout(a.scene_seed, "val")
        obj_a, obj_b = (ep.objects[ep.targets[0].obj_index] for ep in (a, b))
        art = layout.articulation(layout.receptacle(obj_a.receptacle).container)
        cab = layout.furniture_named(art.furniture)
        front = np.array([math.cos(cab.front_yaw), math.sin(cab.front_yaw)])
        travel = art.open - art.closed
        assert b.articulations[art.name] == pytest.approx(art.closed + 0.5 * travel)
        assert a.articulations[art.name] == pytest.approx(art.open)
        shift = np.array(obj_a.pos[:2]) - np.array(obj_b.pos[:2])
        np.testing.assert_allclose(shift, 0.5 * travel * front, atol=2e-3)  # rounded poses
        compared += 1
    assert compared >= 3


def test_drawer_pick_reach_puts_the_shoulder_within_its_band():
    from rearrange.sim.episodes import EpisodeGenConfig
    from rearrange.sim.placement import shoulder_reach

    cfg = EpisodeGenConfig(
        drawer_pick_prob=1.0,
        fridge_pick_prob=0.0,
        drawer_pick_open=(0.85, 1.0),
        drawer_pick_reach=(0.35, 0.6),
    )
    for ep in generate_episodes("pick", "val", 6, 0, layout_fn=fixture_layout, config=cfg):
        layout = fixture_layout(ep.scene_seed, "val")
        obj = ep.objects[ep.targets[0].obj_index]
        art = layout.articulation(layout.receptacle(obj.receptacle).container)
        share = (ep.articulations[art.name] - art.closed) / (art.open - art.closed)
        assert 0.85 - 1e-6 <= share <= 1.0 + 1e-6
        reach = shoulder_reach(ep.robot_start, obj.pos[:2], cfg.shoulder_x)
        assert 0.35 - 1e-3 <= reach <= 0.6 + 1e-3, ep.episode_id


def test_pick_far_prob_stands_the_pick_back_up_to_the_far_reach():
    from rearrange.sim.episodes import EpisodeGenConfig
    from rearrange.sim.placement import shoulder_reach

    def reaches(cfg, n=8):
        eps = generate_episodes("pick", "val", n, 3, layout_fn=fixture_layout, config=cfg)
        out = []
        for ep in eps:
            obj = ep.objects[ep.targets[0].obj_index]
            out.append((ep, shoulder_reach(ep.robot_start, obj.pos[:2], cfg.shoulder_x)))
        return out

    base = EpisodeGenConfig(fridge_pick_prob=0.0)
    near = reaches(base)
    assert all(base.reach_min - 1e-3 <= r <= base.reach_max + 1e-3 for _, r in near)
    far_cfg = EpisodeGenConfig(fridge_pick_prob=0.0, pick_far_prob=1.0)
    far = reaches(far_cfg)
    # every start stands back in the far band, unless no cell there fits (then the usual band)
    in_band = [base.reach_max - 1e-3 <= r <= base.place_far_reach + 1e-3 for _, r in far]
    assert sum(in_band) >= 6 and all(r <= base.place_far_reach + 1e-3 for _, r in far)


def test_spawn_nav_stop_moves_the_stand_pose_by_the_offset():
    """spawn_nav_stop: the stand pose (a close spawn facing the target) moved by an offset in
    the range, its heading kept within the noise, the target within the band."""
    from rearrange.sim.episodes import EpisodeGenConfig, scene_assets
    from rearrange.sim.placement import NoPlacement, RobotPlacement, shoulder_reach

    cfg = EpisodeGenConfig()
    ep = gen("pick", 1)[0]
    layout, navmap, footprints = scene_assets(
        ep.scene_seed, "val", fixture_layout, cfg.robot_radius
    )
    obj = ep.objects[ep.targets[0].obj_index]
    front = layout.furniture_named(layout.receptacle(obj.receptacle).furniture).front_yaw
    band, noise = (0.3, 1.0), math.radians(10)
    for seed in range(6):
        sc = RobotPlacement(layout, navmap, np.random.default_rng(seed), cfg, footprints)
        sc.objects = ep.objects
        stands = []

        def spy(*a, _close=sc.spawn_close, _out=stands, **k):
            _out.append(_close(*a, **k))
            return _out[-1]

        sc.spawn_close = spy
        try:
            x, y, yaw = sc.spawn_nav_stop(obj.pos[:2], front, (0.7, 0.8), (0.2, 0.3), noise, band)
        except NoPlacement:
            continue
        ((gx, gy, gyaw),) = stands
        assert (
            0.7 - 1e-3 <= shoulder_reach((gx, gy, gyaw), obj.pos[:2], cfg.shoulder_x) <= 0.8 + 1e-3
        )
        assert 0.2 - 0.01 <= math.hypot(x - gx, y - gy) <= 0.3 + 0.01  # rounded to 1e-5
        assert abs(math.remainder(yaw - gyaw, math.tau)) <= noise + 1e-4
        assert band[0] <= shoulder_reach((x, y, yaw), obj.pos[:2], cfg.shoulder_x) <= band[1]
        assert sc.pose_ok(x, y, yaw)
        break
    else:
        pytest.fail("no nav-stop pose in 6 draws")


def test_pick_offset_prob_starts_picks_off_the_stand_pose():
    from rearrange.sim.episodes import EpisodeGenConfig
    from rearrange.sim.placement import shoulder_reach

    cfg = EpisodeGenConfig(fridge_pick_prob=0.0, pick_offset_prob=1.0)
    eps = generate_episodes("pick", "val", 8, 3, layout_fn=fixture_layout, config=cfg)
    base = generate_episodes(
        "pick", "val", 8, 3, layout_fn=fixture_layout, config=EpisodeGenConfig(fridge_pick_prob=0.0)
    )
    reach = [
        shoulder_reach(e.robot_start, e.objects[e.targets[0].obj_index].pos[:2], cfg.shoulder_x)
        for e in eps
    ]
    lo, hi = cfg.pick_offset_reach
    assert all(lo - 1e-3 <= r <= hi + 1e-3 for r in reach)
    assert [e.robot_start for e in eps] != [e.robot_start for e in base]
