"""benchmarks/lstm_buckets.py: its simulated mini-batches are cut as the trainer cuts them, and
its three ways compute the same gradients (the benchmark checks them every round)."""

import numpy as np
import torch

from benchmarks import lstm_buckets as lb


def test_rollout_lengths_fill_equal_minibatches():
    for mean in (5, 40, 300):
        batches = lb.rollout_lengths(np.random.default_rng(3), mean)
        assert len(batches) == lb.MINIBATCHES
        assert [sum(b) for b in batches] == [lb.ENVS * lb.STEPS // lb.MINIBATCHES] * 2
        assert all(1 <= n <= lb.STEPS for b in batches for n in b)


def test_best_split_minimises_the_padded_work():
    # sorted 10, 9, 2, 1: split after 1 -> 10 + 9*3 = 37, after 2 -> 20 + 2*2 = 24, after 3 -> 30 + 1 = 31
    assert lb.best_split([2, 10, 1, 9]) == 2


def test_measure_runs_the_three_ways_to_the_same_gradients():
    r = lb.measure(30, rounds=1, hidden=8)
    assert set(r["times"]) == set(lb.WAYS) and all(len(v) == 1 for v in r["times"].values())
    assert r["work"]["steps"] == lb.ENVS * lb.STEPS
    assert r["work"]["bucketed"] <= r["work"]["padded"]


def test_bucketed_outputs_keep_the_sequence_order():
    torch.manual_seed(0)
    rnn = torch.nn.LSTM(lb.INPUT, 8)
    seqs = [torch.randn(n, lb.INPUT) for n in (3, 12, 1, 11, 2)]
    torch.testing.assert_close(lb.bucketed(rnn, seqs), lb.padded(rnn, seqs), atol=1e-6, rtol=0)
    torch.testing.assert_close(lb.packed(rnn, seqs), lb.padded(rnn, seqs), atol=1e-6, rtol=0)
