"""A PQL checkpoint of pick (trained for a few steps by the real CLI on the real task env)
loads as a learned skill: deterministic actions, `eval_skill` runs it, and the shipped-
checkpoint export (fp16, compact config) still loads. The grip and stop masks are not the
skill's: the skill env (training, eval_skill) and the HRL executor apply them to whatever
policy acts, so a PQL policy trains and runs under the same rules as a VER one."""

from __future__ import annotations

import numpy as np
import pytest

from rearrange.skills import SkillTarget, make_skill
from rearrange.skills.learned import LearnedSkill
from rearrange.train_skill import main


@pytest.fixture(scope="module")
def pick_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    argv = ["pick", "--algo", "pql", "--serial", "--run-name", "p", f"runs_root={root}"]
    tiny = ["task.num_episodes=4", "pql.num_envs=2", "pql.warmup_steps=4", "pql.batch_size=32",
            "model.state_mlp_hidden=[32]", "pql.critic_hidden=[32]", "total_steps=24"]  # fmt: skip
    assert main([*argv, *tiny]) == 0
    return root


def _obs(skill: LearnedSkill, value: float = 0.3) -> dict:
    spaces = skill.observation_space.spaces
    return {k: np.full(s.shape, value, np.float32) for k, s in spaces.items()}


def test_pql_checkpoint_is_a_deterministic_learned_skill(pick_run):
    skill = make_skill("pick", kind="learned", checkpoint_dir=pick_run)
    assert skill.trained_config["algo"] == "pql"
    assert skill.observation_preset == "state" and skill.layout.size == 8
    assert skill.step_limit == 300 and not skill.base_movement
    skill.reset(SkillTarget(obj_index=0))
    a1, a2 = skill.act(_obs(skill), None), skill.act(_obs(skill), None)
    assert a1.shape == (8,) and np.all(np.abs(a1) <= 1.0)
    assert np.array_equal(a1, a2)  # not recurrent, no noise
    assert skill.steps == 2 and not skill.is_done(_obs(skill), None)


def test_eval_skill_runs_the_pql_checkpoint(pick_run, capsys):
    from rearrange.eval_skill import main as eval_main

    ckpt = pick_run / "pick" / "p" / "checkpoints" / "latest.pt"
    assert eval_main(["pick", "--checkpoints", str(ckpt), "--episodes", "1"]) == 0
    assert f"| pick | {ckpt} | 1 |" in capsys.readouterr().out


def test_shipped_export_of_a_pql_checkpoint_loads(pick_run, tmp_path):
    from rearrange.runtime.checkpoint import SkillCheckpoint

    ckpt = SkillCheckpoint.load(pick_run / "pick" / "p" / "checkpoints" / "latest.pt")
    ckpt.for_shipping({"skill": "pick"}).save(tmp_path / "pick.pt")
    shipped = LearnedSkill(tmp_path / "pick.pt")
    trained = LearnedSkill(pick_run / "pick" / "p" / "checkpoints" / "latest.pt", skill_name="pick")
    for skill in (shipped, trained):
        skill.reset(SkillTarget(obj_index=0))
    np.testing.assert_allclose(
        shipped.act(_obs(shipped), None), trained.act(_obs(trained), None), atol=2e-2
    )
