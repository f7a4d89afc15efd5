"""The restore checks every trainer shares (runtime.checkpoint.require_algo, load_weights):
a checkpoint of another trainer or another model is refused in one line naming the file and
the fix, and a VER run resumed with another model config exits with that line."""

from pathlib import Path

import pytest
import torch

from rearrange.runtime.checkpoint import (
    CheckpointError,
    SkillCheckpoint,
    TrainingState,
    load_weights,
    require_algo,
)
from rearrange.train_skill import main


def test_load_weights_loads_matching_weights():
    source, target = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    load_weights(target, source.state_dict(), "checkpoint x.pt", "policy", "fix it")
    assert torch.equal(target.weight, source.weight) and torch.equal(target.bias, source.bias)


def test_load_weights_names_the_mismatch_and_the_fix():
    with pytest.raises(CheckpointError) as err:
        load_weights(torch.nn.Linear(3, 4), torch.nn.Linear(3, 2).state_dict(),
                     "checkpoint x.pt", "student", "use its model config")  # fmt: skip
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("checkpoint x.pt does not fit this run's student (")
    assert "size mismatch for bias" in message and message.endswith("): use its model config")


def test_require_algo_accepts_its_own_key_and_refuses_others():
    require_algo(Path("a.pt"), TrainingState(learner={"algo": "pql"}, rng={}), "pql", "fix")
    for learner in ({"algo": "distill"}, {}):
        with pytest.raises(CheckpointError, match=r"^checkpoint a.pt was not written by "
                                                  r"--algo pql: start anew$"):  # fmt: skip
            require_algo(Path("a.pt"), TrainingState(learner=learner, rng={}), "pql", "start anew")


def test_a_ver_run_resumed_with_another_model_is_refused_in_one_line(tmp_path, capsys):
    common = ["synthetic", "--serial", "--run-name", "m", f"runs_root={tmp_path}",
              "ver.num_envs=2", "ver.rollout_steps=8"]  # fmt: skip
    assert main([*common, "total_steps=16", "model.state_mlp_hidden=[16]"]) == 0
    ckpt = tmp_path / "synthetic" / "m" / "checkpoints" / "latest.pt"
    assert SkillCheckpoint.load(ckpt).num_steps == 16
    capsys.readouterr()
    rc = main([*common, "--resume", "total_steps=32", "model.state_mlp_hidden=[8]"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc == 1
    assert f"checkpoint {ckpt} does not fit this run's policy (" in err
    assert err.endswith("resume with the model config it was trained with")
    assert SkillCheckpoint.load(ckpt).num_steps == 16  # nothing was overwritten
