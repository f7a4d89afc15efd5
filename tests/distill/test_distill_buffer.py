"""The aggregated buffer: a round cut into chunks per env, FIFO eviction, compact depth,
sequences split at episode starts with the stored recurrent states, and a round collected
with a real student read back exactly (the chunked sequence forward reproduces its acting)."""

import numpy as np
import pytest
import torch
from gymnasium import spaces

from rearrange.distill.buffer import ChunkBuffer, Chunks, RoundStorage, split_sequences

SPACE = spaces.Dict(
    {"depth": spaces.Box(0.0, 10.0, (2, 2, 1), np.float32), "v": spaces.Box(-1, 1, (3,))}
)
R, H, A = 2, 4, 2


def _chunks(ids, size=2) -> Chunks:
    """Chunks whose every value is their id (depth id/10 m), for telling them apart."""
    k = len(ids)
    tag = np.asarray(ids, np.float32)[:, None]
    return Chunks(
        obs={"depth": np.broadcast_to(tag[:, :, None, None, None] / 10, (k, size, 2, 2, 1)).copy(),
             "v": np.broadcast_to(tag[:, :, None], (k, size, 3)).copy()},
        prev_actions=np.broadcast_to(tag[:, :, None], (k, size, A)).copy(),
        targets=np.broadcast_to(-tag[:, :, None], (k, size, A)).copy(),
        starts=np.zeros((k, size), bool),
        hidden=np.broadcast_to(tag[:, :, None], (k, R, H)).copy(),
    )  # fmt: skip


def _held(buf: ChunkBuffer) -> list[int]:
    return sorted(int(v) for v in buf.prev_actions[: len(buf), 0, 0])


def test_fifo_evicts_the_oldest_chunks():
    buf = ChunkBuffer(SPACE, A, (R, H), chunk_len=2, capacity=3)
    buf.add(_chunks([1, 2]))
    assert (len(buf), buf.steps, _held(buf)) == (2, 4, [1, 2])
    buf.add(_chunks([3, 4]))
    assert _held(buf) == [2, 3, 4]  # 1 was the oldest
    buf.add(_chunks([5, 6, 7, 8, 9]))  # more than fit: only the newest 3 stay
    assert _held(buf) == [7, 8, 9] and len(buf) == 3
    buf.add(_chunks([10]))
    assert _held(buf) == [8, 9, 10]


def test_a_round_is_cut_into_chunks_per_env_in_time_order():
    t, n, size = 4, 2, 2
    store = RoundStorage({"v": ((1,), np.dtype(np.float32))}, n, t, size, A, (R, H))
    for step in range(t):
        obs = {"v": np.array([[10 * step + env] for env in range(n)], np.float32)}
        hidden = np.full((n, R, H), 100.0 + step) + np.arange(n)[:, None, None]
        store.record(step, obs, np.zeros((n, A)), np.zeros((n, A)), np.array([step == 2, False]),
                     hidden if step % size == 0 else None)  # fmt: skip
    chunks = store.chunks()
    # env 0: steps (0, 1), (2, 3); then env 1: (0, 1), (2, 3)
    assert chunks.obs["v"][..., 0].tolist() == [[0, 10], [20, 30], [1, 11], [21, 31]]
    assert chunks.hidden[:, 0, 0].tolist() == [100, 102, 101, 103]  # the state entering each
    assert chunks.starts.tolist() == [[False, False], [True, False], [False, False]] + [[False] * 2]


def test_sequences_split_at_episode_starts_with_the_stored_state():
    starts = np.array([[False, False, True, False], [True, False, False, True]])
    hidden = np.stack([np.full((R, H), 1.0), np.full((R, H), 2.0)])
    seq_hidden, lengths = split_sequences(starts, hidden)
    assert lengths.tolist() == [2, 2, 3, 1]
    # chunk 0 continues an episode: its stored state; an episode starting inside: zeros;
    # chunk 1 begins an episode: zeros whatever was stored
    assert seq_hidden[:, 0, 0].tolist() == [1.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize(("dtype", "tolerance"), [("float16", 4e-3), ("uint8", 10.0 / 255 / 2)])
def test_written_chunks_read_back_as_one_minibatch(dtype, tolerance):
    buf = ChunkBuffer(SPACE, A, (R, H), chunk_len=2, capacity=4, depth_dtype=dtype)
    chunks = _chunks([3, 7])
    chunks.obs["depth"][1] = np.random.default_rng(0).uniform(0, 10, (2, 2, 2, 1))
    chunks.starts[1, 1] = True  # chunk 7's second step starts an episode
    buf.add(chunks)
    assert buf.obs["depth"].dtype == np.dtype(dtype)
    batch = buf.batch(np.array([1, 0]))  # chunk 7, then chunk 3
    assert batch.obs["v"][:, 0].tolist() == [7, 7, 3, 3]
    depth = np.concatenate([chunks.obs["depth"][1], chunks.obs["depth"][0]])
    assert np.abs(batch.obs["depth"].numpy() - depth).max() <= tolerance
    assert batch.obs["depth"].dtype == torch.float32
    assert batch.targets[:, 0].tolist() == [-7, -7, -3, -3]
    assert batch.seq_lengths.tolist() == [1, 1, 2]
    assert batch.hidden[:, 0, 0].tolist() == [7.0, 0.0, 3.0]


def test_a_sample_is_distinct_held_chunks_capped_at_the_count():
    buf = ChunkBuffer(SPACE, A, (R, H), chunk_len=2, capacity=8)
    buf.add(_chunks([1, 2, 3]))
    rng = np.random.default_rng(0)
    for _ in range(20):
        b = buf.sample(2, rng)
        assert len(b) == 2 and len(set(b.tolist())) == 2 and set(b.tolist()) <= {0, 1, 2}
    assert sorted(buf.sample(5, rng).tolist()) == [0, 1, 2]  # fewer held than asked: all


def test_an_epoch_visits_every_chunk_once():
    buf = ChunkBuffer(SPACE, A, (R, H), chunk_len=2, capacity=8)
    buf.add(_chunks([1, 2, 3, 4, 5]))
    batches = list(buf.epoch(2, np.random.default_rng(0)))
    assert [len(b) for b in batches] == [2, 2, 1]
    assert sorted(np.concatenate(batches).tolist()) == [0, 1, 2, 3, 4]


def test_chunked_forward_reproduces_the_students_acting():
    """β = 0: the executed action is the student's mean, stored as the next step's previous
    action; the sequence forward over stored chunks (hidden states from acting) gives the
    same means, so truncated BPTT trains exactly the policy that acted."""
    from rearrange.distill.collect import LockstepCollector
    from rearrange.distill.loss import sequence_distribution
    from rearrange.distill.teacher_labels import TeacherLabelFactory, TeacherSpec
    from rearrange.distill.trainer import student_space
    from rearrange.models import ModelConfig, build_policy
    from rearrange.runtime.env_worker import make_env_pool
    from rearrange.runtime.synthetic_env import SyntheticEnvConfig, SyntheticEnvFactory

    factory = TeacherLabelFactory(
        SyntheticEnvFactory(SyntheticEnvConfig(max_episode_steps=5, success_radius=0.0), 2),
        TeacherSpec("synthetic", None),
    )
    pool = make_env_pool(factory, 2, [0, 1], serial=True)
    torch.manual_seed(0)
    model = ModelConfig(backbone="none", rnn_hidden_size=8, state_mlp_hidden=[8],
                        action_mean_init_gain=1.0)  # fmt: skip
    policy = build_policy(student_space(pool.observation_space), pool.action_space, model)
    collector = LockstepCollector(pool, policy, torch.device("cpu"), 10.0)
    collector.start()
    hidden = (policy.num_recurrent_layers, policy.hidden_size)
    storage = RoundStorage(collector.obs_dtypes(), 2, 12, 4, 1, hidden)
    collector.collect(storage, lambda step: 0.0, 0)  # the student acts everywhere
    collector.collect(storage, lambda step: 0.0, 24)  # a second round: stored states ≠ 0
    buf = ChunkBuffer(student_space(pool.observation_space), 1, hidden, 4, 16)
    buf.add(storage.chunks())
    batch = buf.batch(np.arange(len(buf)))
    with torch.no_grad():
        mean = sequence_distribution(
            policy, batch.obs, batch.hidden, batch.prev_actions, batch.seq_lengths
        ).mean
    steps = buf.starts[: len(buf)].reshape(-1)
    following = np.flatnonzero(~steps)[np.flatnonzero(~steps) % 4 != 0]  # inside a chunk
    assert len(following) > 10
    assert torch.allclose(mean[following - 1], batch.prev_actions[following], atol=1e-5)
    assert buf.hidden[: len(buf)].any()  # chunks that continue an episode kept their state
    pool.close()
