"""The arm clearance scan (`RearrangeSim.arm_clearance`, the `arm_rays` sensor of the
`state_rays` preset): ray distances by hand in a hand-made room (a table top under the
gripper, a wall ahead of it, with the base turned), what the rays do not see (the robot,
a free object under the gripper, the floor), origins inside geometry, the geom group that
selects the blockers, the observation spaces of the presets, and the same pick observation
in the skill env and the HAB env."""

from __future__ import annotations

import math
import os

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("LP_NUM_THREADS", "1")

import mujoco  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rearrange.sim.arm_scan import ARM_RAY_COUNT, ARM_RAY_DIRECTIONS, ARM_RAY_ORIGINS  # noqa: E402
from rearrange.sim.episode_types import Episode, ObjectPlacement  # noqa: E402
from rearrange.sim.furniture_geoms import STATIC_BIT, STATIC_GROUP  # noqa: E402
from rearrange.sim.layout_types import Box, Furniture, Layout  # noqa: E402
from rearrange.sim.world import RearrangeSim  # noqa: E402
from rearrange.skill_spec import SKILL_NAMES, SkillTarget, skill_def  # noqa: E402
from rearrange.tasks import HabConfig, HabEnv, default_task_config, make_env  # noqa: E402
from rearrange.tasks.sensors import (  # noqa: E402
    ARM_RAY_MAX_RANGE,
    SENSOR_DIMS,
    build_observation,
    task_observation_space,
)

MAX = ARM_RAY_MAX_RANGE
N_DIR = len(ARM_RAY_DIRECTIONS)
EE, WRIST, ELBOW = 0, 1, 2  # origins
PX, NX, PY, NY, PZ, NZ = range(6)  # directions, base frame
ROOM = 4.0  # square room, inner faces of the walls at 0 and ROOM
TABLE = (3.0, 2.0, 0.45, 0.6, 0.75)  # centre x, y, half x, half y, top height (legged table)
SEED = -9311  # used by no generated layout (the sim's and the scene builder's caches key on it)


def _room() -> Layout:
    t = 0.05  # wall half thickness, 2.5 m high
    walls = [
        Box((ROOM / 2, -t, 1.25), (ROOM / 2 + 2 * t, t, 1.25)),
        Box((ROOM / 2, ROOM + t, 1.25), (ROOM / 2 + 2 * t, t, 1.25)),
        Box((-t, ROOM / 2, 1.25), (t, ROOM / 2, 1.25)),
        Box((ROOM + t, ROOM / 2, 1.25), (t, ROOM / 2, 1.25)),
    ]
    x, y, hx, hy, h = TABLE
    table = Furniture("table_0", "table", "room", (x, y), (hx, hy, h / 2), 0.0)
    return Layout(SEED, "train", (0.0, 0.0, ROOM, ROOM), walls=walls, furniture=[table])


FAR_APPLE = ObjectPlacement("apple", (0.3, ROOM - 0.3, 0.05), (1, 0, 0, 0), "")  # pick's target


def _episode(pose, objects=(FAR_APPLE,)) -> Episode:
    return Episode("arm_scan", "pick", "train", SEED, pose, list(objects))


@pytest.fixture(scope="module")
def room_sim():
    sim = RearrangeSim()
    sim.register_layout(_room())
    yield sim
    sim.close()


def _scan(sim) -> np.ndarray:
    """[origin, direction] metres, through the sensor (normalised float32, scaled back)."""
    obs = build_observation("pick", "state_rays", sim, SkillTarget(obj_index=0), False)
    rays = obs["arm_rays"]
    assert rays.shape == (ARM_RAY_COUNT,) and rays.dtype == np.float32
    assert (rays >= 0).all() and (rays <= 1).all()
    return rays.astype(np.float64).reshape(-1, N_DIR) * MAX


def _origins(sim) -> np.ndarray:
    m, d = sim.model, sim.data
    return np.array(
        [
            d.site_xpos[m.site(n).id] if k == "site" else d.xpos[m.body(n).id]
            for k, n in ARM_RAY_ORIGINS
        ]
    )


def _put_ee(sim, target) -> None:
    """Set the arm (kinematically) so the EE is at world `target` (damped least squares)."""
    target = np.asarray(target, dtype=np.float64)
    for _ in range(300):
        err = target - sim.ee_pos()
        if np.linalg.norm(err) < 5e-4:
            return
        jac = sim.arm_jacobian()
        dq = jac.T @ np.linalg.solve(jac @ jac.T + 1e-4 * np.eye(3), err)
        sim.set_arm_joint_pos(sim.arm_joint_pos() + np.clip(dq, -0.2, 0.2))
    raise AssertionError(f"EE not at {target}: {sim.ee_pos()}")


def _first_hit_any_group(sim, origin, direction) -> tuple[float, int]:
    gid = np.zeros(1, np.int32)
    dist = mujoco.mj_ray(sim.model, sim.data, origin, direction, None, 1, -1, gid)
    return dist, int(gid[0])


# ------------------------------------------------------------------------- the geom group


def test_the_static_group_is_exactly_the_geoms_that_block_the_robot(room_sim):
    room_sim.reset(_episode((2.0, 2.0, 0.0), [ObjectPlacement("apple", (1.0, 1.0, 0.05),
                                                              (1, 0, 0, 0), "")]))  # fmt: skip
    m, idx = room_sim.model, room_sim.idx
    static = (m.geom_contype & STATIC_BIT).astype(bool)
    assert np.array_equal(m.geom_group == STATIC_GROUP, static) and static.any()
    assert not (m.geom_group[idx.robot_geoms] == STATIC_GROUP).any()
    assert m.geom_group[idx.obj_geoms[0]] != STATIC_GROUP
    assert m.geom_group[m.geom("floor").id] != STATIC_GROUP
    # Rendering shows the group as before (MuJoCo's default scene options show 0-2).
    for vopt in (room_sim.head_vopt, room_sim.third_person_vopt, mujoco.MjvOption()):
        assert vopt.geomgroup[STATIC_GROUP] == 1


def test_the_generated_apartment_blockers_are_in_the_group():
    from rearrange.sim.apartment import generate_layout
    from rearrange.sim.snapshot import stand_in_front

    sim = RearrangeSim()
    try:
        layout = generate_layout(0, "train")
        sim.reset(Episode("t", "pick", "train", 0, stand_in_front(layout, "fridge_0", 0.6), []))
        m, idx = sim.model, sim.idx
        for name in ("fridge", "drawer_0"):  # doors and drawers, their handles included
            assert (m.geom_group[idx.art_geoms[name]] == STATIC_GROUP).all()
        fridge = m.geom_bodyid == m.body("fridge_0").id  # walls, shelf, ceiling
        assert fridge.sum() >= 4 and (m.geom_group[fridge] == STATIC_GROUP).all()
    finally:
        sim.close()


# ------------------------------------------------------------------- distances by hand


def test_down_ray_reads_the_table_top_under_the_gripper(room_sim):
    room_sim.reset(_episode((2.0, 2.0, 0.0)))
    x, y, *_ = TABLE
    for height in (0.30, 0.12):
        _put_ee(room_sim, (x - 0.3, y - 0.2, TABLE[4] + height))
        r = _scan(room_sim)
        assert r[EE, NZ] == pytest.approx(height, abs=0.01)
        # The wrist sits above the gripper here (pointing down), so its -z ray reads more.
        wrist_z = _origins(room_sim)[WRIST, 2]
        assert r[WRIST, NZ] == pytest.approx(min(wrist_z - TABLE[4], MAX), abs=1e-4)
        assert r[EE, PZ] == MAX  # nothing above


def test_forward_ray_reads_the_wall_with_the_base_turned(room_sim):
    # Facing +y, 0.9 m from the far wall (y = ROOM): base-frame +x is world +y.
    room_sim.reset(_episode((1.0, ROOM - 0.9, math.pi / 2)))
    o = _origins(room_sim)
    r = _scan(room_sim)
    for k in (EE, WRIST, ELBOW):
        assert r[k, PX] == pytest.approx(min(ROOM - o[k, 1], MAX), abs=1e-4), k
    assert r[EE, PX] < 0.35 and r[ELBOW, PX] == MAX  # rest pose: EE 0.27 m, elbow 0.61 m
    # base-frame -y (the robot's right) is world +x: the table's side at x = 2.55 is > 0.5 m
    # away; base-frame +y (left) is world -x, the wall at x = 0 a metre away: nothing.
    assert r[EE, NY] == MAX and r[EE, PY] == MAX
    # The base 0.15 m nearer the wall: the EE's ray is 0.15 m shorter.
    assert room_sim.set_base_pose(1.0, ROOM - 0.75, math.pi / 2)
    r2 = _scan(room_sim)
    assert r2[EE, PX] == pytest.approx(r[EE, PX] - 0.15, abs=1e-4)


def test_robot_floor_and_free_objects_are_not_seen(room_sim):
    room_sim.reset(_episode((2.0, 2.0, 0.0)))
    x, y, *_ = TABLE
    ee = np.array([x - 0.3, y - 0.2, TABLE[4] + 0.25])
    _put_ee(room_sim, ee)
    q = room_sim.arm_joint_pos()
    # A can on the table right under the gripper: the down ray passes through it.
    can = ObjectPlacement("tomato_soup_can", (ee[0], ee[1], TABLE[4] + 0.06), (1, 0, 0, 0), "")
    room_sim.reset(_episode((2.0, 2.0, 0.0), [can]))
    room_sim.set_arm_joint_pos(q)
    # (from just below the fingertips: the EE is inside the gripper, whose geoms come first)
    below, down = room_sim.ee_pos() - [0.0, 0.0, 0.06], np.array([0.0, 0.0, -1.0])
    dist, gid = _first_hit_any_group(room_sim, below, down)
    assert gid == room_sim.idx.obj_geoms[0] and dist < 0.1  # the can is there ...
    r = _scan(room_sim)
    assert r[EE, NZ] == pytest.approx(0.25, abs=0.01)  # ... and the scan reads the table
    # The robot's own geoms: from the EE inside the gripper, rays hit the fingers first, and
    # rays from the elbow cross the arm; none of it is read.
    o = _origins(room_sim)
    seen_robot = 0
    for k in range(len(o)):
        for j, v in enumerate(ARM_RAY_DIRECTIONS):
            dist, gid = _first_hit_any_group(room_sim, o[k], v)  # yaw 0: base frame = world
            if gid >= 0 and room_sim.idx.robot_geoms[gid]:
                seen_robot += 1
                assert r[k, j] > dist + 0.01, (k, j)
    assert seen_robot > 0
    # The floor: EE 0.3 m above it in the open, facing away from the table.
    room_sim.reset(_episode((2.0, 2.0, math.pi)))
    _put_ee(room_sim, (1.4, 2.1, 0.3))
    dist, gid = _first_hit_any_group(room_sim, room_sim.ee_pos(), down)
    assert gid == room_sim.model.geom("floor").id and dist == pytest.approx(0.3, abs=1e-3)
    assert _scan(room_sim)[EE, NZ] == MAX


def test_an_origin_inside_a_blocker_reads_zero(room_sim):
    room_sim.reset(_episode((2.0, 2.0, 0.0)))
    x, y, *_ = TABLE
    _put_ee(room_sim, (x - 0.3, y - 0.2, TABLE[4] - 0.02))  # in the 4 cm table top
    r = _scan(room_sim)
    assert (r[EE] == 0).all()
    assert r[WRIST].max() > 0  # the wrist is above the top


def test_inside_test_follows_a_turned_door():
    from rearrange.sim.apartment import generate_layout
    from rearrange.sim.arm_scan import inside_boxes
    from rearrange.sim.snapshot import stand_in_front

    sim = RearrangeSim()
    try:
        layout = generate_layout(0, "train")
        pose = stand_in_front(layout, "fridge_0", 1.2)
        sim.reset(Episode("t", "pick", "train", 0, pose, [], articulations={"fridge": 0.7}))
        d, geoms = sim.data, sim.idx.art_geoms["fridge"]
        assert len(geoms) >= 2
        for g in geoms:  # each box of the door, turned 0.7 rad round its hinge
            c, xmat, half = d.geom_xpos[g], d.geom_xmat[g], sim.model.geom_size[g]
            for axis in range(3):
                e = np.zeros(3)
                e[axis] = half[axis]
                along = xmat.reshape(3, 3) @ e  # the box's own axis, in the world
                pts = c + np.array([0.9 * along, -0.9 * along, 1.1 * along, -1.1 * along])
                got = inside_boxes(pts, c[None], xmat[None], half[None])
                assert list(got) == [True, True, False, False], (g, axis)
    finally:
        sim.close()


def test_the_scan_is_the_sims_in_metres(room_sim):
    room_sim.reset(_episode((2.0, 2.0, 0.0)))
    want = room_sim.arm_clearance(MAX).reshape(-1, N_DIR)
    assert _scan(room_sim) == pytest.approx(want, abs=1e-6)
    assert room_sim.arm_clearance(0.1).max() <= 0.1  # capped at the range asked for


# ------------------------------------------------------------------- observations


def test_state_is_unchanged_and_state_rays_adds_the_arm_scan():
    for task in SKILL_NAMES:
        spec = skill_def(task)
        state = task_observation_space(task, "state")
        assert set(state.spaces) == set(spec.sensors)  # as before: no scan under "state"
        rays = task_observation_space(task, "state_rays")
        extra = set(rays.spaces) - set(state.spaces)
        want = {"rays"} if spec.ray_scan else set()
        want |= {"arm_rays"} if spec.arm_scan else set()
        assert extra == want, task
        assert all(rays[k] == state[k] for k in state.spaces)
    assert skill_def("pick").arm_scan and skill_def("place").arm_scan
    assert not skill_def("nav").arm_scan  # nav keeps exactly its keys
    space = task_observation_space("pick", "state_rays")["arm_rays"]
    assert space.shape == (18,) == (SENSOR_DIMS["arm_rays"],)
    assert (space.low == 0).all() and (space.high == 1).all()
    assert "arm_rays" not in task_observation_space("pick", "depth").spaces


def test_fridge_pick_observes_the_fridge_and_stays_in_its_space():
    config = default_task_config(
        "pick", obs_preset="state_rays", num_episodes=2, fridge_pick_prob=1.0
    )
    env = make_env("pick", config, "val", 0)
    try:
        obs, _ = env.reset(seed=0)
        space = env.observation_space
        assert set(obs) == set(skill_def("pick").sensors) | {"arm_rays"}
        # Before the shelf: the fridge walls / shelf are within reach of some ray.
        assert obs["arm_rays"].min() < 1.0
        rng = np.random.default_rng(0)
        for _ in range(30):
            assert space.contains(obs)
            obs, *_ = env.step(rng.uniform(-1, 1, env.action_space.shape[0]))
    finally:
        env.close()


def test_hab_env_builds_the_pick_skill_envs_observation():
    sim = RearrangeSim()
    try:
        hab = HabEnv("tidy_house", HabConfig(obs_preset="state_rays", num_episodes=1), "val", 0,
                     sim=sim)  # fmt: skip
        hab.reset(seed=0)
        config = default_task_config("pick", obs_preset="state_rays", num_episodes=1)
        pick = make_env("pick", config, "train", 0, sim=sim)  # same sim: the same state
        assert hab.observation_space("pick") == pick.observation_space
        target = hab.pick_target(0)
        pick.unwrapped.target = target
        rng = np.random.default_rng(1)
        for _ in range(5):
            from_hab, from_skill = hab.observe("pick", target), pick.unwrapped.observe()
            assert from_hab.keys() == from_skill.keys() and "arm_rays" in from_hab
            for key in from_hab:
                np.testing.assert_array_equal(from_hab[key], from_skill[key], err_msg=key)
            hab.apply_action("pick", rng.uniform(-1, 1, hab.action_space("pick").shape[0]))
        # A state-trained pick reads its own keys of that observation: exactly its state one.
        a, b = hab.observe("pick", target), hab.observe("pick", target, obs_preset="state")
        assert set(a) - set(b) == {"arm_rays"}
        assert all(np.array_equal(a[k], b[k]) for k in b)
    finally:
        sim.close()


def test_a_state_rays_pick_checkpoint_is_recognised_as_state_rays():
    from types import SimpleNamespace

    from rearrange.eval.runner import env_settings
    from rearrange.runtime.checkpoint import preset_of_space

    space = task_observation_space("pick", "state_rays")
    assert preset_of_space(space) == "state_rays"
    pick = SimpleNamespace(observation_space=space, layout=SimpleNamespace(base=None))
    assert env_settings({"pick": pick}, False)[0] == "state_rays"
