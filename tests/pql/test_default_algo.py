"""Which trainer `train_skill` picks without --algo: PQL for the CPU profile's state skills."""

import pytest

from rearrange.train_skill import compose_run, default_algo, parse_args


@pytest.mark.parametrize(
    ("skill", "profile", "algo"),
    [
        ("pick", "cpu", "pql"),
        ("open_cab", "cpu", "pql"),
        ("nav", "cpu", "ver"),  # PQL did not learn nav
        ("synthetic", "cpu", "ver"),
        ("pick", None, "ver"),  # the paper's depth profile stays VER-PPO
        ("pick", "paper", "ver"),
    ],
)
def test_default_algo(skill, profile, algo):
    assert default_algo(skill, profile) == algo


def _compose(argv, tmp_path):
    return compose_run(parse_args([*argv, f"runs_root={tmp_path}"]))


def test_cpu_profile_composes_pql_unless_asked_otherwise(tmp_path):
    cfg, run_dir = _compose(["pick", "--profile", "cpu", "--run-name", "a"], tmp_path)
    assert cfg.algo == "pql" and cfg.task.obs_preset == "state"
    assert run_dir == tmp_path / "pick" / "a"
    assert _compose(["pick", "--profile", "cpu", "--algo", "ver"], tmp_path)[0].algo == "ver"
    # choosing a VER collection system means VER-PPO
    cfg, _ = _compose(["pick", "--profile", "cpu", "--system", "ddppo"], tmp_path)
    assert cfg.algo == "ver" and cfg.ver.system == "ddppo"
    nav, _ = _compose(["nav", "--profile", "cpu"], tmp_path)
    assert nav.algo == "ver" and nav.task.obs_preset == "state_rays"


def _fake_run(tmp_path, algo):
    run = tmp_path / "pick" / "old"
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "latest.pt").write_bytes(b"x")
    (run / "config.yaml").write_text(f"skill: pick\nalgo: {algo}\n")
    return run


def test_resume_keeps_the_trainer_recorded_in_the_run(tmp_path):
    run = _fake_run(tmp_path, "ver")
    cfg, run_dir = _compose(["pick", "--profile", "cpu", "--resume", "--run-name", "old"], tmp_path)
    assert run_dir == run and cfg.algo == "ver"
    # an explicit --algo wins over the recorded one
    argv = ["pick", "--profile", "cpu", "--resume", "--run-name", "old", "--algo", "pql"]
    assert _compose(argv, tmp_path)[0].algo == "pql"


def test_resume_of_a_pql_run_stays_pql(tmp_path):
    _fake_run(tmp_path, "pql")
    cfg, _ = _compose(["pick", "--profile", "cpu", "--resume", "--run-name", "old"], tmp_path)
    assert cfg.algo == "pql"
