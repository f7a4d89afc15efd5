"""The shipped weights' storage (runtime/weight_codec.py): int8 per output row with fp32
scales, or int4 per group of a row with fp16 scales, for the large matrices, fp16 for the
rest, decoded to dense tensors on load."""

import pytest
import torch

from rearrange.runtime import weight_codec
from rearrange.runtime.checkpoint import CheckpointError, SkillCheckpoint
from rearrange.runtime.weight_codec import (
    INT4_SCALE_SUFFIX,
    INT4_SHAPE_SUFFIX,
    SCALE_SUFFIX,
    decode,
    encode,
    quantize_groups,
    quantize_rows,
)


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


def test_int4_groups_quantise_to_their_own_peak_and_pack_two_per_byte_by_hand():
    # one row of 6 in groups of 4: [1.75, -0.5, 0.25, 0] and [0, 0] padded with two zeros
    w = torch.tensor([[1.75, -0.5, 0.25, 0.0, 0.0, 0.0]])
    packed, scale = quantize_groups(w, group=4)
    # group peaks 1.75 and 0: scales 0.25 and 1 (an all-zero group); q = 7, -2, 1, 0 | 0, 0, 0, 0
    assert scale.dtype == torch.float16 and scale.tolist() == [[0.25, 1.0]]
    # codes q + 8 = 15, 6, 9, 8 | 8, 8, 8, 8; the even element in the low nibble
    assert packed.dtype == torch.uint8
    assert packed.tolist() == [[15 + 6 * 16, 9 + 8 * 16, 8 + 8 * 16, 8 + 8 * 16]]
    dense = weight_codec.dequantize_groups(packed, scale, [1, 6])
    assert dense.tolist() == [[1.75, -0.5, 0.25, 0.0, 0.0, 0.0]]


def test_int4_round_trips_within_half_a_group_step_at_under_a_third_of_fp16():
    torch.manual_seed(0)
    weights = {
        "conv.weight": torch.randn(64, 32, 3, 3),  # rows of 288 = 9 groups of 32
        "lstm.weight_hh": torch.randn(80, 70),  # rows of 70: 3 groups, the last one padded
        "conv.bias": torch.randn(64),
    }
    stored = encode(weights, "int4")
    assert weight_codec.precision_of(stored) == "int4"
    assert stored["conv.weight"].shape == (64, 144) and stored["conv.bias"].dtype == torch.float16
    assert stored["lstm.weight_hh" + INT4_SCALE_SUFFIX].shape == (80, 3)
    assert stored["lstm.weight_hh" + INT4_SHAPE_SUFFIX].tolist() == [80, 70]
    dense = decode(stored)
    for name in ("conv.weight", "lstm.weight_hh"):
        ref = weights[name]
        assert dense[name].shape == ref.shape and dense[name].dtype == torch.float32
        flat = torch.nn.functional.pad(ref.reshape(ref.shape[0], -1), (0, (-ref[0].numel()) % 32))
        step = flat.reshape(ref.shape[0], -1, 32).abs().amax(dim=2, keepdim=True) / 7
        half = (step / 2).expand(-1, -1, 32).reshape(ref.shape[0], -1)[:, : ref[0].numel()]
        err = (dense[name] - ref).reshape(ref.shape[0], -1).abs()
        assert bool((err <= half * 1.001 + 1e-7).all()), name  # + the fp16 scale's rounding
    big = torch.randn(256, 512)
    fp16, int4 = encode({"w": big}, "fp16"), encode({"w": big}, "int4")
    nbytes = sum(v.numel() * v.element_size() for v in int4.values())
    assert nbytes < fp16["w"].numel() * 2 / 3  # 0.5 byte + 2 bytes per 32: 0.5625 of a byte


def test_an_unknown_precision_and_a_damaged_layout_are_refused():
    with pytest.raises(ValueError, match="weight precision 'int3': use one of fp16, int8, int4"):
        encode({"w": torch.ones(2, 2)}, "int3")
    with pytest.raises(ValueError, match="has no weight tensor"):
        decode({"w" + SCALE_SUFFIX: torch.ones(2, 1)})
    with pytest.raises(ValueError, match="is torch.float16, not int8"):
        decode({"w": torch.ones(2, 2).half(), "w" + SCALE_SUFFIX: torch.ones(2, 1)})
    stored = encode({"w": torch.randn(64, 64)}, "int4")  # 4096: quantised
    with pytest.raises(ValueError, match="lacks its scales or its shape"):
        decode({k: v for k, v in stored.items() if not k.endswith(INT4_SHAPE_SUFFIX)})
    with pytest.raises(ValueError, match=r"do not make a tensor of shape \(64, 96\)"):
        decode({**stored, "w" + INT4_SHAPE_SUFFIX: torch.tensor([64, 96])})
    with pytest.raises(ValueError, match="do not make a tensor"):
        decode({**stored, "w": stored["w"].to(torch.int8)})


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


def test_an_int4_shipped_file_is_smaller_than_int8_and_loads_dense(tmp_path):
    ckpt, policy = _student_checkpoint(tmp_path)
    int8 = ckpt.for_shipping({"skill": "pick"}, "int8").save(tmp_path / "b.pt")
    int4 = ckpt.for_shipping({"skill": "pick"}, "int4").save(tmp_path / "c.pt")
    assert int4.stat().st_size < 0.75 * int8.stat().st_size
    loaded = SkillCheckpoint.load(int4)
    assert set(loaded.weights) == set(policy.state_dict())
    policy.load_state_dict(loaded.weights)


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
