"""benchmarks.held_pose_starts: the place task's own starts hold their object as the task
samples it (close to the end effector, near upright), and a HAB results file's place legs
are split by outcome."""

import json

import numpy as np
import pytest

from benchmarks.held_pose_starts import chain_place_legs, main, quantile_row, task_starts


def test_place_task_starts_hold_the_object_near_the_gripper_and_near_upright():
    starts = task_starts(6, base_movement=True, split="train", seed=0)
    assert len(starts) == 6 and all(set(s) == {"held_dist_m", "held_tilt_deg"} for s in starts)
    dist = np.array([s["held_dist_m"] for s in starts])
    tilt = np.array([s["held_tilt_deg"] for s in starts])
    assert np.all((dist > 0.0) & (dist < 0.3)) and np.all((tilt >= 0.0) & (tilt < 45.0))


def test_chain_legs_are_read_from_results_and_split_by_outcome(tmp_path, capsys):
    runs = [
        {"skill": "pick", "ok": True},
        {"skill": "place", "ok": True, "held_dist_m": 0.1, "held_tilt_deg": 10.0},
        {"skill": "place", "ok": False, "held_dist_m": 0.3, "held_tilt_deg": 50.0},
        {"skill": "place", "ok": True},  # recorded before the executor measured it
    ]
    path = tmp_path / "run" / "results_tidy_house_x.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"episodes": [{"skill_runs": runs}]}))
    legs = chain_place_legs(path)
    assert [r["held_dist_m"] for r in legs] == [0.1, 0.3]
    row = quantile_row("x", legs)  # linear: 0.1 + q * 0.2 and 10 + q * 40 at q = .05, .5, .95
    assert row == "| x | 2 | 0.11 / 0.2 / 0.29 | 12 / 30 / 48 |"
    assert main(["--episodes", "2", "--results", str(path)]) == 0
    out = capsys.readouterr().out
    assert "| run, placed | 1 | 0.1 / 0.1 / 0.1 | 10 / 10 / 10 |" in out
    assert "| run, failed | 1 | 0.3 / 0.3 / 0.3 | 50 / 50 / 50 |" in out


def test_a_missing_results_file_is_one_line(tmp_path, capsys):
    assert main(["--results", str(tmp_path / "none.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("held_pose_starts: no results file") and "\n" not in err


@pytest.mark.parametrize("bad", [[], [{"skill": "place", "ok": True}]])
def test_rows_without_measurements_say_so(bad):
    assert quantile_row("y", bad).endswith("| – | – |")
