"""The skill spec: layouts the envs decode, step limits, per-skill rewards (DESIGN §4, §6)."""

import numpy as np
import pytest

from rearrange.skill_spec import (
    ARTICULATED_SKILLS,
    SKILL_NAMES,
    ActionLayout,
    action_layout,
    default_rewards,
    step_limit_for,
    task_step_limit,
)
from rearrange.tasks.actions import action_space, decode_action


def test_action_widths_are_the_habitat_layouts():
    assert action_space("nav", False).shape == (3,)
    assert action_space("pick", False).shape == (8,)
    assert action_space("open_cab", True).shape == (10,)
    nav = action_layout("nav")
    np.testing.assert_allclose(nav.compose(base=np.array([0.5, -2.0]), stop=True), [0.5, -1.0, 1.0])
    pick = ActionLayout.from_parts([("arm", 7), ("grip", 1), ("base", 2)])
    assert pick == action_layout("pick", base_movement=True)
    a = pick.compose(arm=np.full(7, 0.1), grip=1.0, base=np.array([0.2, 0.3]))
    np.testing.assert_allclose(a, [0.1] * 7 + [1.0, 0.2, 0.3], rtol=1e-6)


@pytest.mark.parametrize("skill", SKILL_NAMES)
@pytest.mark.parametrize("base_movement", [False, True])
def test_the_envs_decode_what_the_layout_composes(skill, base_movement):
    layout = action_layout(skill, base_movement)
    action = layout.compose(arm=np.full(7, 0.25), grip=0.5, base=np.array([-0.5, 0.75]), stop=True)
    d = decode_action(skill, base_movement, action)
    assert (d.arm is None) == (skill == "nav") and (d.grip is None) == (skill == "nav")
    if skill == "nav":
        np.testing.assert_allclose(d.base, [-0.5, 0.75])
        assert d.stop
    else:
        np.testing.assert_allclose(d.arm, 0.25)
        assert d.grip == 0.5 and not d.stop
        assert (d.base is None) != base_movement
    with pytest.raises(ValueError, match="expected"):
        decode_action(skill, base_movement, np.zeros(layout.size + 1))


def test_step_limits():
    assert task_step_limit("nav") == 400 and task_step_limit("pick", True) == 300
    assert task_step_limit("open_fridge") == 300 and task_step_limit("open_fridge", True) == 300
    assert task_step_limit("open_cab") == 200 and task_step_limit("open_cab", True) == 300
    assert step_limit_for("nav") == 300 and step_limit_for("place") == 200
    assert step_limit_for("place", base_movement=True) == 700


def test_rewards_per_skill():
    assert default_rewards("nav").dist == 1.0 and default_rewards("pick").dist == 2.0
    closing = [s for s, a in ARTICULATED_SKILLS.items() if not a.opens]
    assert sorted(closing) == ["close_cab", "close_fridge"]
    for s in closing:
        r = default_rewards(s)
        assert (r.art_dist, r.grasp, r.at_state, r.ee_dist) == (0.0, 0.0, 0.0, 1.0)
    assert default_rewards("open_cab").art_dist == 10.0


def test_articulation_shortfall_is_one_sided():
    from rearrange.skill_spec import articulation_shortfall

    assert articulation_shortfall("open_cab", 0.30, 0.45) == pytest.approx(0.15)
    assert articulation_shortfall("open_cab", 0.50, 0.45) == 0.0  # past the target: open
    assert articulation_shortfall("open_fridge", 1.0, 1.2208) == pytest.approx(0.2208)
    assert articulation_shortfall("close_fridge", 0.3, 0.0) == pytest.approx(0.3)
    assert articulation_shortfall("close_cab", 0.0, 0.0) == 0.0


def test_a_definition_is_checked_and_registered_once(monkeypatch):
    import dataclasses

    from rearrange import skill_spec
    from rearrange.skill_spec import SkillDef, skill_def

    for name in ("SKILLS", "ARTICULATED_SKILLS", "HAB_STEP_LIMITS"):  # leave the real ones
        monkeypatch.setattr(skill_spec, name, dict(getattr(skill_spec, name)))
    with pytest.raises(ValueError, match="action parts"):
        SkillDef("x", ("arm", "wing"), 10, "object", (), "object")
    with pytest.raises(ValueError, match="grip rule"):
        SkillDef("x", ("arm", "grip"), 10, "object", (), "object")
    with pytest.raises(ValueError, match="articulation"):
        SkillDef("x", ("arm",), 10, "articulation", (), "articulation")
    reach = SkillDef("reach", ("arm",), 100, "object", ("joint",), "object", hab_step_limit=150)
    assert skill_spec.register_skill(reach) is reach and skill_spec.register_skill(reach) is reach
    assert skill_spec.skill_names()[-1] == "reach" and skill_spec.HAB_STEP_LIMITS["reach"] == 150
    assert action_layout("reach").size == 7 and task_step_limit("reach") == 100
    assert action_layout("reach", True).base == slice(7, 9)  # it has a base-movement variant
    assert step_limit_for("reach", base_movement=True) == 700
    with pytest.raises(ValueError, match="already defined differently"):
        skill_spec.register_skill(dataclasses.replace(reach, step_limit=50))
    with pytest.raises(ValueError, match="unknown skill 'jump'"):
        skill_def("jump")
    assert "reach" not in SKILL_NAMES  # the package's own seven stay seven


def test_nav_always_drives_and_the_rest_have_a_base_movement_variant():
    from rearrange.skill_spec import MANIPULATION_SKILLS, skill_def

    assert action_layout("nav", True) == action_layout("nav")
    assert [s for s in SKILL_NAMES if not skill_def(s).has_base_movement_variant] == ["nav"]
    assert MANIPULATION_SKILLS == SKILL_NAMES[1:]
    assert [s for s in SKILL_NAMES if skill_def(s).starts_holding] == ["place"]
