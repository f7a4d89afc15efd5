"""GripTracker: the one bookkeeping of the grip rules (training env, learned skill, executor),
on a scripted stand-in sim whose hold and joint we set by hand."""

from types import SimpleNamespace

import numpy as np
import pytest

from rearrange.tasks.grip_rules import GripTracker

GRIP = 7


class HandSim:
    """Only what the rules read: held object, held handle, joint position, object position."""

    def __init__(self):
        self.obj, self.handle, self.joint, self.obj_pos = None, None, 0.0, np.zeros(3)

    def held_object(self):
        return self.obj

    def held_articulation(self):
        return self.handle

    def articulation_pos(self, name):
        return self.joint

    def object_pos(self, i):
        return self.obj_pos


def _act(grip):
    a = np.zeros(8, dtype=np.float32)
    a[GRIP] = grip
    return a


# (skill, start, target, a joint 0.25 short of it, one 0.04 short, one pushed back after)
ARTICULATED_CASES = [
    ("open_cab", 0.0, 0.45, 0.20, 0.41, 0.30),
    ("open_fridge", 0.0, 1.22, 0.97, 1.18, 1.0),
    ("close_cab", 0.45, 0.0, 0.25, 0.04, 0.2),
    ("close_fridge", 1.22, 0.0, 0.25, 0.04, 0.2),
]


@pytest.mark.parametrize("skill, start, goal, short, near, back", ARTICULATED_CASES)
def test_articulated_holds_handle_until_joint_at_target_then_lets_go(
    skill, start, goal, short, near, back
):
    sim, tr = HandSim(), GripTracker(skill, art_tol=0.05)
    sim.joint = start
    target = SimpleNamespace(articulation="drawer_0", art_target=goal)
    assert tr.mask(_act(-0.3), GRIP, sim, target)[GRIP] == pytest.approx(-0.3)  # free: no hold
    sim.handle, sim.joint = "drawer_0", short
    assert tr.mask(_act(-0.3), GRIP, sim, target)[GRIP] == 1.0  # holding, 0.25 short: kept on
    sim.handle = "fridge_door"  # another handle does not count
    assert tr.mask(_act(-0.3), GRIP, sim, target)[GRIP] == pytest.approx(-0.3)
    sim.handle, sim.joint = "drawer_0", near  # 0.04 from the target: the hold is over
    assert tr.mask(_act(0.9), GRIP, sim, target)[GRIP] == -1.0
    sim.handle, sim.joint = None, back  # pushed back afterwards: stays off
    assert tr.mask(_act(0.9), GRIP, sim, target)[GRIP] == -1.0
    tr.reset()
    sim.joint = start
    assert tr.mask(_act(0.9), GRIP, sim, target)[GRIP] == pytest.approx(0.9)


def test_an_open_joint_past_its_target_has_reached_it():
    """A drawer pulled to its 0.5 m stop (target 0.45) is open: the hold is over."""
    sim, tr = HandSim(), GripTracker("open_cab", art_tol=0.05)
    target = SimpleNamespace(articulation="drawer_0", art_target=0.45)
    sim.handle, sim.joint = "drawer_0", 0.5
    assert tr.mask(_act(0.9), GRIP, sim, target)[GRIP] == -1.0


def test_place_tracker_releases_only_near_goal_and_stays_off():
    sim, tr = HandSim(), GripTracker("place")
    target = SimpleNamespace(obj_index=0, goal_pos=np.array([1.0, 0.0, 0.0]))
    sim.obj = 0
    assert tr.mask(_act(-0.8), GRIP, sim, target)[GRIP] == 1.0  # 1 m from the goal: kept on
    sim.obj_pos = np.array([0.9, 0.0, 0.0])  # 0.1 m: the policy may let go
    assert tr.mask(_act(-0.8), GRIP, sim, target)[GRIP] == pytest.approx(-0.8)
    sim.obj = None  # it let go
    assert tr.mask(_act(0.8), GRIP, sim, target)[GRIP] == -1.0
    assert tr.released


def test_pick_tracker_and_no_grip_dimension():
    sim, tr = HandSim(), GripTracker("pick")
    sim.obj = 3
    assert tr.mask(_act(-0.8), GRIP, sim, SimpleNamespace())[GRIP] == 1.0
    a = np.array([0.2, -0.1, 0.5], dtype=np.float32)
    np.testing.assert_allclose(GripTracker("nav").mask(a, None, sim, None), a)


def test_place_may_not_release_under_the_goal_surface():
    sim, tr = HandSim(), GripTracker("place")
    target = SimpleNamespace(obj_index=0, goal_pos=np.array([1.0, 0.0, 0.9]))
    sim.obj = 0
    sim.obj_pos = np.array([1.0, 0.0, 0.82])  # 0.08 m away, but 8 cm below: kept on
    assert tr.mask(_act(-0.8), GRIP, sim, target)[GRIP] == 1.0
    sim.obj_pos = np.array([1.0, 0.1, 0.87])  # 0.104 m away, 3 cm below: may let go
    assert tr.mask(_act(-0.8), GRIP, sim, target)[GRIP] == pytest.approx(-0.8)
