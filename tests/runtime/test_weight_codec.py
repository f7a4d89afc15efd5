"""The shipped weights' storage (runtime/weight_codec.py): int8 per output row with fp32
scales for the large matrices, fp16 for the rest, decoded to dense tensors on load."""

import pytest
import torch

from rearrange.runtime import weight_codec
from rearrange.runtime.checkpoint import CheckpointError, SkillCheckpoint
from rearrange.runtime.weight_codec import SCALE_SUFFIX, decode, encode, quantize_rows


def test_rows_quantise_to_their_own_peak_by_hand():
    w = torch.tensor([[0.5, -1.0, 0.25], [0.0, 0.0, 0.0], [2.54, 1.27, -0.01]])
    q, scale = quantize_rows(w)
    # row peaks 1.0 and 2.54: scales 1/127 and 0.02; an all-zero row gets scale 1
    assert torch.allclose(scale.flatten(), torch.tensor([1 / 127, 1.0, 0.02]))
    assert q.dtype == torch.int8
    assert q.tolist() == [[64, -127, 32], [0, 0, 0], [127, 64, -0]]  # 63.5 -> 64, 31.75 -> 32
    assert scale.shape == (3, 1)


def test_encode_keeps_small_tensors_fp16_and_ints_as_they_are():
    torch.manual_seed(0)
    weights = {
        "conv.weight": torch.randn(64, 32, 3, 3),  # 18,432 elements: int8
        "conv.bias": torch.randn(64),  # small: fp16
        "fc.weight": torch.randn(8, 16),  # 128 elements: fp16
        "steps": torch.tensor(7),  # not floating point: as is
    }
    stored = encode(weights, "int8")
    assert stored["conv.weight"].dtype == torch.int8
    assert stored["conv.weight" + SCALE_SUFFIX].shape == (64, 1, 1, 1)
    assert stored["conv.bias"].dtype == stored["fc.weight"].dtype == torch.float16
    assert stored["steps"].dtype == torch.int64 and int(stored["steps"]) == 7
    dense = decode(stored)
    assert set(dense) == set(weights)
    # each int8 weight within half a step (scale / 2) of the original
    err = (dense["conv.weight"] - weights["conv.weight"]).abs()
    half_step = weights["conv.weight"].abs().amax(dim=(1, 2, 3), keepdim=True) / 127 / 2
    assert bool((err <= half_step + 1e-7).all())
    assert weight_codec.precision_of(stored) == "int8"
    assert weight_codec.precision_of(encode(weights, "fp16")) == "fp16"


def test_an_unknown_precision_and_a_damaged_layout_are_refused():
    with pytest.raises(ValueError, match="weight precision 'int4': use one of fp16, int8"):
        encode({"w": torch.ones(2, 2)}, "int4")
    with pytest.raises(ValueError, match="has no weight tensor"):
        decode({"w" + SCALE_SUFFIX: torch.ones(2, 1)})
    with pytest.raises(ValueError, match="is torch.float16, not int8"):
        decode({"w": torch.ones(2, 2).half(), "w" + SCALE_SUFFIX: torch.ones(2, 1)})


def _student_checkpoint(tmp_path):
    """A small depth student (ResNet at width 8 on 32x32 depth, 64-unit LSTM), as a trainer
    saves one."""
    from dataclasses import asdict

    from rearrange.models import ModelConfig, build_policy
    from rearrange.runtime.checkpoint import TrainingState, rng_state
    from rearrange.tasks import task_observation_space
    from rearrange.tasks.actions import action_space

    obs_space = task_observation_space("pick", "depth", depth_size=32, base_movement=False)
    act_space = action_space("pick", False)
    model = ModelConfig(base_width=8, groupnorm_groups=4, rnn_hidden_size=64)
    policy = build_policy(obs_space, act_space, model)
    config = {"skill": "pick", "model": asdict(model),
              "task": {"task": "pick", "obs_preset": "depth", "base_movement": False}}  # fmt: skip
    return SkillCheckpoint.from_training(
        config, policy.state_dict(), obs_space, act_space, num_steps=1, num_updates=1,
        wall_time_s=1.0, training=TrainingState({}, rng_state()),
    ), policy  # fmt: skip


def test_an_int8_shipped_file_is_smaller_and_loads_dense(tmp_path):
    ckpt, policy = _student_checkpoint(tmp_path)
    fp16 = ckpt.for_shipping({"skill": "pick"}).save(tmp_path / "a.pt")
    int8 = ckpt.for_shipping({"skill": "pick"}, "int8").save(tmp_path / "b.pt")
    assert int8.stat().st_size < 0.75 * fp16.stat().st_size
    loaded = SkillCheckpoint.load(int8)
    assert set(loaded.weights) == set(policy.state_dict())
    assert all(v.dtype != torch.int8 for v in loaded.weights.values())
    policy.load_state_dict(loaded.weights)  # what LearnedSkill does: it fits the network


def test_a_damaged_int8_file_is_one_line(tmp_path):
    ckpt, _ = _student_checkpoint(tmp_path)
    path = ckpt.for_shipping({"skill": "pick"}, "int8").save(tmp_path / "b.pt")
    state = torch.load(path, weights_only=False)
    key = next(k for k in state["weights"] if k.endswith(SCALE_SUFFIX))
    del state["weights"][key[: -len(SCALE_SUFFIX)]]
    torch.save(state, path)
    with pytest.raises(CheckpointError, match="has damaged weights") as info:
        SkillCheckpoint.load(path)
    assert "\n" not in str(info.value) and "ship_skill" in str(info.value)
