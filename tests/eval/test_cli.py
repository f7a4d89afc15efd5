"""`python -m rearrange.eval`: output files, videos, one-line usage errors."""

import csv
import json
import os
import subprocess
import sys

import imageio.v2 as imageio
import pytest

from rearrange.eval.cli import main, parse_args
from rearrange.eval.report import read_json

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_cli_writes_results_and_a_video_with_one_frame_per_recorded_step(tmp_path, capsys):
    out, videos = tmp_path / "out", tmp_path / "videos"
    code = main(
        [
            "tidy_house",
            "--skills",
            "oracle",
            "--episodes",
            "1",
            "--videos",
            "1",
            "--max-steps",
            "40",
            "--video-every",
            "2",
            "--out",
            str(out),
            "--video-dir",
            str(videos),
            "--no-progress",
        ]
    )
    assert code == 0
    assert "full task" in capsys.readouterr().out
    result = read_json(out / "results.json")
    (record,) = result.episodes
    assert record.steps == 40 and not record.success  # cut by --max-steps
    assert result.stage_names[:2] == ["pick_1", "place_1"] and len(result.stage_names) == 10
    rows = list(csv.reader(open(out / "results.csv")))
    assert rows[0][:3] == ["scenario", "label", "stage"] and rows[-1][2] == "full_task"
    assert (out / "success.png").read_bytes()[:4] == b"\x89PNG"
    video = videos / "tidy_house_tidy_house-val-0000.mp4"
    # every 2nd of 40 steps, then the end card held for 1 s at 30 / 2 frames per second
    assert record.video == str(video) and record.video_frames == 20 + 15
    reader = imageio.get_reader(video)
    frames = [f for f in reader]
    reader.close()
    # 480x360 third-person view + the 360x360 arm-view panel, the same size in every frame
    assert len(frames) == record.video_frames and {f.shape for f in frames} == {(360, 840, 3)}
    assert json.loads((out / "results.json").read_text())["config"]["skills"] == "oracle"


def test_plot_mode_combines_saved_results(tmp_path, capsys):
    out = tmp_path / "out"
    main(
        [
            "tidy_house",
            "--skills",
            "oracle",
            "--episodes",
            "1",
            "--videos",
            "0",
            "--max-steps",
            "5",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    code = main(
        [
            "--plot",
            str(out / "results.json"),
            str(out / "results.json"),
            "--out",
            str(tmp_path / "fig"),
        ]
    )
    assert code == 0 and (tmp_path / "fig" / "comparison.png").is_file()


def _run_cli(*args, cwd):
    env = dict(os.environ, MUJOCO_GL="egl", PYTHONPATH=ROOT)
    return subprocess.run(
        [sys.executable, "-m", "rearrange.eval", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _assert_one_line_error(proc, *needles):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0]


def test_missing_checkpoint_is_a_one_line_error(tmp_path):
    (tmp_path / "ckpt").mkdir()
    proc = _run_cli("tidy_house", "--checkpoints", "ckpt", "--episodes", "1", cwd=tmp_path)
    _assert_one_line_error(
        proc, "no learned checkpoint", "python -m rearrange.train_skill", "--skills oracle"
    )


def test_corrupt_checkpoint_is_a_one_line_error_naming_the_file(tmp_path):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    for skill in ("nav", "pick", "place"):
        (ckpt / f"{skill}.pt").write_bytes(b"not a checkpoint")
    proc = _run_cli("tidy_house", "--checkpoints", "ckpt", "--episodes", "1", cwd=tmp_path)
    _assert_one_line_error(proc, "ckpt/nav.pt")


def test_unknown_scenario_is_a_one_line_error(tmp_path):
    proc = _run_cli("tidy_flat", cwd=tmp_path)
    _assert_one_line_error(proc, "tidy_flat", "tidy_house", "prepare_groceries", "set_table")


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["tidy_house", "--skills", "magic"], "--skills"),
        (["tidy_house", "--episodes", "0"], "--episodes"),
        (["tidy_house", "--step-limit", "nav"], "SKILL=N"),
        (["tidy_house", "--stop-mask-dist", "0"], "--stop-mask-dist must be > 0"),
        (["tidy_house", "--bogus"], "--bogus"),
        ([], "missing scenario"),
    ],
)
def test_bad_arguments_are_usage_errors(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]


def test_defaults():
    args = parse_args(["set_table", "--no-nav", "--step-limit", "nav=600"])
    assert (args.skills, args.split, args.episodes, args.max_steps) == ("learned", "val", 50, 3000)
    assert args.no_nav and args.step_limits == {"nav": 600}
    assert args.reset_arm and not parse_args(["set_table", "--no-reset-arm"]).reset_arm
    assert args.stop_mask_dist is None  # the nav's training radius + 0.5 m
    assert parse_args(["tidy_house", "--stop-mask-dist", "2"]).stop_mask_dist == 2.0


def test_checkpoints_are_found_in_train_skill_run_layout(tmp_path):
    from rearrange.skills.checkpoint_lookup import find_skill_checkpoint

    old = tmp_path / "pick" / "run_a" / "checkpoints" / "latest.pt"
    new = tmp_path / "pick" / "run_b" / "checkpoints" / "latest.pt"
    for i, path in enumerate((old, new)):
        path.parent.mkdir(parents=True)
        path.write_bytes(b"x")
        os.utime(path, (1000 + i, 1000 + i))
    (tmp_path / "nav.pt").write_bytes(b"x")
    args = parse_args(["tidy_house", "--checkpoints", str(tmp_path)])
    for skill, path in (("pick", new), ("nav", tmp_path / "nav.pt")):
        assert find_skill_checkpoint(skill, checkpoints=args.checkpoints) == path
