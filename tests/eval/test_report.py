import csv
import json

import numpy as np
import pytest

from rearrange.eval.report import (
    EpisodeRecord,
    EvalResult,
    ReportError,
    format_table,
    plot_results,
    read_json,
    write_csv,
    write_json,
)
from rearrange.eval.stats import bootstrap_ci, stage_success


def test_stage_success_counts_episodes_reaching_each_stage():
    # 4 episodes reached 0, 1, 3, 4 of 4 stages.
    np.testing.assert_allclose(stage_success([0, 1, 3, 4], 4), [0.75, 0.5, 0.5, 0.25])


def test_bootstrap_ci_brackets_mean_and_degenerates_on_constant():
    assert bootstrap_ci(np.ones(20)) == (1.0, 1.0)
    low, high = bootstrap_ci(np.array([0, 1] * 50))
    assert low < 0.5 < high
    assert 0.35 < low and high < 0.65


def test_report_intervals_are_binomial_not_degenerate():
    # 3 of 3 episodes: a bootstrap gives [100.0%, 100.0%]; Wilson 95 % is [43.9, 100] %
    eps = [EpisodeRecord(str(k), 1, True, 100) for k in range(3)]
    text = format_table(EvalResult("tidy_house", "TP-SRL", ["pick_1"], eps))
    assert "pick_1         100.0%   [43.9%, 100.0%]" in text
    assert "full task      100.0%   [43.9%, 100.0%]" in text


def _result():
    eps = [
        EpisodeRecord("a", 2, True, 100),
        EpisodeRecord("b", 1, False, 3000, "place", "step limit"),
    ]
    return EvalResult("tidy_house", "TP-SRL (oracle)", ["pick 1", "place 1"], eps)


def test_json_round_trip_and_csv(tmp_path):
    result = _result()
    write_json(result, tmp_path / "r.json")
    back = read_json(tmp_path / "r.json")
    assert back.episodes == result.episodes and back.stage_names == result.stage_names
    write_csv(result, tmp_path / "r.csv")
    rows = list(csv.reader(open(tmp_path / "r.csv")))
    assert rows[1][2:4] == ["pick 1", "1.0"]
    assert rows[2][2:4] == ["place 1", "0.5"]
    assert rows[3][2:4] == ["full_task", "0.5"]
    # Wilson 95 % of 1/2: [0.0945, 0.9055]
    assert [round(float(x), 4) for x in rows[3][4:6]] == [0.0945, 0.9055]
    payload = json.loads((tmp_path / "r.json").read_text())
    assert payload["full_success_ci"] == pytest.approx([0.094531, 0.905469], abs=1e-6)
    # stage 1, 2 of 2: low = n / (n + z²) = 2 / 5.841459
    assert payload["stage_success"][0]["ci_low"] == pytest.approx(0.342380, abs=1e-6)
    assert "full task" in format_table(result)


def test_corrupt_results_file_is_one_line_error(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ReportError, match="bad.json"):
        read_json(tmp_path / "bad.json")
    with pytest.raises(ReportError, match="does not exist"):
        read_json(tmp_path / "missing.json")


def test_plot_writes_png(tmp_path):
    plot_results([_result(), _result()], tmp_path / "fig.png")
    assert (tmp_path / "fig.png").read_bytes()[:4] == b"\x89PNG"


def test_skill_legs_count_each_plan_step_run():
    def run(skill, ok):
        return {"skill": skill, "ok": ok, "steps": 10, "ended_by": "skill_done"}

    eps = [
        EpisodeRecord("a", 2, True, 300, skill_runs=[run("nav", True), run("pick", True),
                                                     run("nav", True), run("place", True)]),
        EpisodeRecord("b", 0, False, 500, "nav", "timeout", skill_runs=[run("nav", False)]),
        EpisodeRecord("c", 0, False, 600, "pick", "drop", skill_runs=[run("nav", True),
                                                                      run("pick", False)]),
    ]  # fmt: skip
    result = EvalResult("tidy_house", "TP-SRL", ["pick 1", "place 1"], eps)
    assert result.skill_legs() == {"nav": (3, 4), "pick": (1, 2), "place": (1, 1)}
    assert list(result.skill_legs()) == ["nav", "pick", "place"]
    # Wilson 95 %: 3/4 -> [30.1, 95.4] %, 1/2 -> [9.5, 90.5] %, 1/1 -> [1/(1 + z²), 1] = [20.7, 100]
    assert "nav 3/4 (75% [30, 95]), pick 1/2 (50% [9, 91]), place 1/1 (100% [21, 100])" in (
        format_table(result)
    )
    assert "skill legs" not in format_table(_result())  # no runs recorded: no line


def test_json_carries_the_skill_legs(tmp_path):
    eps = [EpisodeRecord("a", 0, False, 9, "nav", "x", skill_runs=[
        {"skill": "nav", "ok": False, "steps": 9, "ended_by": "step_limit"}])]  # fmt: skip
    write_json(EvalResult("tidy_house", "TP-SRL", ["pick 1"], eps), tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["skill_legs"] == {
        "nav": {"ok": 0, "runs": 1}
    }
    assert read_json(tmp_path / "r.json").skill_legs() == {"nav": (0, 1)}


def test_frozen_legs_are_those_whose_last_50_steps_were_all_blocked(tmp_path):
    def run(skill, at_end):
        return {
            "skill": skill,
            "ok": False,
            "steps": 500,
            "ended_by": "step_limit",
            "blocked_steps": at_end + 3,
            "blocked_at_end": at_end,
        }

    eps = [
        EpisodeRecord("a", 0, False, 900, "nav", "x", skill_runs=[run("nav", 50), run("pick", 7)]),
        EpisodeRecord("b", 0, False, 900, "nav", "x", skill_runs=[run("nav", 49), run("nav", 451)]),
        EpisodeRecord("c", 0, False, 9, "nav", "x", skill_runs=[  # a record from before the count
            {"skill": "nav", "ok": False, "steps": 9, "ended_by": "stop"}]),
    ]  # fmt: skip
    result = EvalResult("tidy_house", "TP-SRL", ["pick 1"], eps)
    assert result.frozen_legs() == {"nav": 2}  # 50 and 451 steps; 49 is not frozen
    assert "legs ended frozen (last 50+ steps all blocked by the world): nav 2/4" in (
        format_table(result)
    )
    write_json(result, tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["frozen_legs"] == {"nav": 2}
    assert read_json(tmp_path / "r.json").frozen_legs() == {"nav": 2}
    assert "frozen" not in format_table(_result())  # none frozen: no line


def test_table_counts_the_nav_legs_the_unstick_stepped_back():
    def nav(ok, unsticks=0):
        run = {"skill": "nav", "ok": ok, "steps": 300, "ended_by": "stop"}
        if unsticks:
            run.update(unsticks=unsticks, unstick_steps=18 * unsticks)
        return run

    eps = [
        EpisodeRecord("a", 1, True, 900, "", "", skill_runs=[nav(True, 2), nav(True)]),
        EpisodeRecord("b", 0, False, 900, "nav", "x", skill_runs=[nav(False, 4)]),
    ]
    result = EvalResult("tidy_house", "TP-SRL", ["pick 1"], eps)
    assert result.unstuck_legs() == (2, 1, 6)
    assert "nav legs stuck and stepped back (nav unstick): 2, 1 of them held; 6 step backs" in (
        format_table(result)
    )
    assert "unstick" not in format_table(_result())  # none stepped back: no line


def test_table_counts_failure_causes_and_overlaps_deeper_than_2_cm():
    eps = [
        EpisodeRecord("a", 2, True, 300, max_depth=0.008),
        EpisodeRecord("b", 0, False, 90, "pick", "x", "excessive force", max_depth=0.031),
        EpisodeRecord("c", 1, False, 900, "place", "y", "excessive force", max_depth=0.021),
        EpisodeRecord("d", 0, False, 3000, "nav", "z", "skill timed out"),
    ]
    text = format_table(EvalResult("tidy_house", "TP-SRL", ["pick_1", "place_1"], eps))
    assert "failures: excessive force 2, skill timed out 1" in text
    assert "deeper than 2 cm: 2/4 episodes (deepest 3.1 cm)" in text
