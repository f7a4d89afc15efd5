"""PDDL task planning for TP-SRL: domain, per-episode problems, BFS search, skill plans."""

from rearrange.planner.plan import (
    PlanStep,
    Stage,
    add_nav_after_open,
    format_plan,
    make_plan,
    plan_stages,
    remove_nav,
    stage_names,
)
from rearrange.planner.problem import build_problem, domain_file
from rearrange.planner.search import PlanningError

__all__ = [
    "PlanStep",
    "PlanningError",
    "Stage",
    "add_nav_after_open",
    "build_problem",
    "domain_file",
    "format_plan",
    "make_plan",
    "plan_stages",
    "remove_nav",
    "stage_names",
]
