"""VER mini-batches (Fig. 3B): coverage, equal sizes, sequence layout, exact hidden states."""

from __future__ import annotations

import pytest
import torch

from rearrange.ver_backend.minibatch import find_sequences, iter_minibatches, partition_sizes
from ver_backend.learner_testlib import plain_rollout


def _rollout():
    # 3 envs, uneven counts (7, 3, 5 steps), episode ends inside env 0 and env 2.
    env_ids = [0, 1, 0, 2, 0, 0, 2, 1, 0, 2, 0, 2, 1, 0, 2]
    dones = [False] * len(env_ids)
    dones[4] = True  # env 0's 3rd step ends an episode
    dones[6] = True  # env 2's 2nd step ends an episode
    dones[13] = True  # env 0's last step ends an episode
    s = len(env_ids)
    return plain_rollout(
        rewards=[0.0] * s, values=[0.0] * s, dones=dones, env_ids=env_ids, bootstrap=[0, 0, 0]
    )


def test_sequences_are_single_episode_runs():
    order, starts, lengths = find_sequences(_rollout())
    # env 0: [0,2,4] [5,8,10,13]; env 1: [1,7,12]; env 2: [3,6] [9,11,14]
    seqs = [order[s : s + n].tolist() for s, n in zip(starts.tolist(), lengths.tolist())]
    assert seqs == [[0, 2, 4], [5, 8, 10, 13], [1, 7, 12], [3, 6], [9, 11, 14]]


def test_stale_to_fresh_change_starts_a_sequence():
    r = plain_rollout([0.0] * 4, [0.0] * 4, [False] * 4, [0, 0, 0, 0], bootstrap=[0])
    r.is_stale = torch.tensor([True, True, False, False])
    _, starts, lengths = find_sequences(r)
    assert starts.tolist() == [0, 2] and lengths.tolist() == [2, 2]


def test_partition_sizes_differ_by_at_most_one():
    assert partition_sizes(15, 4) == [4, 4, 4, 3]
    assert partition_sizes(2048, 2) == [1024, 1024]


@pytest.mark.parametrize("num_mb", [1, 2, 3, 4, 7])
def test_minibatches_cover_every_step_once_with_exact_layout(num_mb):
    r = _rollout()
    s = r.num_steps
    adv, ret, w = torch.arange(s) * 1.0, torch.arange(s) * 2.0, torch.arange(s) * 3.0
    gen = torch.Generator().manual_seed(num_mb)
    batches = list(iter_minibatches(r, adv, ret, w, num_mb, gen))
    assert len(batches) == num_mb
    seen = torch.cat([mb.step_indices for mb in batches])
    assert sorted(seen.tolist()) == list(range(s))  # every step exactly once
    sizes = [mb.step_indices.numel() for mb in batches]
    assert max(sizes) - min(sizes) <= 1
    for mb in batches:
        idx = mb.step_indices
        assert int(mb.seq_lengths.sum()) == idx.numel()
        assert mb.hidden.shape[0] == mb.seq_lengths.numel()
        torch.testing.assert_close(mb.advantages, adv[idx])
        torch.testing.assert_close(mb.returns, ret[idx])
        torch.testing.assert_close(mb.is_weights, w[idx])
        torch.testing.assert_close(mb.obs["state"], r.obs["state"][idx])
        start = 0
        for k, n in enumerate(mb.seq_lengths.tolist()):
            piece = idx[start : start + n]
            # one env, increasing (time) order, no episode end before the piece's last step
            assert len(set(r.env_ids[piece].tolist())) == 1
            assert piece.tolist() == sorted(piece.tolist())
            assert not r.dones[piece[:-1]].any()
            assert not r.episode_starts[piece[1:]].any()
            # hidden at the sequence start is the stored hidden_in of that step (exact split)
            torch.testing.assert_close(mb.hidden[k], r.hidden_in[piece[0]])
            start += n
        # prev_action reset to zero at episode starts, kept elsewhere
        starts = r.episode_starts[idx]
        assert (mb.prev_actions[starts] == 0).all() and (mb.prev_actions[~starts] == 1).all()


def test_shuffling_changes_sequence_order_between_epochs():
    r = _rollout()
    z = torch.zeros(r.num_steps)
    gen = torch.Generator().manual_seed(0)
    orders = {
        tuple(torch.cat([mb.step_indices for mb in iter_minibatches(r, z, z, z, 1, gen)]).tolist())
        for _ in range(10)
    }
    assert len(orders) > 1


def test_too_many_minibatches_is_a_clear_error():
    r = _rollout()
    z = torch.zeros(r.num_steps)
    with pytest.raises(ValueError, match="num_mini_batch=16"):
        next(iter_minibatches(r, z, z, z, 16))
