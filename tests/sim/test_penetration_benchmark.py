"""benchmarks/penetration.py: the labels of static geoms, the robot-vs-static contacts of a
hand-placed robot (depth checked against the mesh by hand), the held door's handle told
from the rest of it, and the per-episode records, tables and force figures on hand-made
contacts."""

from __future__ import annotations

import dataclasses
import json
import math

import mujoco
import numpy as np
import pytest
from sim_helpers import scripted_fridge_hold
from sim_layouts import small_apartment

from benchmarks.penetration import (
    Contact,
    EpisodeRecord,
    Run,
    force_stats,
    geom_labels,
    group_table,
    static_contacts,
    summary_row,
)
from rearrange.sim.episode_types import Episode
from rearrange.sim.snapshot import stand_in_front

SEED = -9271  # a seed no generated layout uses (the scene caches key on it)


@pytest.fixture
def apartment(sim):
    layout = small_apartment(SEED)
    sim.register_layout(layout)
    sim.reset(Episode("pen", "pick", "train", SEED, stand_in_front(layout, "counter_0"), []))
    return sim


def test_static_geoms_are_labelled_by_piece_kind_and_part(apartment):
    m = apartment.model
    labels = geom_labels(m, apartment.layout)
    counter = [labels[g] for g in np.flatnonzero(m.geom_bodyid == m.body("counter_0").id)]
    assert [(x.piece, x.key) for x in counter] == [
        ("counter_0", "counter carcass"),
        ("counter_0", "counter top"),
    ]
    fridge = [labels[g].part for g in np.flatnonzero(m.geom_bodyid == m.body("fridge_0").id)]
    assert fridge == ["back wall", "side wall", "side wall", "shelf", "ceiling"]
    assert labels[m.geom("handle_drawer_1").id].key == "drawer handle"
    assert labels[m.geom("handle_drawer_1").id].piece == "drawer_1"
    assert labels[m.geom("handle_fridge").id].key == "fridge door handle"
    assert labels[m.geom("handle_fridge").id].piece == "fridge_door"
    assert labels[m.geom("wall_2").id].key == "wall"
    table = {labels[g].part for g in np.flatnonzero(m.geom_bodyid == m.body("table_0").id)}
    assert table == {"top", "leg"}
    assert not any(apartment.idx.robot_geoms[g] for g in labels)


def _robot_min_x(sim) -> tuple[float, str]:
    """The smallest world x over the vertices of the robot's collision geoms (meshes: their
    vertices, whose convex hull is what MuJoCo collides; boxes: their corners) and the body
    it belongs to."""
    m, d = sim.model, sim.data
    best = (math.inf, "")
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
    for g in sim.idx.robot_collision_geoms:
        if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
            adr, n = m.mesh_vertadr[m.geom_dataid[g]], m.mesh_vertnum[m.geom_dataid[g]]
            local = m.mesh_vert[adr : adr + n]
        else:
            assert m.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX
            local = corners * m.geom_size[g]
        verts = d.geom_xpos[g] + local @ d.geom_xmat[g].reshape(3, 3).T
        best = min(best, (float(verts[:, 0].min()), m.body(int(m.geom_bodyid[g])).name))
    return best


def test_robot_driven_into_a_wall_is_found_at_the_depth_of_its_mesh(apartment):
    sim = apartment
    m, d, idx = sim.model, sim.data, sim.idx
    labels = geom_labels(m, sim.layout)
    # Backing into the west wall (inner face at x = 0; the arm rests in front, away from
    # it), clear of the furniture along that wall.
    d.qpos[idx.base_qpos] = (1.0, 2.5, 0.0)
    mujoco.mj_forward(m, d)
    assert static_contacts(sim, labels) == []
    min_x, body = _robot_min_x(sim)
    d.qpos[idx.base_qpos[0]] += -0.03 - min_x  # the front-most vertex 3 cm inside the wall
    mujoco.mj_forward(m, d)
    contacts = static_contacts(sim, labels)
    deepest = max(contacts, key=lambda c: c.depth)
    assert deepest.depth == pytest.approx(0.03, abs=1e-3)
    assert deepest.link == body.split(":")[1].removesuffix("_link")
    assert (deepest.piece, deepest.key, deepest.side) == ("wall_2", "wall", "sideways")
    assert deepest.normal[0] == pytest.approx(1.0, abs=1e-3)  # out of the wall, to the robot
    assert {c.kind for c in contacts} == {"wall"}


def _ee_to(sim, target) -> None:
    q = sim.arm_joint_pos()
    for _ in range(200):  # kinematic IK (set_arm_joint_pos): no step, nothing blocks it
        err = target - sim.ee_pos()
        if np.linalg.norm(err) < 0.005:
            break
        jac = sim.arm_jacobian()
        q = q + jac.T @ np.linalg.solve(jac @ jac.T + 1e-3 * np.eye(3), err)
        sim.set_arm_joint_pos(q)
    assert np.linalg.norm(target - sim.ee_pos()) < 0.005


def test_gripper_pushed_down_through_a_counter_top_entered_it_from_above(apartment):
    """The top is a 4 cm slab: with the EE 1 cm in, the deepest contact's normal points up
    (from above); 5 cm in, the fingers are more than half through it and it points down.
    The record keeps the side they entered from."""
    sim = apartment
    labels = geom_labels(sim.model, sim.layout)
    f = sim.layout.furniture_named("counter_0")
    front = np.array([math.cos(f.front_yaw), math.sin(f.front_yaw)])
    x, y = np.asarray(f.center) + front * (f.half_size[0] - 0.15)
    rec = EpisodeRecord("pick", "oracle", False, 0)
    sides = []
    for step, below_top in enumerate((0.01, 0.05), start=1):
        _ee_to(sim, (x, y, 2 * f.half_size[2] - below_top))
        top = [c for c in static_contacts(sim, labels) if c.key == "counter top"]
        assert top and all(c.piece == "counter_0" for c in top)
        sides.append(max(top, key=lambda c: c.depth).side)
        rec.add_step(step, top, 0.0)
    assert sides == ["from above", "from below"]
    assert rec.deepest.link in {"gripper", "r_gripper_finger", "l_gripper_finger", "wrist_roll"}
    assert rec.deepest.side == "from above" and 0.02 < rec.max_depth < 0.1


_GEOMS = {"base": 1, "elbow_flex": 2, "gripper": 3, "side wall": 10, "shelf": 11, "": 12}
_GEOMS |= {"panel": 13, "handle": 14}


def _held(link: str, part: str, depth: float) -> Contact:
    """A contact of `link` with `part` of the fridge door the gripper holds: its handle
    (bar, posts: the sim exempts them) or its panel (the sim counts it)."""
    c = _c(link, "fridge door", part, depth)
    return dataclasses.replace(c, held=True, handle=part == "handle")


def _c(
    link: str, kind: str, part: str, depth: float, side: str = "sideways", pair: int = 0
) -> Contact:
    """A contact of `link` with `part`; `pair` > 0 adds another contact point of that pair."""
    geoms = (_GEOMS[link], _GEOMS[part])
    return Contact(link, f"{kind}_0", kind, part, side, depth, (0.0, 0.0, float(pair)), geoms=geoms)


def _episode(index: int, steps: list, success: bool = True) -> EpisodeRecord:
    rec = EpisodeRecord("pick", "oracle", False, index, target_kind="fridge shelf")
    for k, (contacts, force) in enumerate(steps, start=1):
        rec.add_step(k, contacts, force, "obj_0" if k == 3 else "")
    rec.success, rec.steps = success, len(steps)
    return rec


def test_episode_record_keeps_the_deepest_contact_and_per_part_and_link_maxima():
    rec = _episode(
        0,
        [
            ([], 0.0),
            ([_c("elbow_flex", "fridge", "side wall", 0.03)], 300.0),
            (
                [
                    _c("elbow_flex", "fridge", "side wall", 0.06),
                    _c("elbow_flex", "fridge", "side wall", 0.05, pair=1),  # same pair
                    _c("gripper", "fridge", "shelf", 0.01),
                    _held("gripper", "handle", 0.03),  # exempt: not in the figures
                ],
                1200.0,
            ),
            (
                [
                    _c("gripper", "fridge", "shelf", 0.04, "from below"),
                    _held("base", "panel", 0.015),  # the held door's panel: counts, and apart
                    _held("gripper", "handle", 0.01),
                ],
                400.0,
            ),
        ],
    )
    assert rec.max_depth == 0.06 and rec.deepest_step == 3 and rec.deepest_holding == "obj_0"
    assert rec.held_handle_max_depth == 0.03 and rec.held_handle_deepest.key == "fridge door handle"
    assert rec.held_panel_max_depth == 0.015 and rec.held_panel_deepest.link == "base"
    assert rec.held_panel_deepest.key == "fridge door panel"
    assert (rec.deepest.link, rec.deepest.key) == ("elbow_flex", "fridge side wall")
    assert rec.steps_over == {"2cm": 3, "5cm": 1}  # steps 2, 3, 4 deeper than 2 cm
    assert rec.part_max == {
        "fridge side wall": 0.06,
        "fridge shelf": 0.04,
        "fridge door panel": 0.015,
    }
    assert rec.link_max == {"elbow_flex": 0.06, "gripper": 0.04, "base": 0.015}
    assert rec.forces == [0.0, 300.0, 1200.0, 400.0]
    assert rec.static_forces == pytest.approx([0.0, 300.0, 1200.0, 550.0])  # 1e4 N/m x sum
    assert rec.pair_forces == pytest.approx([0.0, 300.0, 700.0, 550.0])  # deepest per pair
    assert rec.deepest.side == "sideways"
    assert rec._entry[("gripper", "fridge_0", "shelf", (3, 11))] == "sideways"  # as entered


def test_tables_and_force_figures_on_hand_made_episodes():
    wall = _c("base", "wall", "", 0.12)
    shelf = _c("gripper", "fridge", "shelf", 0.03, "from above")
    low = [_c("gripper", "fridge", "shelf", 0.01), _held("elbow_flex", "panel", 0.015)]
    eps = [
        _episode(0, [([wall], 1200.0), ([_held("base", "panel", 0.04)], 0.0)]),  # 12 cm, wall
        _episode(1, [([shelf], 300.0), ([_held("gripper", "handle", 0.05)], 100.0)]),  # 3 cm
        _episode(2, [([], 0.0), ([_held("gripper", "handle", 0.01)], 0.0)], success=False),
        _episode(3, [(low, 100.0)]),  # 1 cm
    ]
    run = Run("pick", "oracle", False, episodes=eps)
    row = summary_row(run).split("|")
    # eps, success, > 2 / 5 / 10 cm, share within 2 cm, deepest (cm)
    assert [x.strip() for x in row[3:10]] == ["4", "3/4", "2", "1", "1", "50 %", "12.0"]
    assert "base in wall_0" in row[10]
    # the held door apart: its handle (eps > 2 cm / deepest cm), then the rest of it
    assert [x.strip() for x in row[12:14]] == ["1 / 5.0", "1 / 4.0"]
    parts = group_table(eps, "part").splitlines()
    assert parts[2].split("|")[1:7] == [" wall ", " 1 ", " 1 ", " 1 ", " 1 ", " 12.0 "]
    # the held panel counts like any wall (ep 0: 4 cm; ep 3's deepest, 1.5 cm), the handle not
    assert parts[3].split("|")[1:7] == [" fridge door panel ", " 1 ", " 1 ", " 0 ", " 0 ", " 4.0 "]
    assert parts[4].split("|")[1:7] == [" fridge shelf ", " 1 ", " 1 ", " 0 ", " 0 ", " 3.0 "]
    assert "handle" not in "".join(parts)
    links = group_table(eps, "link").splitlines()
    assert [r.split("|")[1].strip() for r in links[2:]] == ["base", "gripper", "elbow_flex"]
    assert "gripper 1" in parts[4] and "fridge shelf 1" in links[3]
    assert "fridge door panel 1" in links[4]
    target = group_table(eps, "target").splitlines()
    assert target[2].split("|")[1:8] == [
        " fridge shelf ",
        " 4 ",
        " 3 ",
        " 2 ",
        " 1 ",
        " 1 ",
        " 12.0 ",
    ]
    ok = force_stats([e for e in eps if e.success])  # steps 1200, 0, 300, 100, 100
    assert ok["steps"] == 5 and ok["step_nonzero"] == pytest.approx(0.8)
    assert ok["step_p50"] == pytest.approx(100.0) and ok["step_max"] == 1200.0
    assert ok["step_p90"] == pytest.approx(300.0 + 0.6 * 900.0)  # numpy's linear percentile
    assert ok["episode_sum_max"] == 1200.0 and ok["episode_sum_p50"] == pytest.approx(400.0)
    # Habitat's measure: force above 20 N summed per episode: 1180, 280 + 80, 80
    assert (ok["accum_p50"], ok["accum_max"], ok["accum_over_5000"]) == (360.0, 1180.0, 0)


def test_cli_runs_a_scripted_skill_and_writes_every_episode(tmp_path, capsys):
    from benchmarks.penetration import main

    out = tmp_path / "pen.json"
    argv = ["--skills", "close_cab", "--policy", "oracle", "--episodes", "1", "--json", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    blob = json.loads(out.read_text())
    (run,) = blob["runs"]
    (ep,) = run["episodes"]
    assert f"| close_cab | oracle | 1 | {int(ep['success'])}/1 |" in printed
    assert (run["skill"], run["policy"]) == ("close_cab", "oracle")
    assert all(0 < row[0] <= ep["steps"] and any(row[1:]) for row in ep["force_steps"])
    assert ep["force_sum"] == pytest.approx(sum(row[1] for row in ep["force_steps"]), abs=1)
    assert ep["target_kind"] == "drawer" and "_entry" not in ep


def test_contacts_with_the_held_door_tell_its_handle_from_its_panel():
    """Scripted open_fridge until it holds the handle: the gripper pushed 2 cm on into the
    handle touches only the handle (held, handle: the sim exempts it); the door then swung
    0.35 rad into the wrist puts the panel in the robot (held, not handle: the sim counts
    it). Neither reaches the episode's figures; each has its own maximum."""
    with scripted_fridge_hold() as sim:
        labels = geom_labels(sim.model, sim.layout)
        yaw = float(sim.base_pose()[2])
        _ee_to(sim, sim.ee_pos() + 0.02 * np.array([math.cos(yaw), math.sin(yaw), 0.0]))
        on_handle = static_contacts(sim, labels)
        assert on_handle and all(c.held and c.handle for c in on_handle)
        assert {c.key for c in on_handle} == {"fridge door handle"}
        sim.set_articulation_pos("fridge", sim.articulation_pos("fridge") + 0.35)
        swung = static_contacts(sim, labels)
        panel = [c for c in swung if c.key == "fridge door panel"]
        assert panel and all(c.held and not c.handle for c in panel)
        rec = EpisodeRecord("open_fridge", "oracle", False, 0)
        rec.add_step(1, on_handle, 0.0, "fridge")
        rec.add_step(2, swung, 0.0, "fridge")
        handle = [c.depth for c in on_handle + swung if c.handle]
        assert rec.held_handle_max_depth == max(handle) > 0
        assert rec.held_panel_max_depth == max(c.depth for c in panel) > 0.02
        # the panel counts in the main figures (the sim blocks it), the handle does not
        assert rec.max_depth == rec.held_panel_max_depth and rec.deepest_step == 2
        assert "fridge door panel" in rec.part_max
        assert not any("handle" in k for k in rec.part_max)
