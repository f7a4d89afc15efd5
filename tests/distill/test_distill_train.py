"""End to end: `train_skill --algo distill` writes the VER trainer's checkpoint of the depth
student, which the ordinary loader (a learned skill) reads back; `--resume` continues the
step count; on the synthetic reach env the student learns the teacher."""

import numpy as np
import torch
from distill_testlib import TINY_DAGGER, TINY_STUDENT, tb_scalars

from rearrange.distill.teacher_labels import TEACHER_KEY
from rearrange.runtime.checkpoint import SkillCheckpoint
from rearrange.skills.learned import LearnedSkill
from rearrange.skills.pretrained import pretrained_path
from rearrange.train_skill import main


def test_pick_student_checkpoints_loads_and_resumes(tmp_path):
    argv = ["pick", "--algo", "distill", "--serial", "--run-name", "d", f"runs_root={tmp_path}",
            *TINY_STUDENT, *TINY_DAGGER, "run.log_every_steps=32"]  # fmt: skip
    assert main([*argv, "run.total_steps=64"]) == 0
    latest = tmp_path / "pick" / "d" / "checkpoints" / "latest.pt"
    first = SkillCheckpoint.load(latest)
    assert (first.skill, first.obs_preset, first.base_movement, first.num_steps) == (
        "pick", "depth", False, 64
    )  # fmt: skip
    assert TEACHER_KEY not in first.observation_space.spaces
    assert first.training.learner["teacher"] == str(pretrained_path("pick").resolve())
    skill = LearnedSkill(latest, skill_name="pick")  # what eval_skill --checkpoints loads
    assert skill.observation_preset == "depth" and skill.observation_space["depth"].shape[0] == 32
    obs = {k: np.zeros(s.shape, np.float32) for k, s in skill.observation_space.spaces.items()}
    assert skill.act(obs, None).shape == (8,)

    assert first.training.learner["optimizer"]["param_groups"][0]["lr"] == 2.5e-4  # default
    assert main([*argv, "--resume", "run.total_steps=128", "distill.lr=1e-4"]) == 0
    resumed = SkillCheckpoint.load(latest)
    assert resumed.training.learner["optimizer"]["param_groups"][0]["lr"] == 1e-4
    assert resumed.num_steps == 128 and resumed.num_updates > first.num_updates
    assert not torch.equal(resumed.weights["action_head.mean.weight"],
                           first.weights["action_head.mean.weight"])  # fmt: skip
    betas = tb_scalars(tmp_path / "pick" / "d", "distill/beta")
    assert [s for s, _ in betas] == [32, 64, 96, 128]  # one log grid across the two sessions
    for tag in ("learn/loss", "distill/action_abs_diff", "episode/success", "perf/sps"):
        assert tb_scalars(tmp_path / "pick" / "d", tag), tag


def test_the_student_learns_the_synthetic_teacher(tmp_path):
    """Loss and disagreement fall while β goes to 0: the student then acts alone."""
    argv = ["synthetic", "--algo", "distill", "--serial", "--run-name", "s",
            f"runs_root={tmp_path}", "run.num_envs=2", "run.total_steps=1536",
            "run.log_every_steps=256", "distill.rollout_steps=16", "distill.chunk_len=8",
            "distill.buffer_steps=512", "distill.minibatch_steps=64", "distill.beta_steps=1024",
            "distill.lr=1e-3"]  # fmt: skip
    assert main(argv) == 0
    run = tmp_path / "synthetic" / "s"
    loss = [v for _, v in tb_scalars(run, "learn/mse")]
    diff = [v for _, v in tb_scalars(run, "distill/action_abs_diff")]
    beta = [v for _, v in tb_scalars(run, "distill/beta")]
    assert loss[-1] < loss[0] / 5 and diff[-1] < diff[0] / 2
    assert beta[0] > 0.7 and beta[-1] == 0.0  # the first log: the mean β of steps 224-255
    assert tb_scalars(run, "episode/success")[-1][1] > 0.9  # the student alone reaches


def test_env_worker_processes_label_too(tmp_path):
    """The same run with spawned env workers (the teacher built in each one)."""
    argv = ["synthetic", "--algo", "distill", "--run-name", "p", f"runs_root={tmp_path}",
            "run.num_envs=2", "run.total_steps=128", "distill.rollout_steps=16",
            "distill.chunk_len=8", "distill.buffer_steps=128", "distill.minibatch_steps=32"]  # fmt: skip
    assert main(argv) == 0
    latest = tmp_path / "synthetic" / "p" / "checkpoints" / "latest.pt"
    assert SkillCheckpoint.load(latest).num_steps == 128


def test_a_new_student_run_starts_from_pretrained_weights(tmp_path, capsys):
    # `pretrained_weights=` (e.g. the shipped pick_depth.pt) gives a new distill run its
    # student's starting weights; the step count starts at 0; a state checkpoint is refused.
    argv = ["pick", "--algo", "distill", "--serial", f"runs_root={tmp_path}", *TINY_STUDENT,
            *TINY_DAGGER, "run.total_steps=32", "distill.lr=1e-12"]  # fmt: skip
    assert main([*argv, "--run-name", "a"]) == 0
    first = tmp_path / "pick" / "a" / "checkpoints" / "latest.pt"
    assert main([*argv, "--run-name", "b", "run.seed=7", f"pretrained_weights={first}"]) == 0
    a = SkillCheckpoint.load(first).weights
    b = SkillCheckpoint.load(tmp_path / "pick" / "b" / "checkpoints" / "latest.pt")
    assert b.num_steps == 32
    # lr 1e-12: the weights stay those it started from (seed 7 would build others)
    for key in ("action_head.mean.weight", "encoder.visual.backbone.stem.0.weight"):
        torch.testing.assert_close(b.weights[key], a[key], atol=1e-6, rtol=0)
    state = pretrained_path("pick")
    assert main([*argv, "--run-name", "c", f"pretrained_weights={state}"]) == 1
    assert "observation space" in capsys.readouterr().err


def test_a_base_moving_student_starts_from_its_fixed_base_twin(tmp_path, capsys):
    # `pick --base-movement ... pretrained_weights=<fixed-base pick student>`: every layer
    # loads; the action head and previous-action embedding gain the base's two dimensions,
    # started at zero (the base at rest). The other way round (narrowing) is refused in one line.
    argv = ["pick", "--algo", "distill", "--serial", f"runs_root={tmp_path}", *TINY_STUDENT,
            *TINY_DAGGER, "run.total_steps=32", "distill.lr=1e-12"]  # fmt: skip
    assert main([*argv, "--run-name", "fixed"]) == 0
    fixed_path = tmp_path / "pick" / "fixed" / "checkpoints" / "latest.pt"
    assert (
        main([*argv, "--base-movement", "--run-name", "bm", f"pretrained_weights={fixed_path}"])
        == 0
    )
    fixed = SkillCheckpoint.load(fixed_path)
    bm = SkillCheckpoint.load(tmp_path / "pick" / "bm" / "checkpoints" / "latest.pt")
    assert bm.base_movement and bm.action_space.shape == (10,)
    mean, embed = bm.weights["action_head.mean.weight"], bm.weights["prev_action_embedding.weight"]
    torch.testing.assert_close(
        mean[:8], fixed.weights["action_head.mean.weight"], atol=1e-6, rtol=0
    )
    assert (
        mean[8:].abs().max() < 1e-6 and bm.weights["action_head.mean.bias"][8:].abs().max() < 1e-6
    )
    torch.testing.assert_close(embed[:, :8], fixed.weights["prev_action_embedding.weight"],
                               atol=1e-6, rtol=0)  # fmt: skip
    assert embed[:, 8:].abs().max() < 1e-6
    key = "encoder.visual.backbone.stem.0.weight"
    torch.testing.assert_close(bm.weights[key], fixed.weights[key], atol=1e-6, rtol=0)
    bm_path = tmp_path / "pick" / "bm" / "checkpoints" / "latest.pt"
    assert main([*argv, "--run-name", "back", f"pretrained_weights={bm_path}"]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "action space" in err and "fixed-base one of a --base-movement run" in err


def test_a_base_moving_articulated_student_acts_as_its_fixed_base_twin(tmp_path):
    # open_fridge --base-movement also observes art_joint_to_target (sorted first among the
    # vectors): the LSTM's input columns and the vector normaliser make room for it at zero,
    # so the widened student's first actions are its source's on the arm, 0 on the base.
    argv = ["open_fridge", "--algo", "distill", "--serial", f"runs_root={tmp_path}",
            *TINY_STUDENT, *TINY_DAGGER, "run.total_steps=32", "distill.lr=1e-12",
            "model.vector_norm=true", "model.prev_action_input=false"]  # fmt: skip
    assert main([*argv, "--run-name", "fixed"]) == 0
    fixed_path = tmp_path / "open_fridge" / "fixed" / "checkpoints" / "latest.pt"
    assert (
        main([*argv, "--base-movement", "--run-name", "bm", f"pretrained_weights={fixed_path}"])
        == 0
    )
    bm_path = tmp_path / "open_fridge" / "bm" / "checkpoints" / "latest.pt"
    fixed = LearnedSkill(fixed_path, skill_name="open_fridge")
    moving = LearnedSkill(bm_path, skill_name="open_fridge")
    added = set(moving.observation_space.spaces) - set(fixed.observation_space.spaces)
    assert added == {"art_joint_to_target"}
    norm = SkillCheckpoint.load(bm_path).weights["encoder.vector_norm.mean"]
    src = SkillCheckpoint.load(fixed_path).weights["encoder.vector_norm.mean"]
    assert norm.shape[0] == src.shape[0] + 1 and norm[0] == 0  # its entry first, at rest
    torch.testing.assert_close(norm[1:], src, atol=1e-6, rtol=0)
    rng = np.random.default_rng(0)
    for _ in range(3):  # a few steps: the recurrent state must agree too
        obs = {k: rng.uniform(0, 1, s.shape).astype(np.float32)
               for k, s in fixed.observation_space.spaces.items()}  # fmt: skip
        a = fixed.act(obs, None)
        b = moving.act({**obs, "art_joint_to_target": np.array([0.7], np.float32)}, None)
        np.testing.assert_allclose(b[:8], a, atol=1e-5)
        np.testing.assert_allclose(b[8:], 0.0, atol=1e-5)
