"""Domain parsing, problem generation and the errors for impossible goals."""

from __future__ import annotations

import pytest
from pddlpy import DomainProblem
from planner_fixtures import make_episode, make_layout

from rearrange.planner import PlanningError, build_problem, domain_file, make_plan
from rearrange.planner.problem import is_opened, object_index, object_name
from rearrange.sim.layout_types import Articulation, Receptacle


@pytest.fixture
def layout():
    return make_layout()


def _write_problem(tmp_path, layout, episode):
    path = tmp_path / "problem.pddl"
    path.write_text(build_problem(layout, episode).text)
    return str(path)


def test_domain_parses_with_pddlpy(tmp_path, layout):
    episode = make_episode("set_table", ["drawer_0_inside", "fridge_shelf_0"], ["table_0"] * 2)
    dp = DomainProblem(domain_file(), _write_problem(tmp_path, layout, episode))
    assert set(dp.operators()) == {
        "nav",
        "pick",
        "pick-at-container",
        "place",
        "open-fridge",
        "close-fridge",
        "open-cab",
        "close-cab",
    }
    assert dp.requirements() == {":strips", ":typing", ":negative-preconditions"}
    assert dp.types()["fridge"] == "container" and dp.types()["movable"] == "location"
    assert dp.static_predicates() == {"nav-target", "in", "goal-rec"}
    assert {a.ground({}) for a in dp.goals()} == {("placed", "obj_0"), ("placed", "obj_1")}
    init = {a.ground({}) for a in dp.initialstate()}
    assert ("at", "obj_0", "drawer_0_inside") in init
    assert ("in", "fridge_shelf_0", "fridge") in init
    assert ("opened", "fridge") not in init
    (open_cab,) = list(dp.ground_operator("open-cab"))
    assert open_cab.precondition_neg == {("opened", "drawer_0")}
    assert open_cab.effect_pos == {("opened", "drawer_0"), ("just-opened", "drawer_0")}


def test_problem_keeps_only_what_targets_need(layout):
    episode = make_episode("tidy_house", ["sofa_0", "shelf_0"], ["table_0", None])
    text = build_problem(layout, episode).text
    assert "obj_0 - movable" in text and "obj_1" not in text  # clutter left out
    assert "shelf_0" not in text and "fridge" not in text and "drawer" not in text
    assert "(at obj_0 sofa_0)" in text and "(goal-rec obj_0 table_0)" in text


def test_open_state_from_articulation_values(layout):
    starts = ["fridge_shelf_0", "drawer_0_inside", "drawer_1_inside"]
    goals = ["table_0"] * 3
    episode = make_episode("tidy_house", starts, goals, {"fridge": 1.57, "drawer_0": 0.42})
    text = build_problem(layout, episode).text
    assert "(opened fridge)" in text  # swung past its open value
    assert "(opened drawer_0)" in text  # within the 0.05 skill tolerance of 0.45
    assert "(opened drawer_1)" not in text  # missing from the episode means closed


def test_is_opened_thresholds():
    drawer = Articulation("drawer_0", "slide", "cabinet_0", 0.0, 0.45, (0, 0, 0))
    fridge = Articulation("fridge", "hinge", "fridge", 0.0, 1.2208, (0, 0, 0))
    assert is_opened(drawer, 0.41) and not is_opened(drawer, 0.39)
    assert is_opened(fridge, 1.2208) and is_opened(fridge, 1.57)
    assert not is_opened(fridge, 1.0) and not is_opened(fridge, 0.0)
    reversed_door = Articulation("door", "hinge", "x", 0.0, -1.0, (0, 0, 0))
    assert is_opened(reversed_door, -0.97) and not is_opened(reversed_door, 0.5)


def test_object_names_round_trip():
    assert object_index(object_name(12)) == 12
    with pytest.raises(PlanningError, match="obj_<index>"):
        object_index("table_0")


def test_missing_goal_receptacle_is_a_clear_error(layout):
    episode = make_episode("tidy_house", ["sofa_0"], ["attic_0"])
    with pytest.raises(PlanningError, match="goal receptacle 'attic_0' is not in layout"):
        make_plan(layout, episode)


def test_object_that_is_nowhere_is_a_clear_error(layout):
    episode = make_episode("tidy_house", ["nowhere_0"], ["table_0"])
    with pytest.raises(PlanningError, match="object 0 rests on 'nowhere_0', which is not a"):
        make_plan(layout, episode)


def test_object_in_unopenable_container_names_the_goal_and_reason(layout):
    layout.receptacles.append(
        Receptacle("safe_inside", "safe", layout.receptacles[0].surface, container="safe")
    )
    episode = make_episode("tidy_house", ["safe_inside", "sofa_0"], ["table_0", "table_0"])
    with pytest.raises(PlanningError) as err:
        make_plan(layout, episode)
    message = str(err.value)
    assert "\n" not in message
    assert "goal atoms (placed obj_0) can never be reached" in message
    assert "container 'safe' has no openable articulation" in message


def test_bad_target_index_and_duplicate_targets(layout):
    episode = make_episode("tidy_house", ["sofa_0"], ["table_0"])
    episode.targets[0].obj_index = 3
    with pytest.raises(PlanningError, match="target 0 names object 3, but the episode has 1"):
        make_plan(layout, episode)
    episode = make_episode("tidy_house", ["sofa_0"], ["table_0"])
    episode.targets.append(episode.targets[0])
    with pytest.raises(PlanningError, match="object 0 is the target of two targets"):
        make_plan(layout, episode)


def test_receptacle_name_that_is_not_a_pddl_name(layout):
    layout.receptacles.append(Receptacle("big table", "t", layout.receptacles[0].surface))
    episode = make_episode("tidy_house", ["sofa_0"], ["big table"])
    with pytest.raises(PlanningError, match="cannot be a PDDL name"):
        make_plan(layout, episode)


def test_holding_a_non_target_is_a_clear_error(layout):
    episode = make_episode("tidy_house", ["sofa_0", "shelf_0"], ["table_0", None])
    episode.extras["holding"] = 1
    with pytest.raises(PlanningError, match="holding object 1, which no target places"):
        make_plan(layout, episode)
