"""SkillCheckpoint: a real file round-trips every field, the old dict layout (the shipped
checkpoints) converts, missing/corrupt/foreign files raise one line naming the file and the
fix; atomic writes; resume after SIGKILL."""

import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from rearrange.models import ModelConfig, build_policy
from rearrange.runtime import weight_codec
from rearrange.runtime.checkpoint import (
    CheckpointError,
    CheckpointNotFoundError,
    SkillCheckpoint,
    TrainingState,
    checkpoint_stem,
    config_base_movement,
    from_legacy_layout,
    load_for_resume,
    rng_state,
)

REPO = Path(__file__).resolve().parents[2]
PRETRAINED = REPO / "rearrange" / "skills" / "pretrained"


def _nav_policy():
    from rearrange.tasks import task_observation_space
    from rearrange.tasks.actions import action_space

    obs_space, act_space = task_observation_space("nav", "state_rays"), action_space("nav", True)
    model = ModelConfig(backbone="none", rnn_hidden_size=16, state_mlp_hidden=(16,))
    return obs_space, act_space, model, build_policy(obs_space, act_space, model)


def _plain(model: ModelConfig) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(model).items()}


def _train_config(model: ModelConfig) -> dict:
    """What train_skill records: the composed config as plain data (lists for tuples)."""
    plain = _plain(model)
    task = {"task": "nav", "obs_preset": "state_rays", "base_movement": False,
            "max_episode_steps": 400, "thresholds": {"nav_dist": 0.5}}  # fmt: skip
    return {"skill": "nav", "algo": "ver", "base_movement": False, "model": plain, "task": task}


def test_a_trainer_checkpoint_round_trips_every_field(tmp_path):
    obs_space, act_space, model, policy = _nav_policy()
    learner = {"optimizer": {"lr": 2.5e-4}, "num_updates": 7}
    ckpt = SkillCheckpoint.from_training(
        _train_config(model), policy.state_dict(), obs_space, act_space,
        num_steps=4096, num_updates=7, wall_time_s=12.5,
        training=TrainingState(learner, rng_state()),
    )  # fmt: skip
    assert (ckpt.skill, ckpt.base_movement, ckpt.obs_preset) == ("nav", False, "state_rays")
    assert (ckpt.success_radius, ckpt.step_limit, ckpt.file_stem) == (0.5, 400, "nav")
    path = ckpt.save(tmp_path / "ck" / "latest.pt")
    assert [p.name for p in path.parent.iterdir()] == ["latest.pt"]  # no temp file left
    back = SkillCheckpoint.load(path)
    assert (back.skill, back.base_movement, back.obs_preset) == ("nav", False, "state_rays")
    assert (back.success_radius, back.step_limit) == (0.5, 400)
    assert (back.num_steps, back.num_updates, back.wall_time_s) == (4096, 7, 12.5)
    assert _plain(back.model) == _plain(model) and back.model.state_mlp_hidden == (16,)
    assert back.observation_space == obs_space and back.action_space == act_space
    assert back.config["algo"] == "ver" and back.manifest is None
    assert back.training.learner == learner
    assert np.array_equal(back.training.rng["numpy"][1], ckpt.training.rng["numpy"][1])
    assert back.weights.keys() == policy.state_dict().keys()
    for name, value in policy.state_dict().items():
        assert torch.equal(back.weights[name], value), name
    # a second save replaces the first atomically
    SkillCheckpoint.from_training(
        _train_config(model), policy.state_dict(), obs_space, act_space,
        num_steps=8192, num_updates=8, wall_time_s=20.0, training=ckpt.training,
    ).save(path)  # fmt: skip
    assert SkillCheckpoint.load(path).num_steps == 8192
    assert [p.name for p in path.parent.iterdir()] == ["latest.pt"]


def test_the_shipping_copy_has_fp16_weights_the_manifest_and_no_training_state(tmp_path):
    obs_space, act_space, model, policy = _nav_policy()
    ckpt = SkillCheckpoint.from_training(
        {**_train_config(model), "task": {"base_movement": True}, "skill": "pick"},
        policy.state_dict(), obs_space, act_space, num_steps=1, num_updates=1,
        wall_time_s=1.0, training=TrainingState({"optimizer": {}}, rng_state()),
    )  # fmt: skip
    assert ckpt.file_stem == checkpoint_stem("pick", True) == "pick_bm"
    shipped = SkillCheckpoint.load(ckpt.for_shipping({"skill": "pick"}).save(tmp_path / "p.pt"))
    assert shipped.training is None and shipped.manifest == {"skill": "pick"}
    assert all(v.dtype == torch.float16 for v in shipped.weights.values() if v.is_floating_point())
    with pytest.raises(CheckpointError, match="holds no training state") as info:
        load_for_resume(tmp_path / "p.pt")
    assert "\n" not in str(info.value) and "p.pt" in str(info.value)


SHIPPED = sorted(PRETRAINED.glob("*.pt"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_checkpoint_loads_with_its_fields(path):
    """Old-layout files (written before the typed format) convert on load; retrained ones
    are format 2 (`ship_skill export`)."""
    import json

    manifest = json.loads(path.with_suffix(".json").read_text())
    raw = torch.load(path, weights_only=False)
    ckpt = SkillCheckpoint.load(path)
    assert ckpt.skill == manifest["skill"] and ckpt.base_movement == manifest["base_movement"]
    assert ckpt.obs_preset == manifest["obs_preset"] and ckpt.file_stem == path.stem
    assert ckpt.num_steps == manifest["steps"] and ckpt.manifest == raw["manifest"] == manifest
    assert ckpt.training is None  # shipped: weights only
    # both navs trained with task.thresholds.nav_dist=0.5 (HAB masks their stop beyond 1 m)
    assert ckpt.success_radius == {"nav": 0.5, "nav_depth": 0.5}.get(path.stem)
    if "format" in raw:
        assert raw["version"] == 2 and ckpt.step_limit == raw["step_limit"]
        weights = weight_codec.decode(raw["weights"])  # int8 / int4 ones: dense again
        assert weight_codec.precision_of(raw["weights"]) == manifest.get("weights", "fp16")
    else:
        assert ckpt.model.policy == raw["config"]["model"]["policy"]
        assert ckpt.step_limit == raw["config"]["task"]["max_episode_steps"]
        weights = raw["policy"]
    assert ckpt.weights.keys() == weights.keys()
    for name, value in weights.items():  # the very same weights
        assert torch.equal(ckpt.weights[name], value) and ckpt.weights[name].dtype == value.dtype


def test_the_old_layout_converts_with_the_spec_defaults_where_it_records_less(tmp_path):
    obs_space, act_space, model, policy = _nav_policy()
    from rearrange.tasks.actions import action_space

    old = {"policy": policy.state_dict(), "learner": {"optimizer": {}}, "num_steps": 3,
           "num_updates": 1, "config": {"model": {"backbone": "none", "rnn_hidden_size": 16,
           "state_mlp_hidden": [16], "unknown_later_field": 1}},
           "observation_space": obs_space, "action_space": act_space, "rng": rng_state()}  # fmt: skip
    ckpt = from_legacy_layout(old, tmp_path / "x.pt", skill="nav")
    assert ckpt.skill == "nav" and _plain(ckpt.model) == _plain(model)
    assert ckpt.training.learner == old["learner"]
    assert (ckpt.base_movement, ckpt.step_limit, ckpt.success_radius) == (False, None, None)
    # no recorded base movement: a manipulation skill's action width tells
    ckpt = from_legacy_layout(
        {**old, "action_space": action_space("pick", True)}, Path("p"), "pick"
    )
    assert ckpt.base_movement and ckpt.obs_preset == "state_rays"
    assert not from_legacy_layout({**old, "action_space": action_space("pick", False)},
                                  Path("p"), "pick").base_movement  # fmt: skip
    with pytest.raises(CheckpointError, match="does not record its skill"):
        from_legacy_layout(old, tmp_path / "x.pt")


def test_base_movement_is_read_from_task_then_top_level():
    assert config_base_movement({"task": {"base_movement": True}, "base_movement": False})
    assert config_base_movement({"base_movement": True}) is True
    assert config_base_movement({"task": {}}) is None


def _load_error(path: Path, pattern: str, kind: type = CheckpointError) -> BaseException:
    with pytest.raises(kind, match=pattern) as info:
        SkillCheckpoint.load(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)
    return info.value


def test_missing_corrupt_and_foreign_checkpoints_raise_one_line_errors(tmp_path):
    err = _load_error(tmp_path / "nope.pt", "not found: pass an existing", FileNotFoundError)
    assert isinstance(err, CheckpointNotFoundError)
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    assert isinstance(_load_error(bad, "is corrupt .*restore an earlier copy"), ValueError)
    torch.save({"policy": {}}, tmp_path / "inc.pt")
    _load_error(tmp_path / "inc.pt", r"lacks \['learner'.*pass the right file")
    torch.save({"format": "rearrange.skill_checkpoint", "version": 99}, tmp_path / "newer.pt")
    _load_error(tmp_path / "newer.pt", "version 99; this rearrange reads .* version 2")
    torch.save([1, 2], tmp_path / "list.pt")
    _load_error(tmp_path / "list.pt", "holds a list, not a rearrange checkpoint")
    obs_space, act_space, model, policy = _nav_policy()
    wrong = {"policy": policy.state_dict(), "learner": {}, "num_steps": 0, "num_updates": 0,
             "config": {"skill": "nav"}, "observation_space": gym.spaces.Discrete(3),
             "action_space": act_space}  # fmt: skip
    torch.save(wrong, tmp_path / "wrong.pt")
    _load_error(tmp_path / "wrong.pt", "has an unusable observation_space")


def run_cli(args, **kw):
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    )
    cmd = [sys.executable, "-m", "rearrange.train_skill", "synthetic", *args]
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kw)  # fmt: skip


def test_resume_after_sigkill_continues_step_count(tmp_path):
    common = ["--serial", "--run-name", "r", f"runs_root={tmp_path}", "run.num_envs=2",
              "ver.rollout_steps=8", "run.checkpoint_every_steps=16"]  # fmt: skip
    ckpt = tmp_path / "synthetic" / "r" / "checkpoints" / "latest.pt"
    proc = run_cli([*common, "total_steps=1000000", "synthetic.step_time_ms=2"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if ckpt.exists() and SkillCheckpoint.load(ckpt).num_updates >= 2:
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    before = SkillCheckpoint.load(ckpt)
    assert before.num_steps == 16 * before.num_updates and before.skill == "synthetic"
    target = before.num_steps + 32
    out = run_cli([*common, "--resume", f"total_steps={target}"]).communicate(timeout=60)[0]
    after = SkillCheckpoint.load(ckpt)
    assert after.num_steps == target, out
    assert after.num_updates == before.num_updates + 2
    assert after.training.learner["num_updates"] == before.training.learner["num_updates"] + 2


def test_sigterm_stops_after_the_update_and_checkpoints(tmp_path):
    common = ["--serial", "--run-name", "s", f"runs_root={tmp_path}", "run.num_envs=2",
              "ver.rollout_steps=8", "run.checkpoint_every_steps=16000"]  # fmt: skip
    proc = run_cli([*common, "total_steps=1000000", "synthetic.step_time_ms=2"])
    tb = tmp_path / "synthetic" / "s" / "tb"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (tb.exists() and any(tb.iterdir())):
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    out = proc.communicate(timeout=60)[0]
    assert proc.returncode == 0, out
    state = SkillCheckpoint.load(tmp_path / "synthetic" / "s" / "checkpoints" / "latest.pt")
    assert state.num_updates >= 1 and state.num_steps == 16 * state.num_updates


def test_a_depth_policy_has_its_own_file_name():
    # A distilled depth student must not take the name of the state skill it learned from
    # (ship_skill export writes <file_stem>.pt into the package).
    assert checkpoint_stem("pick", False, depth=True) == "pick_depth"
    assert checkpoint_stem("pick", True, depth=True) == "pick_bm_depth"
    assert checkpoint_stem("pick", True) == "pick_bm"
