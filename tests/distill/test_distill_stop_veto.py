"""distill.stop_veto: a student's stop that the teacher would not call is not executed (the
episode goes on and DAgger labels what follows); only nav has a stop to veto."""

import numpy as np
from distill_testlib import TINY_DAGGER, TINY_STUDENT, tb_scalars

from rearrange.distill.collect import veto_stops
from rearrange.train_skill import main

STOP = 2  # nav: [linear, angular, stop]


def test_only_student_stops_the_teacher_would_not_call_are_vetoed():
    executed = np.array(
        [[0.1, 0.2, 0.7],  # student stops, teacher does not: vetoed
         [0.1, 0.2, 0.7],  # student stops, teacher stops too: kept
         [0.1, 0.2, -0.3],  # student drives on: untouched
         [0.5, 0.5, 0.9]],  # the teacher's own action ran (β): untouched
        np.float32,
    )  # fmt: skip
    teacher = np.array(
        [[0.9, -0.4, -0.8], [0.0, 0.0, 0.6], [0.3, 0.3, 0.8], [0.5, 0.5, 0.9]], np.float32
    )
    use_teacher = np.array([False, False, False, True])
    assert veto_stops(executed, teacher, use_teacher, STOP) == 1
    np.testing.assert_array_equal(
        executed[0], np.float32([0.1, 0.2, -0.8])
    )  # motion stays the student's
    np.testing.assert_array_equal(executed[1:, STOP], np.float32([0.7, -0.3, 0.9]))


def test_a_nav_run_with_the_veto_logs_its_count(tmp_path):
    argv = ["nav", "--algo", "distill", "--serial", "--run-name", "v", f"runs_root={tmp_path}",
            *TINY_STUDENT, *TINY_DAGGER, "run.log_every_steps=32", "run.total_steps=64",
            "distill.beta_start=0", "distill.stop_veto=true"]  # fmt: skip
    assert main(argv) == 0
    counts = [v for _, v in tb_scalars(tmp_path / "nav" / "v", "distill/stop_vetoes")]
    assert len(counts) == 2 and all(c >= 0 and c == int(c) for c in counts)


def test_the_veto_needs_a_stop_action(tmp_path, capsys):
    argv = ["synthetic", "--algo", "distill", "--run-name", "w", f"runs_root={tmp_path}",
            "run.num_envs=2", "run.total_steps=64", "run.serial=true", "distill.rollout_steps=16",
            "distill.chunk_len=8", "distill.buffer_steps=256", "distill.stop_veto=true"]  # fmt: skip
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        "error: distill.stop_veto: the synthetic skill has no stop action (only nav has one): "
        "drop distill.stop_veto"
    )
