"""Bad input to `--algo distill` is one line on stderr and exit code 2, before any env starts."""

import pytest
from distill_testlib import TINY_STUDENT

from rearrange.config import foreign_trainer_override
from rearrange.skills.pretrained import pretrained_path
from rearrange.train_skill import main


def _error(argv, capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    line = [x for x in err if x.startswith("error: ")]
    assert len(line) == 1 and line[0] == err[-1]
    return line[0]


def _distill(tmp_path, *extra):
    return ["pick", "--algo", "distill", f"runs_root={tmp_path}", *TINY_STUDENT, *extra]


def test_a_missing_teacher(tmp_path, capsys):
    err = _error(_distill(tmp_path, "--teacher", str(tmp_path / "nope.pt")), capsys)
    assert "--teacher" in err and "nope.pt: no such file or run directory" in err
    assert not (tmp_path / "pick").exists()


def test_a_corrupt_teacher(tmp_path, capsys):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    err = _error(_distill(tmp_path, "--teacher", str(bad)), capsys)
    assert f"checkpoint {bad} is corrupt" in err


def test_a_teacher_of_another_skill(tmp_path, capsys):
    err = _error(_distill(tmp_path, "--teacher", str(pretrained_path("place"))), capsys)
    assert "is a 'place' checkpoint, not one of 'pick'" in err


@pytest.mark.parametrize(("flag", "teacher", "fix"), [
    ([], "pick_bm", "add --base-movement"), (["--base-movement"], "pick", "drop --base-movement")
])  # fmt: skip
def test_a_teacher_of_the_other_mode(tmp_path, capsys, flag, teacher, fix):
    path = pretrained_path("pick", teacher.endswith("_bm"))
    err = _error(_distill(tmp_path, *flag, "--teacher", str(path)), capsys)
    assert "base movement" in err and fix in err


def test_a_state_student_is_refused(tmp_path, capsys):
    err = _error(["pick", "--profile", "cpu", "--algo", "distill", f"runs_root={tmp_path}"], capsys)
    assert err.startswith("error: --algo distill trains a depth student but task.obs_preset=state")


def test_teacher_with_another_trainer(tmp_path, capsys):
    argv = ["pick", "--algo", "ver", "--teacher", str(pretrained_path("pick")),
            f"runs_root={tmp_path}"]  # fmt: skip
    assert "--teacher applies to --algo distill only" in _error(argv, capsys)


def test_other_trainers_settings_name_the_distill_key():
    assert foreign_trainer_override("distill", ["ppo.lr=1e-3"]) == (
        "ppo.lr does not apply to --algo distill: use distill.lr"
    )
    assert "use distill.rollout_steps" in foreign_trainer_override(
        "distill", ["ver.rollout_steps=8"]
    )
    assert foreign_trainer_override("ver", ["distill.lr=1"]) == (
        "distill.lr does not apply to --algo ver: use ppo.lr"
    )
    assert "drop it, or use --algo distill" in foreign_trainer_override(
        "pql", ["distill.beta_end=0"]
    )
    assert foreign_trainer_override("distill", ["run.num_envs=2", "distill.epochs=1"]) is None


@pytest.mark.parametrize(("weights", "message"), [
    ("[1,-2]", "weights must be >= 0 and not all 0"),
    ("[0,0]", "weights must be >= 0 and not all 0"),
])  # fmt: skip
def test_bad_action_weights(tmp_path, capsys, weights, message):
    err = _error(_distill(tmp_path, f"distill.action_weights={weights}"), capsys)
    assert "DistillConfig.action_weights" in err and message in err


def test_action_weights_with_the_nll_loss(tmp_path, capsys):
    err = _error(_distill(tmp_path, "distill.action_weights=[1,1]", "distill.loss=nll"), capsys)
    assert "apply to loss 'mse_nll', not 'nll'" in err


def test_action_weights_of_the_wrong_count_stop_the_run_in_one_line(tmp_path, capsys):
    argv = ["synthetic", "--algo", "distill", "--run-name", "w", f"runs_root={tmp_path}",
            "run.num_envs=2", "run.total_steps=64", "run.serial=true", "distill.rollout_steps=16",
            "distill.chunk_len=8", "distill.buffer_steps=256", "distill.action_weights=[1,2,3]"]  # fmt: skip
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        "error: distill.action_weights has 3 weights but the action space has 1 dimensions: "
        "give one weight per dimension"
    )
    assert not (tmp_path / "synthetic" / "w" / "checkpoints" / "latest.pt").exists()
