"""The CLI: a process-mode run (Actor + V-learner + P-learner processes) writes the VER
trainer's outputs with PQL's scalars, resumes, and bad input gets one-line errors."""

import pytest
from pql_testlib import TINY, scalar_values, tb_tags, train_synthetic

from rearrange.config import compose_train_config
from rearrange.runtime.checkpoint import SkillCheckpoint
from rearrange.train_skill import main


@pytest.fixture(scope="module")
def process_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    # the keys of the shipped manifests' commands (aliases of run.keep_checkpoints and
    # run.checkpoint_every_steps, in env steps as before)
    assert train_synthetic(root, "proc", "total_steps=1200", "pql.keep_checkpoints=2",
                           "pql.checkpoint_interval=600") == 0  # fmt: skip
    return root


def test_process_run_writes_config_tb_and_checkpoints(process_run):
    run = process_run / "synthetic" / "proc"
    assert "algo: pql" in (run / "config.yaml").read_text()
    state = SkillCheckpoint.load(run / "checkpoints" / "latest.pt")
    assert state.num_steps == 1200 and state.training.learner["algo"] == "pql"
    assert state.model.policy == "pql_actor"
    assert sorted(p.name for p in (run / "checkpoints").glob("ckpt_*.pt")) == [
        "ckpt_0000000600.pt",
        "ckpt_0000001200.pt",
    ]
    tags = tb_tags(run)
    for tag in ("perf/sps", "ratio/a_v", "ratio/p_v", "perf/wait_actor", "learn/value_loss",
                "learn/actor_loss", "episode/success"):  # fmt: skip
        assert tag in tags, tag


def test_process_run_holds_the_speed_ratios(process_run):
    run = process_run / "synthetic" / "proc"
    # measured over each log window; the leads allow one unit of slack per window
    assert abs(scalar_values(run, "ratio/a_v")[-1] - 0.5) < 0.1
    assert abs(scalar_values(run, "ratio/p_v")[-1] - 0.5) < 0.1
    units = SkillCheckpoint.load(run / "checkpoints" / "latest.pt").training.learner["units"]
    assert abs(units["V_LEARNER"] - 2 * units["ACTOR"]) <= 2
    assert abs(units["P_LEARNER"] - units["V_LEARNER"] / 2) <= 2


def test_resume_continues_counters_and_steps(process_run):
    run = process_run / "synthetic" / "proc"
    before = SkillCheckpoint.load(run / "checkpoints" / "latest.pt")
    assert train_synthetic(process_run, "proc", "--serial", "total_steps=1600") == 0
    after = SkillCheckpoint.load(run / "checkpoints" / "latest.pt")
    assert after.num_steps == 1600
    assert (
        after.training.learner["units"]["V_LEARNER"] > before.training.learner["units"]["V_LEARNER"]
    )
    assert after.wall_time_s > before.wall_time_s


def test_resume_flag_picks_the_newest_pql_run(process_run, capsys):
    argv = ["synthetic", "--algo", "pql", "--serial", "--resume", f"runs_root={process_run}"]
    assert main([*argv, *TINY, "total_steps=1700"]) == 0
    state = SkillCheckpoint.load(process_run / "synthetic" / "proc" / "checkpoints" / "latest.pt")
    assert state.num_steps == 1700


def test_depth_observations_are_refused_in_one_line(tmp_path, capsys):
    rc = main(["pick", "--algo", "pql", "--profile", "paper", f"runs_root={tmp_path}"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc == 2 and err.startswith("error: PQL trains from state observations")
    assert "task.obs_preset=state" in err
    assert not (tmp_path / "pick").exists()


def test_bad_pql_value_names_the_field(capsys):
    assert main(["synthetic", "--algo", "pql", "pql.beta_a_v=0"]) == 2
    err = capsys.readouterr().err.strip()
    assert "PQLConfig.beta_a_v must be > 0" in err and "\n" not in err


def test_algo_without_the_group_is_refused(capsys):
    assert main(["synthetic", "algo=pql"]) == 2
    err = capsys.readouterr().err.strip()
    assert "algo" in err and "\n" not in err


def test_resuming_a_ver_run_with_pql_is_refused(tmp_path, capsys):
    ver = ["synthetic", "--serial", "--run-name", "v", f"runs_root={tmp_path}"]
    assert main([*ver, "ver.num_envs=2", "ver.rollout_steps=8", "total_steps=16"]) == 0
    capsys.readouterr()
    assert main(["synthetic", "--algo", "pql", "--serial", "--run-name", "v",
                 f"runs_root={tmp_path}", *TINY, "total_steps=64"]) == 1  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "was not written by --algo pql" in err


def test_compose_maps_total_steps_and_the_cpu_profile():
    cfg = compose_train_config("pick", ["+algo=pql", "total_steps=1000"])
    assert cfg.algo == "pql" and cfg.run.total_steps == 1000
    assert cfg.task.obs_preset == "state" and cfg.model.policy == "pql_actor"
    nav = compose_train_config("nav", ["+algo=pql"])
    assert nav.task.obs_preset == "state_rays"  # the CPU profile's nav sensing


@pytest.mark.parametrize(
    "mode", ["--serial", pytest.param("processes", marks=pytest.mark.slow)]
)  # the process path is one start-up of env workers + learners (~15 s quiet, minutes busy)
def test_a_diverging_learner_stops_the_run_with_one_line(tmp_path, capsys, mode):
    extra = [mode] if mode == "--serial" else []
    rc = train_synthetic(tmp_path, "nan", *extra, "pql.reward_scale=1e39", "total_steps=400")
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc == 1
    assert err.startswith("error: v-learner raised FloatingPointError: critic loss is")
    assert err.endswith("lower pql.critic_lr or pql.reward_scale")


def test_resuming_with_other_networks_is_refused(process_run, capsys):
    rc = train_synthetic(process_run, "proc", "--serial", "model.state_mlp_hidden=[8]")
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc == 1 and "does not fit this run's networks" in err
