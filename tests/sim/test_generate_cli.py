"""The episode CLI: files written and read back, one-line errors with exit status 2."""

from __future__ import annotations

import subprocess
import sys

import pytest
from sim_layouts import small_apartment

from rearrange.sim import generate
from rearrange.sim.episodes import TASKS, load_episodes


def test_cli_writes_one_task(tmp_path, capsys):
    """On the hand-made layout (independent of apartment.py), as all CLI runs here."""
    out = tmp_path / "pick_val.json.gz"
    argv = ["pick", "--split", "val", "--num", "3", "--seed", "0", "--out", str(out)]
    assert generate.main(argv, layout_fn=small_apartment) == 0
    eps = load_episodes(out)
    assert [e.episode_id for e in eps] == ["pick-val-0000", "pick-val-0001", "pick-val-0002"]
    assert "3 val episodes" in capsys.readouterr().out


def test_cli_all_writes_every_task(tmp_path):
    argv = ["--all", "--split", "train", "--num", "1", "--out", str(tmp_path)]
    assert generate.main(argv, layout_fn=small_apartment) == 0
    for task in TASKS:
        (ep,) = load_episodes(tmp_path / f"{task}_train.json.gz")
        assert ep.task == task and ep.split == "train"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["fly"], "unknown task 'fly'"),
        (["pick", "--split", "test"], "unknown split 'test'"),
        ([], "give either one TASK or --all"),
        (["pick", "--all"], "give either one TASK or --all"),
        (["pick", "--num", "x"], "invalid int value"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(argv, message, capsys):
    assert generate.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_subprocess_has_no_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "rearrange.sim.generate", "nope", "--split", "val"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "unknown task 'nope'" in proc.stderr
