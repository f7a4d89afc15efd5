"""Learned skills in TP-SRL: a learned checkpoint runs beside scripted skills named with
--oracle, the report says which is which, and missing checkpoints are named together."""

import json
import sys
from pathlib import Path

from rearrange.eval.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "skills"))
from skills_testlib import train_ckpt  # noqa: E402


def test_learned_pick_with_scripted_nav_and_place_runs_end_to_end(tmp_path, capsys):
    ckpts = tmp_path / "ckpts"
    train_ckpt(ckpts / "pick.pt")  # an untrained policy: the run, not the success, is tested
    out = tmp_path / "out"
    rc = main(["tidy_house", "--checkpoints", str(ckpts), "--oracle", "nav,place",
               "--episodes", "1", "--videos", "0", "--out", str(out), "--no-progress"])  # fmt: skip
    assert rc == 0
    text = capsys.readouterr().out
    assert f"skill pick: {ckpts / 'pick.pt'}" in text and "full task" in text
    result = json.loads((out / "results.json").read_text())
    assert result["label"] == "TP-SRL (learned, oracle nav+place)"
    assert result["config"]["oracle"] == ["nav", "place"]
    (episode,) = result["episodes"]
    assert episode["steps"] > 0


def test_missing_learned_skills_are_named_together_with_the_fix(tmp_path, capsys):
    ckpts = tmp_path / "ckpts"
    train_ckpt(ckpts / "pick.pt")
    rc = main(["tidy_house", "--checkpoints", str(ckpts), "--episodes", "1", "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err
    assert "no learned checkpoint for nav, place" in err and "--oracle nav,place" in err


def test_unknown_oracle_skill_is_a_usage_error(capsys):
    assert main(["tidy_house", "--oracle", "fly"]) == 2
    assert "--oracle 'fly'" in capsys.readouterr().err


def test_shipped_learned_pick_and_place_run_a_tidy_house_episode(tmp_path, capsys, monkeypatch):
    # One val episode end to end with the checkpoints shipped in the package (no runs/ here):
    # plan -> oracle nav + learned pick and place -> report.
    from rearrange.skills.pretrained import PRETRAINED_DIR

    monkeypatch.chdir(tmp_path)
    rc = main(["tidy_house", "--oracle", "nav", "--episodes", "1", "--videos", "0",
               "--out", str(tmp_path / "out"), "--no-progress"])  # fmt: skip
    assert rc == 0
    text = capsys.readouterr().out
    assert f"skill pick: {PRETRAINED_DIR / 'pick.pt'} (shipped;" in text
    assert f"skill place: {PRETRAINED_DIR / 'place.pt'} (shipped;" in text
    result = json.loads((tmp_path / "out" / "results.json").read_text())
    assert result["label"] == "TP-SRL (learned, oracle nav)"
    episode = result["episodes"][0]
    assert episode["stages_completed"] >= 1  # the learned pick holds obj at rest
    assert episode["success"] or episode["failed_skill"]  # a failure names its plan step


def test_base_moving_skills_after_nav_use_the_bm_checkpoints(tmp_path, capsys):
    # --base-movement: manipulation skills that move the base, with the nav skill kept.
    ckpts = tmp_path / "ckpts"
    train_ckpt(ckpts / "pick.pt")  # fixed base: must not be picked up
    train_ckpt(ckpts / "pick_bm.pt", base_movement=True)
    out = tmp_path / "out"
    rc = main(["tidy_house", "--base-movement", "--checkpoints", str(ckpts), "--oracle",
               "nav,place", "--episodes", "1", "--videos", "0", "--out", str(out),
               "--no-progress"])  # fmt: skip
    assert rc == 0
    assert f"skill pick: {ckpts / 'pick_bm.pt'}" in capsys.readouterr().out
    result = json.loads((out / "results.json").read_text())
    assert result["label"] == "TP-SRL +base-moving skills (learned, oracle nav+place)"
    assert result["config"]["base_movement"] is True
    assert [r["skill"] for r in result["episodes"][0]["skill_runs"]][:2] == ["nav", "pick"]


def test_base_moving_skills_without_bm_checkpoint_is_a_one_line_error(tmp_path, capsys):
    ckpts = tmp_path / "ckpts"
    train_ckpt(ckpts / "pick.pt")
    rc = main(["tidy_house", "--base-movement", "--checkpoints", str(ckpts), "--oracle",
               "nav,place", "--episodes", "1", "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err
    assert "no learned base-movement checkpoint for pick" in err


def test_all_shipped_learned_skills_run_a_tidy_house_episode(tmp_path, capsys, monkeypatch):
    # The main job's default: every skill learned (the shipped nav too), no flags.
    from rearrange.skills.pretrained import PRETRAINED_DIR

    monkeypatch.chdir(tmp_path)  # no runs/ here: the shipped checkpoints are used
    out = tmp_path / "out"
    rc = main(["tidy_house", "--episodes", "1", "--videos", "0", "--out", str(out),
               "--no-progress"])  # fmt: skip
    assert rc == 0
    text = capsys.readouterr().out
    for skill in ("nav", "pick", "place"):
        assert f"skill {skill}: {PRETRAINED_DIR / (skill + '.pt')} (shipped;" in text
    result = json.loads((out / "results.json").read_text())
    assert result["label"] == "TP-SRL (learned)"
    runs = result["episodes"][0]["skill_runs"]
    assert runs[0]["skill"] == "nav" and "end_dist_m" in runs[0]
    assert runs[0]["ended_by"] in ("stop", "step_limit", "episode_limit")
    episode = result["episodes"][0]
    assert episode["success"] or episode["failed_skill"]


def test_a_depth_pick_in_a_chain_observes_depth_at_its_own_size(tmp_path, capsys, monkeypatch):
    # A depth student (issue 29) in a chain: the HAB env renders the depth skill's image size
    # and hands each learned skill the preset its checkpoint was trained on (scripted skills
    # get the env's default, None here).
    from rearrange.tasks import HabEnv

    ckpts = tmp_path / "ckpts"
    train_ckpt(ckpts / "pick.pt", obs_preset="depth", depth_size=32)
    seen = []
    observe = HabEnv.observe

    def spy(self, skill_task, target, obs_preset=None):
        obs = observe(self, skill_task, target, obs_preset)
        seen.append((skill_task, obs_preset, obs["depth"].shape if "depth" in obs else None))
        return obs

    monkeypatch.setattr(HabEnv, "observe", spy)
    out = tmp_path / "out"
    rc = main(["tidy_house", "--checkpoints", str(ckpts), "--oracle", "nav,place",
               "--episodes", "1", "--videos", "0", "--out", str(out), "--no-progress",
               "--step-limit", "pick=20"])  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    assert ("pick", "depth", (32, 32, 1)) in seen
    assert {skill for skill, _, _ in seen} <= {"nav", "pick", "place"}
    assert all(preset == "depth" for skill, preset, _ in seen if skill == "pick")
    assert all(preset is None for skill, preset, _ in seen if skill != "pick")
    result = json.loads((out / "results.json").read_text())
    assert [r["skill"] for r in result["episodes"][0]["skill_runs"][:2]] == ["nav", "pick"]


def test_each_learned_skill_reads_its_checkpoints_preset(tmp_path):
    from rearrange.eval.executor import skill_preset
    from rearrange.skills import make_skill
    from rearrange.skills.learned import LearnedSkill

    train_ckpt(tmp_path / "pick.pt", obs_preset="depth", depth_size=32)
    train_ckpt(tmp_path / "place.pt", task="place")
    assert skill_preset(LearnedSkill(tmp_path / "pick.pt")) == "depth"
    assert skill_preset(LearnedSkill(tmp_path / "place.pt")) == "state"
    assert skill_preset(make_skill("pick", "oracle")) is None
    from rearrange.runtime.checkpoint import SkillCheckpoint

    # ship_skill export names the package file after it: pick_depth.pt, never pick.pt
    assert SkillCheckpoint.load(tmp_path / "pick.pt").file_stem == "pick_depth"
    assert SkillCheckpoint.load(tmp_path / "place.pt").file_stem == "place"


def test_policy_depth_chains_depth_checkpoints_and_names_the_missing_ones(
    tmp_path, capsys, monkeypatch
):
    ckpts = tmp_path / "ckpts"
    train_ckpt(ckpts / "pick.pt")  # the state pick: not taken under --policy depth
    train_ckpt(ckpts / "pick_depth.pt", obs_preset="depth", depth_size=32)
    out = tmp_path / "out"
    rc = main(["tidy_house", "--policy", "depth", "--checkpoints", str(ckpts), "--oracle",
               "nav,place", "--episodes", "1", "--videos", "0", "--out", str(out),
               "--no-progress", "--step-limit", "pick=20"])  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    assert f"skill pick: {ckpts / 'pick_depth.pt'}" in capsys.readouterr().out
    result = json.loads((out / "results.json").read_text())
    assert result["label"] == "TP-SRL (learned depth, oracle nav+place)"
    assert result["config"]["policy"] == "depth"
    # Without --checkpoints: the shipped ones (a package without depth policies here).
    monkeypatch.setattr("rearrange.skills.pretrained.PRETRAINED_DIR", tmp_path / "empty")
    rc = main(["tidy_house", "--policy", "depth", "--oracle", "nav", "--episodes", "1"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err
    assert "no learned depth checkpoint for pick, place (none shipped)" in err
    assert "--profile paper --algo distill" in err


def test_policy_depth_refuses_a_state_policy_in_one_line(tmp_path, capsys):
    ckpts = tmp_path / "ckpts"
    train_ckpt(ckpts / "pick_depth.pt")  # misnamed: a state policy
    rc = main(["tidy_house", "--policy", "depth", "--checkpoints", str(ckpts), "--oracle",
               "nav,place", "--episodes", "1", "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err
    assert "is a state policy, not one on head depth" in err
    assert main(["tidy_house", "--policy", "rgb"]) == 2
    assert "--policy 'rgb': use one of state, depth" in capsys.readouterr().err
