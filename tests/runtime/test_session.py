"""RunSession: a save writes latest.pt and its snapshot with the trainer's learner state, a
new session resumes from it (the trainer's restore first, then the RNG and the wall time),
and shutdown closes the logger, then the trainer's resources in order."""

from __future__ import annotations

import random

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import nn

from rearrange.runtime.checkpoint import CheckpointError, SkillCheckpoint
from rearrange.runtime.run import RunConfig, RunSetup
from rearrange.runtime.session import RunSession

OBS = gym.spaces.Dict({"state": gym.spaces.Box(-1, 1, (3,), np.float32)})
ACT = gym.spaces.Box(-1, 1, (2,), np.float32)


def _session(tmp_path, resume: bool = True, keep: int = 2) -> RunSession:
    run = RunConfig(keep_checkpoints=keep)
    setup = RunSetup(env_factory=lambda i: None, run_dir=tmp_path, config_dict={}, resume=resume)
    return RunSession(run, setup)


def test_save_then_resume_restores_the_trainer_rng_and_wall_time(tmp_path):
    session = _session(tmp_path)
    session.start()
    policy = nn.Linear(3, 2)
    for steps in (100, 200, 300):
        path = session.save(policy, OBS, ACT, num_steps=steps, num_updates=steps // 100,
                            learner={"algo": "test", "n": steps})  # fmt: skip
    session.shutdown()
    assert path == tmp_path / "checkpoints" / "latest.pt" == session.last_checkpoint
    snaps = sorted(p.name for p in path.parent.glob("ckpt_*.pt"))
    assert snaps == ["ckpt_0000000200.pt", "ckpt_0000000300.pt"]  # the newest keep=2
    saved = SkillCheckpoint.load(path)
    assert (saved.num_steps, saved.num_updates, saved.training.learner) == (
        300, 3, {"algo": "test", "n": 300},
    )  # fmt: skip
    draws = (random.random(), np.random.rand(), torch.rand(1).item())

    later, seen = _session(tmp_path), []
    later.start()

    def restore(p, ckpt, training):
        seen.append((p, ckpt.num_steps, training.learner["n"]))
        torch.rand(5)  # what the trainer draws here is overwritten by the saved RNG

    assert later.resume(restore).num_steps == 300
    assert seen == [(path, 300, 300)]
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == draws
    assert later.last_checkpoint == path
    assert later.wall_time_s >= saved.wall_time_s
    later.shutdown()


def test_nothing_to_resume_and_a_refused_checkpoint(tmp_path):
    assert _session(tmp_path).resume(lambda *a: pytest.fail("no checkpoint")) is None
    _session(tmp_path).save(nn.Linear(3, 2), OBS, ACT, num_steps=1, num_updates=1, learner={})
    assert _session(tmp_path, resume=False).resume(lambda *a: pytest.fail("resume=False")) is None

    def refuse(path, ckpt, training):
        raise CheckpointError(f"checkpoint {path} is not mine")

    session = _session(tmp_path)
    with pytest.raises(CheckpointError, match="not mine"):
        session.resume(refuse)
    assert session.last_checkpoint is None


def test_shutdown_closes_the_logger_then_the_resources_in_order(tmp_path):
    closed = []

    class Res:
        def __init__(self, name):
            self.name = name

        def close(self):
            closed.append(self.name)

    session = _session(tmp_path)
    session.start()
    session.logger = Res("logger")
    session.shutdown(Res("learners"), None, Res("pool"), Res("replay"))
    assert closed == ["logger", "learners", "pool", "replay"]
