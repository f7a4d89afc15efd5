"""The policy's fast paths compute what nn.LSTM computes: the cell-by-cell acting step, and
the padded-block evaluate_actions, one block or two of similar lengths (checked against the
packed-sequence path they replace)."""

import numpy as np
import pytest
import torch
from gymnasium import spaces

import rearrange.models.policy as policy_mod
from rearrange.models import ModelConfig, build_policy

OBS = spaces.Dict(
    {"a": spaces.Box(-1, 1, (3,), np.float32), "b": spaces.Box(-1, 1, (2,), np.float32)}
)
ACT = spaces.Box(-1, 1, (2,), np.float32)


def policy(layers=2):
    torch.manual_seed(0)
    cfg = ModelConfig(backbone="none", rnn_hidden_size=16, rnn_layers=layers, state_mlp_hidden=[8])
    return build_policy(OBS, ACT, cfg)


@pytest.mark.parametrize("layers", [1, 2])
def test_lstm_step_equals_nn_lstm_on_one_step(layers):
    pol = policy(layers)
    x = torch.randn(5, pol.rnn.input_size)
    hidden = torch.randn(5, 2 * layers, 16)
    out, hidden_out = pol._lstm_step(x, hidden)
    ref_out, (h, c) = pol.rnn(x.unsqueeze(0), pol._to_lstm(hidden))
    torch.testing.assert_close(out, ref_out[0], atol=1e-6, rtol=0)
    torch.testing.assert_close(hidden_out, pol._from_lstm(h, c), atol=1e-6, rtol=0)


def _evaluate(pol, lengths, limit, monkeypatch, buckets=1):
    monkeypatch.setattr(policy_mod, "PAD_WORK_LIMIT", limit)
    monkeypatch.setattr(policy_mod, "LENGTH_BUCKETS", buckets)
    torch.manual_seed(1)
    steps = int(sum(lengths))
    obs = {k: torch.randn(steps, *OBS[k].shape) for k in OBS}
    hidden = torch.randn(len(lengths), 4, 16)
    prev, actions = torch.randn(steps, 2), torch.randn(steps, 2)
    pol.zero_grad()
    values, log_probs, entropy = pol.evaluate_actions(
        obs, hidden, prev, actions, torch.tensor(lengths)
    )
    (values.sum() + log_probs.sum()).backward()
    grads = [p.grad.clone() for p in pol.parameters() if p.grad is not None]
    return values.detach(), log_probs.detach(), grads


def test_padded_block_matches_packed_sequences_with_gradients(monkeypatch):
    pol = policy()
    lengths = [5, 1, 7, 3, 7]  # T_max * K = 35 <= 3 * 23: the padded block
    padded = _evaluate(pol, lengths, 3, monkeypatch)
    packed = _evaluate(pol, lengths, 0, monkeypatch)  # limit 0: always packed
    torch.testing.assert_close(padded[0], packed[0], atol=1e-5, rtol=0)
    torch.testing.assert_close(padded[1], packed[1], atol=1e-5, rtol=0)
    for a, b in zip(padded[2], packed[2], strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_two_length_buckets_match_packed_sequences_with_gradients(monkeypatch):
    pol = policy()
    lengths = [2, 30, 1, 28, 3, 2, 29, 1]  # one block: 30 * 8 = 240 for 96 steps
    assert [g.tolist() for g in policy_mod.length_buckets(torch.tensor(lengths), 2)] == [
        [1, 6, 3],  # 30, 29, 28: 30 * 3 = 90
        [4, 0, 5, 2, 7],  # 3, 2, 2, 1, 1: 3 * 5 = 15; 105 in all
    ]
    blocks = []
    original = pol._padded_block
    monkeypatch.setattr(
        pol, "_padded_block", lambda x, h, n: blocks.append(n.tolist()) or original(x, h, n)
    )
    bucketed = _evaluate(pol, lengths, 3, monkeypatch, buckets=2)
    assert blocks == [[30, 29, 28], [3, 2, 2, 1, 1]]
    packed = _evaluate(pol, lengths, 0, monkeypatch)  # limit 0, one bucket: packed
    torch.testing.assert_close(bucketed[0], packed[0], atol=1e-5, rtol=0)
    torch.testing.assert_close(bucketed[1], packed[1], atol=1e-5, rtol=0)
    for a, b in zip(bucketed[2], packed[2], strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_length_buckets_split_only_where_it_saves_a_fifth():
    even = torch.tensor([10, 9, 10, 8])  # one block 40; best split 10 * 2 + 9 * 2 = 38
    assert [g.tolist() for g in policy_mod.length_buckets(even, 2)] == [[0, 2, 1, 3]]
    uneven = torch.tensor([10, 2, 2, 2])  # 40 against 10 + 2 * 3 = 16
    assert [g.tolist() for g in policy_mod.length_buckets(uneven, 2)] == [[0], [1, 2, 3]]
    assert [g.tolist() for g in policy_mod.length_buckets(uneven, 1)] == [[0, 1, 2, 3]]
    assert [g.tolist() for g in policy_mod.length_buckets(torch.tensor([4]), 2)] == [[0]]


def test_uneven_lengths_fall_back_to_packed(monkeypatch):
    """One long sequence among short ones: padding would cost > 3x, the packed path runs
    (on CUDA, or on CPU with one length bucket)."""
    monkeypatch.setattr(policy_mod, "LENGTH_BUCKETS", 1)
    pol = policy()
    calls = []
    original = policy_mod.pack_sequence
    monkeypatch.setattr(
        policy_mod, "pack_sequence", lambda *a, **k: calls.append(1) or original(*a, **k)
    )
    torch.manual_seed(2)
    lengths = [40, 1, 1, 1, 1, 1]  # 40 * 6 = 240 > 3 * 45
    steps = sum(lengths)
    obs = {k: torch.randn(steps, *OBS[k].shape) for k in OBS}
    pol.evaluate_actions(
        obs,
        torch.zeros(6, 4, 16),
        torch.zeros(steps, 2),
        torch.zeros(steps, 2),
        torch.tensor(lengths),
    )
    assert calls == [1]


@pytest.mark.parametrize("limit", [3, 0])  # the padded block, the packed sequences
def test_cpu_bf16_autocast_runs_the_lstm_in_fp32(limit, monkeypatch):
    """ppo.autocast_bf16 on a CPU learner: on CPUs without a bf16 LSTM kernel (no AMX /
    AVX512-BF16), oneDNN's LSTM fails on what CPU autocast hands it for an fp32 input (a depth
    policy's: the ResNet's bf16 embedding joined to fp32 vectors; a bare nn.LSTM under
    autocast raises "could not create a primitive descriptor" there, and runs where the CPU
    has the kernel); the policy runs its LSTM outside autocast, in fp32, so the update works
    on either and matches fp32 to bf16 precision."""
    monkeypatch.setattr(policy_mod, "PAD_WORK_LIMIT", limit)
    monkeypatch.setattr(policy_mod, "LENGTH_BUCKETS", 1)
    space = spaces.Dict({"depth": spaces.Box(0.0, 10.0, (32, 32, 1), np.float32), "b": OBS["b"]})
    torch.manual_seed(0)
    pol = build_policy(space, ACT, ModelConfig(rnn_hidden_size=8, rnn_layers=2))
    lengths = torch.tensor([5, 1, 7, 3, 7])
    steps = int(lengths.sum())
    obs = {"depth": torch.rand(steps, 32, 32, 1) * 5, "b": torch.randn(steps, 2)}
    args = (obs, torch.randn(5, 4, 8), torch.randn(steps, 2), torch.randn(steps, 2), lengths)
    fp32 = pol.evaluate_actions(*args)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        bf16 = pol.evaluate_actions(*args)
        bf16[1].float().sum().backward()  # the gradients flow through the fp32 LSTM
    assert pol.rnn.weight_hh_l0.grad is not None
    torch.testing.assert_close(bf16[0].float(), fp32[0].detach(), atol=5e-2, rtol=5e-2)
    torch.testing.assert_close(bf16[1].float(), fp32[1].detach(), atol=5e-2, rtol=5e-2)
