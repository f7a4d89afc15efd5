"""Plans for the three HAB scenarios against hand-checked minimal plans."""

from __future__ import annotations

import time

import pytest
from planner_fixtures import make_episode, make_layout

from rearrange.planner import format_plan, make_plan, plan_stages, remove_nav, stage_names
from rearrange.planner.plan import PlanStep


@pytest.fixture
def layout():
    return make_layout()


TIDY_STARTS = ["counter_0", "sofa_0", "table_0", "shelf_0", "coffee_table_0", "side_table_0"]
TIDY_GOALS = ["table_0", "shelf_0", "counter_0", "sofa_0", "table_0", None]  # obj 5: clutter

TIDY_PLAN = (
    "nav(obj_0) pick(obj_0, counter_0) nav(table_0) place(obj_0, table_0) "
    "nav(obj_1) pick(obj_1, sofa_0) nav(shelf_0) place(obj_1, shelf_0) "
    "nav(obj_2) pick(obj_2, table_0) nav(counter_0) place(obj_2, counter_0) "
    "nav(obj_3) pick(obj_3, shelf_0) nav(sofa_0) place(obj_3, sofa_0) "
    "nav(obj_4) pick(obj_4, coffee_table_0) nav(table_0) place(obj_4, table_0)"
)
# Fridge open: objects 0 and 2 come out of the fridge, object 1 goes in.
GROCERIES_PLAN = (
    "nav(obj_0) pick(obj_0, fridge_shelf_0) nav(counter_0) place(obj_0, counter_0) "
    "nav(obj_1) pick(obj_1, counter_0) nav(fridge_shelf_0) place(obj_1, fridge_shelf_0) "
    "nav(obj_2) pick(obj_2, fridge_shelf_0) nav(counter_0) place(obj_2, counter_0)"
)
# Drawer and fridge closed; the nav(obj_0) after open_cab is Set Table's extra stage.
SET_TABLE_PLAN = (
    "nav(drawer_0) open_cab(drawer_0) nav(obj_0) pick(obj_0, drawer_0_inside) "
    "nav(table_0) place(obj_0, table_0) "
    "nav(fridge) open_fridge(fridge) nav(obj_1) pick(obj_1, fridge_shelf_0) "
    "nav(table_0) place(obj_1, table_0)"
)


def tidy_episode():
    return make_episode("tidy_house", TIDY_STARTS, TIDY_GOALS)


def groceries_episode(fridge: float = 1.2208):
    starts = ["fridge_shelf_0", "counter_0", "fridge_shelf_0"]
    goals = ["counter_0", "fridge_shelf_0", "counter_0"]
    return make_episode("prepare_groceries", starts, goals, {"fridge": fridge})


def set_table_episode():
    return make_episode(
        "set_table", ["drawer_0_inside", "fridge_shelf_0"], ["table_0", "table_0"], {}
    )


def test_tidy_house_five_objects(layout):
    t0 = time.perf_counter()
    plan = make_plan(layout, tidy_episode())
    print(f"\ntidy_house 5-object plan: {1000 * (time.perf_counter() - t0):.1f} ms")
    assert format_plan(plan) == TIDY_PLAN
    assert len(plan) == 20


def test_tidy_house_steps_resolve_runtime_targets(layout):
    plan = make_plan(layout, tidy_episode())
    assert plan[0] == PlanStep("nav", ("obj_0",), obj_index=0, target_index=0)
    assert plan[0].nav_kind == "object"
    assert plan[1] == PlanStep("pick", ("obj_0", "counter_0"), 0, 0, receptacle="counter_0")
    assert plan[2] == PlanStep("nav", ("table_0",), 0, 0, receptacle="table_0")
    assert plan[2].nav_kind == "goal"
    assert plan[3] == PlanStep("place", ("obj_0", "table_0"), 0, 0, receptacle="table_0")
    # obj_4 is target 4 and also goes to table_0: the nav resolves to ITS goal.
    assert (plan[18].obj_index, plan[18].target_index) == (4, 4)


def test_prepare_groceries_with_open_fridge(layout):
    plan = make_plan(layout, groceries_episode())
    assert format_plan(plan) == GROCERIES_PLAN


def test_prepare_groceries_with_closed_fridge_opens_it_once(layout):
    plan = make_plan(layout, groceries_episode(fridge=0.0))
    assert format_plan(plan) == (
        "nav(fridge) open_fridge(fridge) nav(obj_0) pick(obj_0, fridge_shelf_0) "
        "nav(counter_0) place(obj_0, counter_0) "
        "nav(obj_1) pick(obj_1, counter_0) nav(fridge_shelf_0) place(obj_1, fridge_shelf_0) "
        "nav(obj_2) pick(obj_2, fridge_shelf_0) nav(counter_0) place(obj_2, counter_0)"
    )


def test_set_table_with_closed_drawer_and_fridge(layout):
    plan = make_plan(layout, set_table_episode())
    assert format_plan(plan) == SET_TABLE_PLAN
    assert [s.nav_kind for s in plan if s.skill == "nav"] == [
        "articulation",
        "object",
        "goal",
        "articulation",
        "object",
        "goal",
    ]
    assert plan[1].articulation == "drawer_0" and plan[7].articulation == "fridge"


def test_set_table_extra_nav_follows_each_open(layout):
    with_extra = make_plan(layout, set_table_episode())
    i = [s.skill for s in with_extra].index("open_fridge")
    assert with_extra[i + 1] == PlanStep("nav", ("obj_1",), obj_index=1, target_index=1)
    no_fridge_nav = make_plan(layout, set_table_episode(), nav_after_open_fridge=False)
    assert no_fridge_nav == with_extra[: i + 1] + with_extra[i + 2 :]
    without = make_plan(
        layout, set_table_episode(), nav_after_open_cab=False, nav_after_open_fridge=False
    )
    i = [s.skill for s in with_extra].index("open_cab")
    assert with_extra[i + 1] == PlanStep("nav", ("obj_0",), obj_index=0, target_index=0)
    assert without[i + 1].skill == "pick"  # the PDDL plan itself picks right after opening
    assert no_fridge_nav[: i + 1] + no_fridge_nav[i + 2 :] == without


def test_extra_nav_only_for_set_table(layout):
    episode = make_episode("tidy_house", ["drawer_0_inside"], ["table_0"])
    plan = make_plan(layout, episode)
    assert format_plan(plan) == (
        "nav(drawer_0) open_cab(drawer_0) pick(obj_0, drawer_0_inside) "
        "nav(table_0) place(obj_0, table_0)"
    )


def test_no_nav_removes_exactly_the_nav_steps(layout):
    for episode in (tidy_episode(), groceries_episode(), set_table_episode()):
        full = make_plan(layout, episode)
        no_nav = make_plan(layout, episode, no_nav=True)
        assert no_nav == [s for s in full if s.skill != "nav"]
        assert no_nav == remove_nav(full)
        assert len(full) - len(no_nav) == sum(s.skill == "nav" for s in full)
    assert format_plan(make_plan(layout, set_table_episode(), no_nav=True)) == (
        "open_cab(drawer_0) pick(obj_0, drawer_0_inside) place(obj_0, table_0) "
        "open_fridge(fridge) pick(obj_1, fridge_shelf_0) place(obj_1, table_0)"
    )


def test_plan_stages_number_interactions(layout):
    plan = make_plan(layout, set_table_episode())
    assert stage_names(plan) == [
        "open_cab_1",
        "pick_1",
        "place_1",
        "open_fridge_1",
        "pick_2",
        "place_2",
    ]
    assert [s.step_index for s in plan_stages(plan)] == [1, 3, 5, 7, 9, 11]
    tidy = make_plan(layout, tidy_episode(), no_nav=True)
    assert stage_names(tidy)[:3] == ["pick_1", "place_1", "pick_2"]
    assert [s.step_index for s in plan_stages(tidy)] == list(range(10))


def test_object_already_on_goal_receptacle_is_still_moved(layout):
    # The goal is a position on the receptacle, so the object is picked and placed.
    episode = make_episode("tidy_house", ["table_0"], ["table_0"])
    assert format_plan(make_plan(layout, episode)) == (
        "nav(obj_0) pick(obj_0, table_0) nav(table_0) place(obj_0, table_0)"
    )


def test_held_object_is_placed_first(layout):
    episode = make_episode("tidy_house", ["sofa_0", "counter_0"], ["table_0", "shelf_0"])
    episode.extras["holding"] = 1
    assert format_plan(make_plan(layout, episode)) == (
        "nav(shelf_0) place(obj_1, shelf_0) "
        "nav(obj_0) pick(obj_0, sofa_0) nav(table_0) place(obj_0, table_0)"
    )


def test_no_targets_gives_empty_plan(layout):
    assert make_plan(layout, make_episode("tidy_house", ["sofa_0"], [None])) == []
