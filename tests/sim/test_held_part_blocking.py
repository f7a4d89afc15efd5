"""The robot blocks the door it holds (`RearrangeSim._check_held_part`): the suction weld
holds the handle point only, so a door following the gripper round its hinge turns its
panel relative to the wrist; a step that ends with the held panel deeper in the robot than
the blocking cap is undone, door and robot together."""

from __future__ import annotations

import numpy as np
import pytest
from sim_helpers import scripted_fridge_hold

pytest.importorskip("mujoco")


@pytest.fixture
def holding_fridge():
    """An open_fridge val episode, stepped by the scripted skill until it holds the handle
    (the door still closed, nothing overlapping)."""
    with scripted_fridge_hold() as sim:
        assert sim.static_depth <= 0.01
        yield sim


def _swing_door(sim, angle: float):
    """The step's start state, then the door turned by `angle` rad with the robot where it
    is: what the physics does when the door follows the handle and the wrist does not."""
    d, idx = sim.data, sim.idx
    arm, base = d.qpos[idx.arm_qpos].copy(), d.qpos[idx.base_qpos].copy()
    before = sim._held_part_guard(arm, base)
    door = sim.articulation_pos("fridge")
    sim.set_articulation_pos("fridge", door + angle)
    sim._start_depth = sim._end_depth = before.depth
    return before, arm, door


def test_a_door_swung_into_the_holding_gripper_is_undone(holding_fridge):
    sim = holding_fridge
    before, arm, door = _swing_door(sim, 0.35)
    blocked = sim.blocked_steps
    sim._check_held_part(before, arm)
    assert sim.held_part_blocked_steps == 1 and sim.blocked_steps == blocked + 1
    assert sim.articulation_pos("fridge") == pytest.approx(door, abs=1e-9)  # door put back
    np.testing.assert_array_equal(sim.data.qpos, before.qpos)
    np.testing.assert_array_equal(sim.arm_target, arm)
    depth = sim._static_depths()
    assert (depth.max() if depth.size else 0.0) <= sim.config.block_depth


def test_a_door_that_stays_clear_of_the_gripper_keeps_its_move(holding_fridge):
    sim = holding_fridge
    before, arm, door = _swing_door(sim, 0.01)
    sim._check_held_part(before, arm)
    assert sim.held_part_blocked_steps == 0
    assert sim.articulation_pos("fridge") == pytest.approx(door + 0.01, abs=1e-9)
    assert sim._start_depth[0] <= sim.config.block_depth  # the re-measured depth


def test_the_guard_is_off_when_nothing_articulated_is_held(holding_fridge):
    sim = holding_fridge
    sim.gripper.release()
    d, idx = sim.data, sim.idx
    assert sim._held_part_guard(d.qpos[idx.arm_qpos], d.qpos[idx.base_qpos]) is None


def _raw_handle_depth(sim) -> float:
    sim.collide_with_static()
    d = sim.data
    g = d.contact.geom[: d.ncon]
    robot = sim.idx.robot_geoms[g].any(axis=1)
    on_handle = np.isin(g, sim.idx.art_grip_geoms["fridge"]).any(axis=1)
    depth = -d.contact.dist[: d.ncon][robot & on_handle]
    return float(depth.max()) if depth.size else 0.0


def test_the_arm_cannot_push_the_gripper_through_the_handle_it_holds(holding_fridge):
    sim = holding_fridge
    allowance = sim._grip_allowance
    assert sim.config.block_depth <= allowance < 0.02
    handle = sim.handle_pos("fridge")
    base = sim.base_pose()
    into = np.array([handle[0] - base[0], handle[1] - base[1], 0.0])
    into /= np.linalg.norm(into)
    target = sim.ee_pos() + 0.08 * into  # 8 cm on: through the bar, towards the closed door
    deepest = 0.0
    for _ in range(40):
        jac = sim.arm_jacobian()
        dq = jac.T @ np.linalg.solve(jac @ jac.T + 1e-3 * np.eye(3), target - sim.ee_pos())
        sim.step(np.clip(dq / sim.config.arm_delta_scale, -1, 1), 1.0, None)
        deepest = max(deepest, _raw_handle_depth(sim))
    assert sim.held_articulation() == "fridge"
    assert sim.blocked_steps > 0
    assert deepest <= allowance + sim.config.block_depth + 0.005  # + what the hold lags


@pytest.mark.parametrize("count_bar", [True, False])
def test_block_held_handle_counts_the_bar_beyond_the_grasp(holding_fridge, count_bar):
    """A door turned 0.07 rad under the still gripper: its panel stays clear, but the bar
    ends 2.3 cm in the fingers, 1.3 cm beyond the grasp's 1 cm. With
    `SimConfig.block_held_handle` that is a blocked step; without it the bar is exempt."""
    import dataclasses

    sim = holding_fridge
    sim.config = dataclasses.replace(sim.config, block_held_handle=count_bar)
    before, arm, door = _swing_door(sim, 0.07)
    assert sim._depth_pair()[0] <= sim.config.block_depth  # the panel alone: clear
    assert _raw_handle_depth(sim) > sim._grip_allowance + sim.config.block_depth
    sim._check_held_part(before, arm)
    assert sim.held_part_blocked_steps == int(count_bar)
    moved = 0.0 if count_bar else 0.07
    assert sim.articulation_pos("fridge") == pytest.approx(door + moved, abs=1e-9)


def test_a_bar_the_door_turned_deeper_raises_no_cap(holding_fridge):
    """Without `block_held_handle` the re-measure lets the door turn the bar into the
    fingers. The next step, stuck at its start by the bar counted beyond the grasp, must
    not take it for a door swung into the arm: the bar gets an entry of its own, and the
    cap for every other part stays `block_depth` (a learned open_fridge's held panel went
    4.4 cm into the gripper when the bar's depth raised it)."""
    sim = holding_fridge
    assert not sim.config.block_held_handle
    before, arm, door = _swing_door(sim, 0.07)
    assert _raw_handle_depth(sim) > sim._grip_allowance + sim.config.block_depth
    sim._check_held_part(before, arm)
    assert sim.held_part_blocked_steps == 0  # the bar is exempt there: the move stands
    d, idx = sim.data, sim.idx
    sim._start_depth = None  # the next step measures its start afresh
    arm_now, base_now = d.qpos[idx.arm_qpos].copy(), d.qpos[idx.base_qpos].copy()
    sim._depth_now(arm_now, base_now)
    sim._entry_depth = 0.0
    sim.arm_target = arm_now + 0.01  # any small move, still holding the bar that deep
    sim._free_goal(arm_now, base_now, base_now)
    assert sim._entry_depth == 0.0
    assert sim._depth_cap() == pytest.approx(sim.config.block_depth)
    assert sim._bar_entry > sim.config.block_depth  # the bar's own: it may leave from there
