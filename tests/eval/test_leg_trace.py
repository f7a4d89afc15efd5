"""benchmarks/leg_trace: a HAB chain's failed legs printed step by step, with a teacher's
action beside the skill's, and runs of identical blocked steps thinned."""

import numpy as np

from benchmarks import leg_trace
from benchmarks.leg_trace import LegTrace, StepLine
from rearrange.eval import executor as ex


def _step(i, blocked, action=(1.0, 1.0, -1.0), contacts=(("gripper", "wall_4"),)):
    z = np.zeros(3)
    return StepLine(i, np.array(action), None, z, z, blocked, contacts if blocked else ())


def test_a_run_of_identical_blocked_steps_prints_every_25th_and_its_last():
    trace = LegTrace("nav", 0, [_step(i, False) for i in (1, 2, 3)])
    trace.steps += [_step(i, True) for i in range(4, 64)]  # 60 blocked alike
    lines = trace.lines()
    # 3 free, the run's first (step 4), its 25th and 50th repeats (29, 54), the leg's last (63)
    assert [int(line.split()[0]) for line in lines] == [1, 2, 3, 4, 29, 54, 63]
    assert "BLOCKED" in lines[3] and "gripper->wall_4" in lines[3] and "free" in lines[0]
    trace.steps.append(_step(64, True, action=(-1.0, 0.0, -1.0)))  # another action: printed
    assert [int(line.split()[0]) for line in trace.lines()] == [1, 2, 3, 4, 29, 54, 64]


def test_a_failed_leg_is_printed_with_the_teachers_action(monkeypatch, capsys, tmp_path):
    for name in ("_run_step", "run_episode"):  # restored after the test
        monkeypatch.setattr(ex.TPSRLExecutor, name, getattr(ex.TPSRLExecutor, name))
    argv = ["tidy_house", "--skills", "oracle", "--episodes", "1", "--seed", "0",
            "--max-steps", "40", "--out", str(tmp_path), "--teacher",
            "rearrange/skills/pretrained/nav.pt"]  # fmt: skip
    assert leg_trace.main(argv) == 0
    out = capsys.readouterr().out
    head = "episode 0 nav leg: FAILED, ended by episode_limit after 40 steps"
    assert head in out
    steps = [line for line in out.splitlines() if line.startswith("  ") and "action=" in line]
    assert len(steps) == 40 and all("teacher=[" in line for line in steps)
    assert (tmp_path / "results.json").exists()


def test_disagreement_shares_count_free_and_stopped_steps_apart():
    z = np.zeros(3)
    steps = [  # (action, teacher, blocked, collided)
        StepLine(1, np.array([1.0, 0.0, -1]), np.array([1.0, 0.2, -1]), z, z, False, ()),
        StepLine(2, np.array([1.0, 0.0, -1]), np.array([-1.0, 0.0, -1]), z, z, False, ()),
        StepLine(3, np.array([1.0, 1.0, -1]), np.array([1.0, 1.0, -1]), z, z, True, ()),
        StepLine(4, np.array([2.0, 1.0, -1]), np.array([1.0, 0.0, -1]), z, z, False, (), True),
    ]
    d = leg_trace.disagreement(LegTrace("nav", 0, steps))
    # stopped: steps 3 (blocked) and 4 (collided); differ: 2 (linear) and 4 (angular; the
    # 2.0 clips to 1.0, so linear agrees)
    assert d == {"stopped": 0.5, "differ": 0.5, "differ_free": 0.5, "differ_stopped": 0.5}
    only_free = leg_trace.disagreement(LegTrace("nav", 0, steps[:2]))
    assert only_free["stopped"] == 0.0 and np.isnan(only_free["differ_stopped"])


def test_an_unknown_flag_is_one_line(capsys):
    assert leg_trace.main(["tidy_house", "--episodez", "3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unrecognized arguments: --episodez 3") and err.count("\n") == 1


def test_a_run_of_identical_collided_steps_is_thinned_like_a_blocked_one():
    z = np.zeros(3)
    steps = [
        StepLine(i, np.array([0.67, 0.0, -1.0]), None, z, z, False, (), True) for i in range(1, 61)
    ]
    lines = LegTrace("nav", 0, steps).lines()
    assert [int(line.split()[0]) for line in lines] == [1, 26, 51, 60]
    assert all("free collided" in line for line in lines)
