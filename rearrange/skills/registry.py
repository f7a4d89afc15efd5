"""`make_skill(name, kind)`: the one place the executor gets its skills from."""

from __future__ import annotations

from pathlib import Path

from rearrange.skills.base import Skill, SkillError, check_skill_name

SKILL_KINDS = ("oracle", "learned")


def make_oracle(skill_name: str, base_movement: bool = False) -> Skill:
    from rearrange.skills.oracle_articulated import OracleArticulation
    from rearrange.skills.oracle_manip import OraclePick, OraclePlace
    from rearrange.skills.oracle_nav import OracleNav

    if skill_name == "nav":
        return OracleNav()
    if skill_name == "pick":
        return OraclePick(base_movement=base_movement)
    if skill_name == "place":
        return OraclePlace(base_movement=base_movement)
    return OracleArticulation(skill_name, base_movement=base_movement)


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
