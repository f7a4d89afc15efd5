"""Every layer's registry covers every skill definition (skill_spec.SKILLS), and nothing
else: the env classes, sensors, grip rules, episode builders, oracles, post-conditions, PDDL
actions, training configs and gymnasium ids (docs/ADDING_A_SKILL.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rearrange.config import CONFIG_DIR, config_name
from rearrange.gym_envs import GYM_IDS
from rearrange.planner.plan import action_skills
from rearrange.planner.problem import domain_file
from rearrange.sim.episode_types import HAB_SCENARIOS
from rearrange.sim.episodes import TASKS
from rearrange.sim.episodes.builders import BUILDERS, EPISODE_BUILDERS
from rearrange.skill_spec import SKILL_NAMES, SKILLS, skill_names
from rearrange.skills.registry import ORACLES
from rearrange.skills.termination import POSTCONDITIONS
from rearrange.tasks import TASK_REGISTRY
from rearrange.tasks.grip_rules import GRIP_RULES
from rearrange.tasks.sensors import SENSOR_DIMS

DEFS = [SKILLS[n] for n in skill_names()]


def test_the_package_defines_its_seven_skills_first():
    assert SKILL_NAMES == ("nav", "pick", "place", "open_fridge", "close_fridge", "open_cab",
                           "close_cab")  # fmt: skip
    assert skill_names()[: len(SKILL_NAMES)] == SKILL_NAMES
    assert all(SKILLS[n].name == n for n in SKILLS)


def test_every_defined_skill_has_exactly_one_env_class():
    assert set(TASK_REGISTRY) == set(skill_names())


@pytest.mark.parametrize("spec", DEFS, ids=lambda d: d.name)
def test_the_names_a_definition_gives_are_implemented(spec):
    assert set(spec.sensors) <= set(SENSOR_DIMS)
    assert set(spec.base_movement_sensors) <= set(spec.sensors)
    assert spec.grip_rule is None or spec.grip_rule in GRIP_RULES
    assert spec.episode_builder in EPISODE_BUILDERS


def test_episode_builders_cover_every_task():
    assert set(BUILDERS) == set(skill_names()) | set(HAB_SCENARIOS) == set(TASKS)
    assert all(BUILDERS[t] is EPISODE_BUILDERS[SKILLS[t].episode_builder] for t in SKILLS)
    assert tuple(TASKS)[: len(SKILL_NAMES) + len(HAB_SCENARIOS)] == SKILL_NAMES + HAB_SCENARIOS


@pytest.mark.parametrize("registry", [ORACLES, POSTCONDITIONS], ids=["oracles", "postconditions"])
def test_runtime_skill_registries_cover_the_packages_skills(registry):
    # a skill from outside may run without them (it is not planned in HAB), the seven may not
    assert set(SKILL_NAMES) <= set(registry) <= set(skill_names())


def test_the_pddl_domain_runs_exactly_the_defined_actions():
    domain = Path(domain_file()).read_text()
    assert set(re.findall(r"\(:action\s+([\w-]+)", domain)) == set(action_skills())
    assert set(action_skills().values()) == set(SKILL_NAMES)  # every skill of ours is planned


def test_every_skill_has_a_training_config_and_a_gym_id():
    assert set(GYM_IDS.values()) == set(SKILL_NAMES)
    for name in skill_names():
        assert (CONFIG_DIR / f"{config_name(name)}.yaml").is_file(), name
