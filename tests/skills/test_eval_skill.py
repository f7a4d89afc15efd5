"""`python -m rearrange.eval_skill`: the table, failure causes, videos and one-line errors."""

import json

import pytest

from rearrange.eval_skill import main
from rearrange.skills.rollout import failure_cause


def test_failure_cause_names_the_rule_that_ended_the_episode():
    assert failure_cause("success", {}) == ""
    assert failure_cause("terminated", {"reward_terms": {"drop": -0.5, "slack": -0.005}}) == "drop"
    assert failure_cause("terminated", {"reward_terms": {"wrong_pick": -0.5}}) == "wrong_pick"
    assert failure_cause("truncated", {"reward_terms": {"drop": 0.0}}) == "timeout"
    assert failure_cause("terminated", {"reward_terms": {}}) == "stop"


def test_oracle_pick_table_json_and_video(tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = main(["pick", "--skills", "oracle", "--episodes", "2", "--videos", "1",
               "--video-dir", str(tmp_path), "--json", str(out)])  # fmt: skip
    assert rc == 0
    text = capsys.readouterr().out
    assert "| skill | checkpoint | episodes | success [95% CI] |" in text
    assert "| pick | oracle | 2 |" in text
    data = json.loads(out.read_text())
    assert data["episodes"] == 2 and len(data["results"]) == 2
    assert data["success_rate"] == sum(r["success"] for r in data["results"]) / 2
    videos = list(tmp_path.glob("pick_oracle_0.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["fly"], "unknown skill 'fly'"),
        (["pick", "--episodes", "0"], "--episodes must be >= 1"),
        (["nav", "--base-movement"], "drop --base-movement"),
        (["pick", "--checkpoints", "/nonexistent/dir"], "--checkpoints /nonexistent/dir does not"),
        (["nav", "--set", "warp=1"], "--set warp: not a settable TaskConfig field"),
        (["nav", "--set", "thresholds.warp=1"], "--set thresholds.warp: not a settable"),
        (["nav", "--set", "nav_hold_prob"], "write FIELD=VALUE"),
        (["pick", "--set", "hand_off_to=shipped"], "--set hand_off_to: a training-only option"),
        (["nav", "--set", "oracle_start_prob=0.5"], "--set oracle_start_prob: a training-only"),
    ],
)
def test_bad_input_is_one_line(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err


def test_set_overrides_task_fields_and_nested_thresholds():
    from rearrange.eval_skill import parse_args
    from rearrange.tasks import default_task_config

    args = parse_args(["nav", "--set", "nav_hold_prob=1.0", "--set", "thresholds.nav_dist=0.5",
                       "--set", "episodes.nav_near_start_prob=0.5"])  # fmt: skip
    assert len(args) == 1
    over = args[0].task_overrides
    # an episode generation option with or without its `episodes.`; the others stay default
    assert over["episodes"].nav_hold_prob == 1.0 and over["episodes"].nav_near_start_prob == 0.5
    assert over["episodes"].nav_fridge_prob == default_task_config("nav").episodes.nav_fridge_prob
    th = over["thresholds"]
    assert th.nav_dist == 0.5
    # every other threshold stays the skill's default
    default = default_task_config("nav").thresholds
    assert th.nav_angle == default.nav_angle and th.place == default.place
    cfg = default_task_config("nav", **over)
    assert cfg.episodes.nav_hold_prob == 1.0


def test_checkpoint_trained_without_base_movement_is_refused(tmp_path, capsys):
    from skills_testlib import train_ckpt

    train_ckpt(tmp_path / "pick.pt")
    assert main(["pick", "--base-movement", "--checkpoints", str(tmp_path / "pick.pt")]) == 2
    assert "trained without base movement" in capsys.readouterr().err


def test_table_row_means_collision_steps_and_overlap_depth():
    from rearrange.eval.one_skill import SkillEvalResult, table_row
    from rearrange.skills.rollout import EpisodeResult

    r = SkillEvalResult("nav", "learned", False, "nav.pt", "val", 0)
    r.results = [
        EpisodeResult("a", True, 100, "success", "", 9.0, collisions=3, max_depth=0.004),
        EpisodeResult("b", True, 200, "success", "", 7.0, collisions=0, max_depth=0.0213),
        EpisodeResult("c", False, 400, "truncated", "timeout", -1.0, collisions=9),
    ]
    # success 2/3 with its Wilson 95 % interval [20.8, 93.9] %; one episode over 2 cm
    row = "| nav | nav.pt | 3 | 67% [21, 94] | 150 | 5.00 | 4.0 | 1/3 | 2.1 | timeout 1 |"
    assert table_row(r) == row
    assert r.to_dict()["success_ci"] == pytest.approx([0.207660, 0.938508], abs=1e-6)


def test_typed_args_validate_and_give_their_command():
    import pytest

    from rearrange.eval.one_skill import SkillEvalArgs, UsageError
    from rearrange.eval_skill import parse_args

    run = SkillEvalArgs("place", base_movement=True, checkpoints="runs/place/a", episodes=7)
    assert run.command() == (
        "python -m rearrange.eval_skill place --base-movement --checkpoints runs/place/a "
        "--episodes 7 --seed 0"
    )
    assert parse_args(run.command().split()[3:]) == [run]  # the command parses back to it
    with pytest.raises(UsageError, match="unknown skill 'grasp'"):
        SkillEvalArgs("grasp")
    with pytest.raises(UsageError, match="nav always moves the base"):
        SkillEvalArgs("nav", base_movement=True)
    with pytest.raises(UsageError, match="exclude each other"):
        SkillEvalArgs("pick", checkpoints="x", newest_run=True)


def test_policy_depth_finds_the_depth_file_and_evaluates_at_its_size(tmp_path, capsys):
    # A folder holding both kinds: --policy depth takes pick_depth.pt and renders the depth
    # image at the size that policy was trained at (32 here; the env's default is 128).
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from skills_testlib import train_ckpt

    train_ckpt(tmp_path / "pick.pt")
    train_ckpt(tmp_path / "pick_depth.pt", obs_preset="depth", depth_size=32)
    out = tmp_path / "r.json"
    rc = main(["pick", "--policy", "depth", "--checkpoints", str(tmp_path), "--episodes", "1",
               "--json", str(out)])  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    assert json.loads(out.read_text())["checkpoint"] == str(tmp_path / "pick_depth.pt")
    assert main(["pick", "--policy", "depth", "--checkpoints", str(tmp_path / "pick.pt")]) == 2
    assert "is a state policy, not one on head depth" in capsys.readouterr().err


def test_several_checkpoints_give_a_row_each_on_the_same_episodes(tmp_path, capsys):
    from skills_testlib import train_ckpt

    a, b = tmp_path / "a.pt", tmp_path / "b.pt"
    train_ckpt(a), train_ckpt(b)
    out = tmp_path / "r.json"
    argv = ["pick", "--checkpoints", str(a), str(b), "--episodes", "2", "--json", str(out)]
    assert main(argv) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| pick |")]
    assert [row.split(" | ")[1] for row in rows] == [str(a), str(b)]
    data = json.loads(out.read_text())
    assert [d["checkpoint"] for d in data] == [str(a), str(b)]
    # the same episodes for each checkpoint
    assert [r["episode_id"] for r in data[0]["results"]] == [
        r["episode_id"] for r in data[1]["results"]
    ]


def test_videos_with_several_checkpoints_are_refused(capsys):
    assert main(["pick", "--checkpoints", "a.pt", "b.pt", "--videos", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--videos records one checkpoint's episodes" in err and "\n" not in err


def test_a_missing_later_checkpoint_fails_before_the_first_is_evaluated(
    tmp_path, capsys, monkeypatch
):
    # Several --checkpoints: every path is resolved up front, so a mistyped last one costs
    # nothing (it used to fail after the first checkpoint's episodes had run).
    from skills_testlib import train_ckpt

    import rearrange.eval_skill as cli

    a = tmp_path / "a.pt"
    train_ckpt(a)
    evaluated = []
    monkeypatch.setattr(cli, "evaluate_skill", lambda run: evaluated.append(run))
    missing = tmp_path / "nope.pt"
    assert main(["pick", "--checkpoints", str(a), str(missing), "--episodes", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert str(missing) in err and "\n" not in err
    assert evaluated == []


def test_end_pose_line_gives_where_nav_episodes_ended():
    from rearrange.eval.one_skill import SkillEvalResult, end_pose_line
    from rearrange.skills.rollout import EpisodeResult

    r = SkillEvalResult("nav", "learned", False, "nav.pt", "val", 0)
    r.results = [
        EpisodeResult("a", True, 90, "success", "", goal_dist=0.1, goal_yaw_deg=4.0),
        EpisodeResult("b", True, 80, "success", "", goal_dist=0.3, goal_yaw_deg=8.0),
        EpisodeResult("c", False, 400, "truncated", "timeout", goal_dist=2.0, goal_yaw_deg=30.0),
    ]
    # medians: 0.30 m and 8 degrees over all three, 0.20 m over the two successes
    assert end_pose_line(r) == (
        "nav nav.pt: ended a median 0.30 m and 8 deg from the goal pose "
        "(successes 0.20 m; 1/3 within 0.25 m)"
    )
    r.results = [EpisodeResult("p", True, 50, "success", "")]  # pick: no nav goal
    assert end_pose_line(r) is None


def test_nav_eval_records_the_end_pose(tmp_path, capsys):
    out = tmp_path / "n.json"
    assert main(["nav", "--skills", "oracle", "--episodes", "1", "--json", str(out)]) == 0
    (episode,) = json.loads(out.read_text())["results"]
    assert episode["success"] and episode["goal_dist"] < 0.05  # the follower's 3 cm
    assert episode["goal_yaw_deg"] < 3.0  # ... and 2 degrees
    assert "nav oracle: ended a median 0.0" in capsys.readouterr().out


def test_source_line_counts_a_picks_successes_by_where_the_target_lay():
    from rearrange.eval.one_skill import SkillEvalResult, source_line
    from rearrange.skills.rollout import EpisodeResult

    r = SkillEvalResult("pick", "learned", True, "p.pt", "val", 0)
    ok = EpisodeResult("a", True, 50, "success", "", source="open")
    r.results = [ok, ok, ok, EpisodeResult("b", False, 300, "truncated", "timeout", source="open")]
    r.results += [EpisodeResult("c", True, 90, "success", "", source="fridge")]
    r.results += [EpisodeResult("d", False, 300, "truncated", "timeout", source="fridge")] * 2
    # open 3 of 4, fridge 1 of 3 (33 %), no drawer pick: no drawer entry
    assert source_line(r) == "pick p.pt by source: open 3/4 (75 %), fridge 1/3 (33 %)"
    r.results = [ok, ok]  # one source: nothing to split
    assert source_line(r) is None
    r.results = [EpisodeResult("n", True, 80, "success", "")] * 2  # not a pick
    assert source_line(r) is None


@pytest.mark.parametrize(
    "settings,source",
    [
        (["fridge_pick_prob=1.0"], "fridge"),
        (["fridge_pick_prob=0.0", "drawer_pick_prob=1.0"], "drawer"),
        (["fridge_pick_prob=0.0"], "open"),
    ],
)
def test_pick_eval_records_each_episodes_source(tmp_path, capsys, settings, source):
    out = tmp_path / "p.json"
    argv = ["pick", "--skills", "oracle", "--episodes", "2", "--json", str(out)]
    for setting in settings:
        argv += ["--set", setting]
    assert main(argv) == 0
    episodes = json.loads(out.read_text())["results"]
    assert [e["source"] for e in episodes] == [source, source]
    assert "by source" not in capsys.readouterr().out  # one source only
