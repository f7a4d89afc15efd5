"""What `train_skill` settles before training: the CPU profile trains each skill's shipped
schedule (the manifest's steps), a start banner names trainer, skill, observations, device,
run and TensorBoard directories, steps and an ETA with its source, and an override of the
other trainer is refused in one line naming the key that applies."""

import json

import pytest
from pql_testlib import TINY, train_synthetic

from rearrange.config import compose_train_config, foreign_trainer_override
from rearrange.skills.pretrained import (
    PRETRAINED_DIR,
    pretrained_path,
    shipped_dirs,
    shipped_file,
    training_argv,
)
from rearrange.train_skill import main, manifest_algo, start_banner

MANIPULATION = ("pick", "place", "open_cab", "open_fridge", "close_cab", "close_fridge")


def _manifest(skill: str, base_movement: bool) -> dict:
    return json.loads(pretrained_path(skill, base_movement).with_suffix(".json").read_text())


@pytest.mark.parametrize("base_movement", [False, True])
@pytest.mark.parametrize("skill", MANIPULATION)
def test_cpu_profile_trains_the_shipped_checkpoints_schedule(skill, base_movement):
    manifest = _manifest(skill, base_movement)
    extra = ["task.base_movement=true"] if base_movement else []
    cfg = compose_train_config(skill, ["profile=cpu", "+algo=pql", *extra])  # --profile cpu
    assert manifest_algo(skill, manifest["training_command"]) == "pql"
    assert cfg.run.total_steps == manifest["steps"]


def test_explicit_totals_still_win_over_the_schedule():
    for override in ("run.total_steps=400000", "total_steps=400000", "pql.total_steps=400000"):
        cfg = compose_train_config("pick", ["+algo=pql", "base_movement=true", override])
        assert cfg.run.total_steps == 400_000


def test_nav_keeps_the_shipped_nav_schedule():
    manifest = _manifest("nav", False)
    cfg = compose_train_config("nav", ["profile=cpu"])
    assert manifest_algo("nav", manifest["training_command"]) == cfg.algo == "ver"
    if "pretrained_weights=" in manifest["training_command"]:
        # a fine-tune of a run on this schedule (the blocking world's nav): shorter than it
        assert 0 < manifest["steps"] < cfg.run.total_steps
    else:
        assert abs(cfg.run.total_steps - manifest["steps"]) < cfg.run.num_envs * 128


def test_banner_names_the_run_and_a_recorded_eta(tmp_path):
    cfg = compose_train_config("pick", ["+algo=pql", f"runs_root={tmp_path}"])
    run_dir = tmp_path / "pick" / "r1"
    text = "\n".join(start_banner(cfg, run_dir, 0, cuda=False))
    manifest = _manifest("pick", False)
    sps = manifest["steps"] / manifest["wall_time_s"]
    assert "trainer:      PQL" in text and "skill:        pick (fixed base)" in text
    assert "observations: state" in text and "device:       cpu" in text
    assert f"run dir:      {run_dir} (new run)" in text and str(run_dir / "tb") in text
    steps = f"{manifest['steps']:,}"  # the CPU schedule is the shipped checkpoint's
    assert f"steps:        {steps} (run.total_steps)" in text
    assert f"at {sps:.0f} steps/s (recorded: the shipped pick.pt, {steps} steps in" in text
    resumed = "\n".join(start_banner(cfg, run_dir, 150_000, cuda=False))
    to_go = f"{manifest['steps'] - 150_000:,} to go"
    assert "(resuming at step 150,000)" in resumed and to_go in resumed


@pytest.mark.parametrize(
    ("skill", "extra", "variant"),
    [("nav", [], "drives its base"), ("place", ["task.base_movement=true"], "base movement")],
)
def test_banner_names_the_base_variant(tmp_path, skill, extra, variant):
    cfg = compose_train_config(skill, [f"runs_root={tmp_path}", *extra])
    text = "\n".join(start_banner(cfg, tmp_path / skill / "r1", 0, cuda=False))
    assert f"skill:        {skill} ({variant})" in text


def test_banner_names_the_oracle_near_the_goal(tmp_path):
    cfg = compose_train_config("nav", ["+algo=distill", "distill.oracle_near=1.0"])
    line = start_banner(cfg, tmp_path / "nav" / "r1", 0, cuda=False)[0]
    assert line.startswith(
        "trainer:      DAgger distillation (teacher: the shipped checkpoint, the oracle within "
        "1 m of the goal; "
    )


def test_banner_says_when_no_speed_is_recorded(tmp_path):
    cfg = compose_train_config("synthetic", ["+algo=pql", *TINY, "total_steps=100"])
    eta = start_banner(cfg, tmp_path, 0, cuda=False)[-1]
    assert "no recorded speed" in eta and "a measured one after 10,000 steps" in eta
    ver = compose_train_config("pick", ["profile=cpu"])  # VER-PPO on state: no shipped one
    assert "no recorded speed" in start_banner(ver, tmp_path, 0, cuda=False)[-1]


def test_paper_profile_eta_on_cuda_is_the_measured_gpu_speed(tmp_path):
    from rearrange.train_skill import DEPTH_GPU_SPS

    cfg = compose_train_config("pick", ["profile=paper", "task.base_movement=true"])
    eta = start_banner(cfg, tmp_path, 0, cuda=True)[-1]
    minutes = round(cfg.run.total_steps / DEPTH_GPU_SPS / 60)  # 500M steps at 1,500/s
    assert f"~{minutes // 60} h {minutes % 60:02d} min at {DEPTH_GPU_SPS} steps/s" in eta
    assert "(measured for the paper profile on one H200" in eta


def test_distill_eta_is_the_shipped_depth_students_cpu_speed(tmp_path):
    manifest = json.loads((PRETRAINED_DIR / "pick_depth.json").read_text())
    assert manifest_algo("pick", manifest["training_command"]) == "distill"
    cfg = compose_train_config("pick", ["profile=paper", "+algo=distill"])
    sps = manifest["steps"] / manifest["wall_time_s"]  # 180,224 steps in 92 min: ~33
    eta = start_banner(cfg, tmp_path, 0, cuda=False)[-1]
    assert f"at {sps:.0f} steps/s (recorded: the shipped pick_depth.pt" in eta
    # the shipped student's speed is a CPU one: on CUDA the ETA waits for a measured one
    assert "no recorded speed" in start_banner(cfg, tmp_path, 0, cuda=True)[-1]


def test_a_cli_run_prints_the_banner(tmp_path, capsys):
    assert train_synthetic(tmp_path, "b", "--serial", "total_steps=200") == 0
    err = capsys.readouterr().err
    assert "trainer:      PQL (one process" in err
    assert f"TensorBoard:  tensorboard --logdir {tmp_path / 'synthetic' / 'b' / 'tb'}" in err


@pytest.mark.parametrize(
    ("algo", "override", "message"),
    [
        (
            "pql",
            "ver.total_steps=5",
            "ver.total_steps does not apply to --algo pql: use run.total_steps",
        ),  # fmt: skip
        ("pql", "+ver.num_envs=2", "ver.num_envs does not apply to --algo pql: use run.num_envs"),
        (
            "pql",
            "ver.checkpoint_interval=5",
            "ver.checkpoint_interval does not apply to --algo pql: use run.checkpoint_every_steps",
        ),  # fmt: skip
        (
            "pql",
            "ppo.lr=1e-3",
            "ppo.lr does not apply to --algo pql: use pql.actor_lr and pql.critic_lr",
        ),  # fmt: skip
        (
            "pql",
            "ver.rollout_steps=8",
            "ver.rollout_steps does not apply to --algo pql (PQL has "
            "no such setting): drop it, or use --algo ver",
        ),  # fmt: skip
        (
            "ver",
            "pql.total_steps=5",
            "pql.total_steps does not apply to --algo ver: use run.total_steps",
        ),  # fmt: skip
        (
            "ver",
            "pql.checkpoint_interval=5",
            "pql.checkpoint_interval does not apply to --algo ver: use run.checkpoint_every_steps",
        ),  # fmt: skip
        ("ver", "pql.critic_lr=1", "pql.critic_lr does not apply to --algo ver: use ppo.lr"),
    ],
)
def test_an_override_of_the_other_trainer_names_the_key_to_use(algo, override, message):
    assert foreign_trainer_override(algo, ["total_steps=9", override]) == message


def test_overrides_both_trainers_read_pass():
    shared = ["total_steps=9", "model.state_mlp_hidden=[8]", "ver.checkpoint_dir=ck", "task.seed=1",
              "run.num_envs=3", "run.checkpoint_every_steps=100"]  # fmt: skip
    assert foreign_trainer_override("pql", [*shared, "pql.seed=2"]) is None
    assert foreign_trainer_override("ver", [*shared, "ppo.lr=1e-3", "ver=tiny"]) is None


def test_the_cli_refuses_a_foreign_override_in_one_line(tmp_path, capsys):
    rc = main(["synthetic", "--algo", "pql", f"runs_root={tmp_path}", "ver.total_steps=100"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err
    assert err == "error: ver.total_steps does not apply to --algo pql: use run.total_steps"
    rc = main(["synthetic", f"runs_root={tmp_path}", "pql.total_steps=100"])  # VER-PPO
    assert rc == 2 and "use run.total_steps" in capsys.readouterr().err
    rc = main(["synthetic", "--algo", "pql", "--system", "ddppo", f"runs_root={tmp_path}"])
    assert rc == 2 and "--system ddppo applies to VER-PPO only" in capsys.readouterr().err
    assert not (tmp_path / "synthetic").exists()


def test_pql_logs_a_measured_eta_once(tmp_path, caplog, monkeypatch):
    import logging

    import rearrange.pql.trainer as trainer

    monkeypatch.setattr(trainer, "MEASURED_ETA_STEPS", 400)  # the first log (log_interval 400)
    with caplog.at_level(logging.INFO, logger="rearrange.train"):
        assert train_synthetic(tmp_path, "eta", "--serial", "total_steps=1200") == 0
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("measured")]
    assert len(lines) == 1
    assert "steps/s over this session's first 400 steps: ETA " in lines[0]
    assert lines[0].endswith("to 1,200 steps")


def test_durations_read_as_a_person_would_say_them():
    from rearrange.runtime.logging_utils import eta_text, format_duration

    assert [format_duration(s) for s in (45, 720, 8400)] == ["45 s", "12 min", "2 h 20 min"]
    assert eta_text(150_000, 250.0, 200_000) == "ETA 10 min to 200,000 steps"
    assert eta_text(10, 0.0, 20) == "ETA unknown to 20 steps"


@pytest.mark.parametrize("name", sorted(p.stem for d in shipped_dirs() for p in d.glob("*.json")))
def test_every_shipped_training_command_still_composes(name, tmp_path):
    from rearrange.train_skill import compose_run, parse_args, total_steps_of

    manifest = json.loads(shipped_file(f"{name}.json").read_text())
    argv = training_argv(manifest["training_command"])
    cfg, _ = compose_run(parse_args([*argv, f"runs_root={tmp_path}"]))
    keys = ("total_steps=", "run.total_steps=")  # the alias and the run config's key
    explicit = [a.split("=")[1] for a in argv if a.startswith(keys)]
    total, _ = total_steps_of(cfg)
    if explicit:  # an explicit total still trains that total
        assert total == int(explicit[0])
    elif cfg.algo == "distill":  # distill.yaml's 1M; the shipped file is a chosen snapshot
        assert manifest["steps"] <= total == 1_000_000
    else:  # the default is the shipped schedule
        assert abs(total - manifest["steps"]) < 128 * cfg.run.num_envs


def test_a_resumed_runs_eta_is_its_own_speed_so_far(tmp_path):
    # pick's shipped PQL speed (~190 steps/s) is not used once the run has its own figure
    cfg = compose_train_config("pick", ["+algo=pql", f"runs_root={tmp_path}"])
    total = cfg.run.total_steps
    eta = start_banner(cfg, tmp_path, 150_000, False, 300.0)[-1]  # 500 steps/s
    left = round((total - 150_000) / 500 / 60)
    assert f"~{left} min at 500 steps/s (this run so far: 150,000 steps in 5 min)" in eta
    # no wall time recorded (an old checkpoint): the shipped figure as before
    assert "recorded: the shipped pick.pt" in start_banner(cfg, tmp_path, 150_000, False)[-1]


def test_a_cli_resume_prints_the_runs_own_speed(tmp_path, capsys):
    assert train_synthetic(tmp_path, "r", "--serial", "total_steps=200") == 0
    capsys.readouterr()
    assert train_synthetic(tmp_path, "r", "--serial", "--resume", "total_steps=400") == 0
    err = capsys.readouterr().err
    assert "(resuming at step 200" in err
    assert "steps/s (this run so far: 200" in err
