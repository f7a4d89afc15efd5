"""The robot stops a door nothing holds (`RearrangeSim._stop_free_parts`): let go while it
moves, a door coasts on, and the blocking check, made before the physics with the door where
it was, cannot see it swing into the arm. A loose part that moved is re-measured against
the robot after the physics; one that ends deeper than the blocking cap is put back where
the step found it, at rest."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sim_helpers import scripted_fridge_hold

pytest.importorskip("mujoco")

LET_GO = -1.0  # grip action: release (and no new grasp)


@pytest.fixture
def let_go_at_the_handle():
    """The scripted open_fridge's robot at the fridge handle, the handle just let go (the
    door closed, the gripper beside its handle, nothing overlapping)."""
    with scripted_fridge_hold() as sim:
        sim.step(np.zeros(7), LET_GO, None)
        assert sim.held_articulation() is None
        yield sim


def _push_door(sim, speed: float) -> None:
    sim.data.qvel[sim.idx.art_dof["fridge"]] = speed  # rad/s, opening


def test_a_loose_door_swinging_into_the_arm_stops_where_it_was(let_go_at_the_handle):
    sim = let_go_at_the_handle
    door = sim.articulation_pos("fridge")
    _push_door(sim, 2.0)  # unchecked, the panel sweeps ~9 cm into the gripper in 10 steps
    for _ in range(10):
        sim.step(np.zeros(7), LET_GO, None)
        assert sim.static_depth <= sim.config.block_depth
        assert sim.static_depth_now() <= sim.config.block_depth  # not just the sim's belief
    assert sim.free_part_stopped_steps >= 1
    assert sim.articulation_pos("fridge") == pytest.approx(door, abs=2e-3)
    assert abs(sim.data.qvel[sim.idx.art_dof["fridge"]]) < 1e-3  # at rest, bar solver noise


def test_without_the_stop_the_same_door_goes_into_the_arm(let_go_at_the_handle):
    """The scenario above does test something: with the stop switched off
    (`SimConfig.stop_loose_parts`, the world before it) the door swings on and ends inside
    the robot, unmeasured by the sim's own depth."""
    sim = let_go_at_the_handle
    sim.config = dataclasses.replace(sim.config, stop_loose_parts=False)
    door = sim.articulation_pos("fridge")
    _push_door(sim, 2.0)
    for _ in range(10):
        sim.step(np.zeros(7), LET_GO, None)
    assert sim.articulation_pos("fridge") > door + 0.2
    assert sim.static_depth_now() > 0.05
    assert sim.static_depth <= sim.config.block_depth  # what the sim believed
    assert sim.free_part_stopped_steps == 0


def test_a_loose_door_swinging_clear_of_the_robot_keeps_moving(let_go_at_the_handle):
    sim = let_go_at_the_handle
    sim.set_articulation_pos("fridge", 1.0)  # open, the panel beside the robot
    _push_door(sim, 2.0)
    angles = []
    for _ in range(5):
        sim.step(np.zeros(7), LET_GO, None)
        angles.append(sim.articulation_pos("fridge"))
        assert sim.static_depth == pytest.approx(sim.static_depth_now(), abs=1e-9)
    assert sim.free_part_stopped_steps == 0
    assert np.all(np.diff([1.0] + angles) > 0.01)  # it coasted on, slowing
    assert np.all(np.diff(np.diff(angles)) < 0)
