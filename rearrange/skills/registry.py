"""`make_skill(name, kind)`: the one place the executor gets its skills from.

ORACLES holds the scripted skill of each defined skill (`skill_spec.SKILLS`) that has one; a
skill defined outside the package adds its own with `register_oracle`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rearrange.skill_spec import ARTICULATED_SKILLS, skill_def
from rearrange.skills.base import Skill, SkillError, check_skill_name

SKILL_KINDS = ("oracle", "learned")
OracleFactory = Callable[[str, bool], Skill]
"""(skill name, base movement) -> the scripted skill."""


def _nav(name: str, base_movement: bool) -> Skill:
    from rearrange.skills.oracle_nav import OracleNav

    return OracleNav()


def _pick(name: str, base_movement: bool) -> Skill:
    from rearrange.skills.oracle_manip import OraclePick

    return OraclePick(base_movement=base_movement)


def _place(name: str, base_movement: bool) -> Skill:
    from rearrange.skills.oracle_manip import OraclePlace

    return OraclePlace(base_movement=base_movement)


def _articulated(name: str, base_movement: bool) -> Skill:
    from rearrange.skills.oracle_articulated import OracleArticulation

    return OracleArticulation(name, base_movement=base_movement)


ORACLES: dict[str, OracleFactory] = {
    "nav": _nav,
    "pick": _pick,
    "place": _place,
    **{name: _articulated for name in ARTICULATED_SKILLS},  # open/close fridge and cabinet
}


def register_oracle(skill_name: str, factory: OracleFactory) -> None:
    """The scripted skill of `skill_name`, which must be defined (`skill_spec.register_skill`)."""
    skill_def(skill_name)
    ORACLES[skill_name] = factory


def make_oracle(skill_name: str, base_movement: bool = False) -> Skill:
    check_skill_name(skill_name)
    factory = ORACLES.get(skill_name)
    if factory is None:
        raise SkillError(
            f"skill {skill_name!r} has no scripted oracle; use its learned skill, or add one "
            "with rearrange.skills.registry.register_oracle"
        )
    return factory(skill_name, base_movement)


def make_skill(
    skill_name: str,
    kind: str = "oracle",
    checkpoint_dir: str | Path | None = None,
    device: str = "cpu",
    base_movement: bool = False,
    newest_run: bool = False,
) -> Skill:
    """An oracle (scripted, privileged) or learned (VER-PPO or PQL checkpoint) skill by name.

    Learned skills load the checkpoint shipped with the package unless asked otherwise
    (`checkpoint_lookup.find_skill_checkpoint`): `checkpoint_dir` names a file, a train_skill
    run (runs/SKILL/RUN) or a folder of SKILL.pt files or runs; `newest_run` takes the
    skill's newest run under runs/. Their base movement comes from the checkpoint.
    """
    check_skill_name(skill_name)
    if kind == "oracle":
        return make_oracle(skill_name, base_movement)
    if kind == "learned":
        from rearrange.skills.checkpoint_lookup import find_skill_checkpoint
        from rearrange.skills.learned import LearnedSkill

        path = find_skill_checkpoint(skill_name, base_movement, checkpoint_dir, newest_run)
        return LearnedSkill(path, device=device, skill_name=skill_name)
    raise SkillError(f"unknown skill kind {kind!r}; use one of: {', '.join(SKILL_KINDS)}")
