"""The bucketed acting step (rearrange/ver_backend/graph_acting.py) and `act(noise=...)`.

CPU: bucket lists, bucket lookup, padding that leaves the real rows unchanged, and the noise
argument of the policy. GPU (`-m gpu`): CUDA-graph outputs equal eager ones for every bucket,
and in-place weight updates reach the captured graphs.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces
from torch import nn

from rearrange.models import ModelConfig, build_policy
from rearrange.models.distributions import DiagGaussian
from rearrange.runtime.shared_memory import create_buffers
from rearrange.ver_backend import graph_acting
from rearrange.ver_backend.graph_acting import ActingStep, batch_buckets, bucket_for
from rearrange.ver_backend.inference import InferenceWorker
from rearrange.ver_backend.rollout_storage import RolloutStorage

ACTION_DIM = 4


def _state_space() -> spaces.Dict:
    return spaces.Dict(
        {
            "joint": spaces.Box(-np.inf, np.inf, (7,), np.float32),
            "goal": spaces.Box(-np.inf, np.inf, (3,), np.float32),
        }
    )


def _depth_space() -> spaces.Dict:
    return spaces.Dict(
        {
            "depth": spaces.Box(0.0, 10.0, (32, 32, 1), np.float32),
            "joint": spaces.Box(-np.inf, np.inf, (7,), np.float32),
        }
    )


def _policy(kind: str, seed: int = 0) -> tuple[nn.Module, spaces.Dict]:
    torch.manual_seed(seed)
    action_space = spaces.Box(-1.0, 1.0, (ACTION_DIM,), np.float32)
    if kind == "state":
        space = _state_space()
        config = ModelConfig(
            backbone="none",
            rnn_hidden_size=64,
            rnn_layers=1,
            state_mlp_hidden=[64],
            prev_action_embedding_size=16,
        )
    else:
        space, config = _depth_space(), ModelConfig(rnn_hidden_size=32, rnn_layers=2)
    policy = build_policy(space, action_space, config)
    with torch.no_grad():  # a visibly non-zero mean, so noise and mode differ clearly
        policy.action_head.mean.weight.normal_(0.0, 0.3)
    return policy, space


def _inputs(policy, space, batch: int, seed: int = 1, device: str = "cpu"):
    """Random obs, non-zero hidden and prev action, mixed not_done, and action noise."""
    gen = torch.Generator().manual_seed(seed)
    obs = {k: torch.rand((batch, *s.shape), generator=gen) * 5.0 for k, s in space.spaces.items()}
    hidden = torch.randn((batch, policy.num_recurrent_layers, policy.hidden_size), generator=gen)
    prev_action = torch.randn((batch, ACTION_DIM), generator=gen)
    not_done = torch.arange(batch) % 3 != 0
    noise = torch.randn((batch, ACTION_DIM), generator=gen)
    obs = {k: v.to(device) for k, v in obs.items()}
    return obs, hidden.to(device), prev_action.to(device), not_done.to(device), noise.to(device)


def _assert_outputs_close(got, expected, atol: float) -> None:
    for name, g, e in zip(("value", "action", "log_prob", "hidden"), got, expected, strict=True):
        assert g.shape == e.shape, name
        torch.testing.assert_close(g, e, atol=atol, rtol=atol, msg=lambda m, n=name: f"{n}: {m}")


# --- bucketing -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("max_batch", "expected"),
    [
        (1, (1,)),
        (2, (1, 2)),
        (3, (1, 2, 3)),
        (8, (1, 2, 4, 8)),
        (12, (1, 2, 4, 8, 12)),
        (16, (1, 2, 4, 8, 16)),
        (17, (1, 2, 4, 8, 16, 17)),
        (64, (1, 2, 4, 8, 16, 32, 64)),
    ],
)
def test_batch_buckets(max_batch, expected):
    assert batch_buckets(max_batch) == expected


def test_batch_buckets_rejects_empty():
    with pytest.raises(ValueError, match="max_batch=0"):
        batch_buckets(0)


def test_bucket_for_picks_the_smallest_bucket_that_fits():
    buckets = batch_buckets(12)
    got = {b: bucket_for(b, buckets) for b in range(1, 13)}
    assert got == {1: 1, 2: 2, 3: 4, 4: 4, 5: 8, 6: 8, 7: 8, 8: 8, 9: 12, 10: 12, 11: 12, 12: 12}


def test_bucket_for_errors():
    buckets = batch_buckets(12)
    with pytest.raises(ValueError, match="exceeds the largest bucket 12"):
        bucket_for(13, buckets)
    with pytest.raises(ValueError, match="batch size 0"):
        bucket_for(0, buckets)


# --- padding (eager, CPU) ------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "batches"), [("state", (1, 3, 5, 6, 9)), ("depth", (3, 5))])
def test_padding_leaves_the_real_rows_unchanged(kind, batches):
    policy, space = _policy(kind)
    padded = ActingStep(policy, space, ACTION_DIM, 12, "cpu", pad_to_bucket=True)
    seen: list[int] = []
    policy.critic.register_forward_hook(lambda m, i, o: seen.append(i[0].shape[0]))
    for batch in batches:
        obs, hidden, prev_action, not_done, noise = _inputs(policy, space, batch, seed=batch)
        with torch.no_grad():
            expected = policy.act(obs, hidden, prev_action, not_done, noise=noise)
        got = padded(obs, hidden, prev_action, not_done, noise=noise)
        _assert_outputs_close(got, expected, atol=1e-6)
    # The padded path really ran on the bucket sizes (the first run is the unpadded one).
    assert seen[1::2] == [bucket_for(b, padded.buckets) for b in batches]


def test_cpu_step_is_eager_and_unpadded():
    policy, space = _policy("state")
    step = ActingStep(policy, space, ACTION_DIM, 16, "cpu")
    assert not step.use_graphs
    obs, hidden, prev_action, not_done, _ = _inputs(policy, space, 5)
    seen: list[int] = []
    policy.critic.register_forward_hook(lambda m, i, o: seen.append(i[0].shape[0]))
    torch.manual_seed(7)
    got = step(obs, hidden, prev_action, not_done)
    torch.manual_seed(7)
    with torch.no_grad():
        expected = policy.act(obs, hidden, prev_action, not_done)
    _assert_outputs_close(got, expected, atol=0.0)  # same RNG draws as a plain act call
    assert seen == [5, 5]


def test_acting_step_errors():
    policy, space = _policy("state")
    step = ActingStep(policy, space, ACTION_DIM, 4, "cpu")
    obs, hidden, prev_action, not_done, noise = _inputs(policy, space, 5)
    with pytest.raises(ValueError, match="largest bucket 4"):
        step(obs, hidden, prev_action, not_done)
    obs, hidden, prev_action, not_done, noise = _inputs(policy, space, 3)
    with pytest.raises(ValueError, match="noise has shape"):
        step(obs, hidden, prev_action, not_done, noise=noise[:, :2])
    with pytest.raises(ValueError, match="lacks keys \\['goal'\\]"):
        step({"joint": obs["joint"]}, hidden, prev_action, not_done)
    with pytest.raises(ValueError, match="hidden has shape"):
        step(obs, hidden[:, :, :3], prev_action, not_done)
    with pytest.raises(ValueError, match="needs a CUDA device"):
        ActingStep(policy, space, ACTION_DIM, 4, "cpu", use_graphs=True)


def test_batch_norm_in_train_mode_is_rejected():
    with pytest.raises(ValueError, match="batch-norm in train mode"):
        ActingStep(nn.Sequential(nn.BatchNorm1d(3)), _state_space(), ACTION_DIM, 4, "cpu")


# --- the graph path's bookkeeping, with a stand-in graph (CPU) ----------------------------


class _EagerGraph:
    """Stands in for a CUDA graph on CPU: replay re-runs the captured call into its outputs."""

    def __init__(self, run) -> None:
        self.run, self.out, self.replays = run, run(), 0

    def replay(self) -> None:
        self.replays += 1
        for static, fresh in zip(self.out, self.run(), strict=True):
            static.copy_(fresh)


def _graph_step(monkeypatch, kind: str, max_batch: int = 12):
    def fake_capture(run, device):
        graph = _EagerGraph(run)
        return graph, graph.out

    monkeypatch.setattr(graph_acting, "capture", fake_capture)
    policy, space = _policy(kind)
    step = ActingStep(policy, space, ACTION_DIM, max_batch, "cpu")
    step.use_graphs = True  # the bucket logic of the CUDA path, without CUDA
    return policy, space, step


@pytest.mark.parametrize("kind", ["state", "depth"])
def test_graph_path_pads_copies_and_clones(monkeypatch, kind):
    policy, space, step = _graph_step(monkeypatch, kind)
    results = []
    for i, batch in enumerate((12, 5, 8, 3, 1, 11, 2, 7)):
        inputs = _inputs(policy, space, batch, seed=i)
        got = step(*inputs)
        with torch.no_grad():
            expected = policy.act(*inputs[:4], noise=inputs[4])
        _assert_outputs_close(got, expected, atol=1e-6)
        results.append((got, expected))
    assert sorted(step._graphs) == [1, 2, 4, 8, 12]
    assert step._graphs[8].graph.replays == 3  # batches 5, 8, 7
    for got, expected in results:  # returned rows are copies, not views of static outputs
        _assert_outputs_close(got, expected, atol=1e-6)


def test_graph_path_zeroes_the_padding_rows(monkeypatch):
    policy, space, step = _graph_step(monkeypatch, "state")
    step(*_inputs(policy, space, 8, seed=0))
    step(*_inputs(policy, space, 5, seed=1))
    bucket = step._graphs[8]
    for buf in (*bucket.obs.values(), bucket.hidden, bucket.prev_action, bucket.noise):
        assert bool((buf[5:] == 0).all()) and bool((buf[:5] != 0).any())
    assert not bool(bucket.not_done[5:].any())


def test_graph_path_draws_fresh_noise_per_call(monkeypatch):
    policy, space, step = _graph_step(monkeypatch, "state")
    obs, hidden, prev_action, not_done, _ = _inputs(policy, space, 3)
    v1, a1, lp1, _ = step(obs, hidden, prev_action, not_done)
    drawn = step._graphs[4].noise[:3].clone()
    v2, a2, _, _ = step(obs, hidden, prev_action, not_done)
    assert not torch.allclose(a1, a2)
    torch.testing.assert_close(v1, v2, rtol=0, atol=0)
    with torch.no_grad():
        _, expected, expected_lp, _ = policy.act(obs, hidden, prev_action, not_done, noise=drawn)
    torch.testing.assert_close(a1, expected)
    torch.testing.assert_close(lp1, expected_lp)


# --- act(noise=...) ------------------------------------------------------------------------


def test_given_noise_makes_act_deterministic():
    policy, space = _policy("state")
    obs, hidden, prev_action, not_done, noise = _inputs(policy, space, 6)
    with torch.no_grad():
        v1, a1, lp1, h1 = policy.act(obs, hidden, prev_action, not_done, noise=noise)
        v2, a2, lp2, h2 = policy.act(obs, hidden, prev_action, not_done, noise=noise)
        _, mean, _, _ = policy.act(obs, hidden, prev_action, not_done, deterministic=True)
    for x, y in ((v1, v2), (a1, a2), (lp1, lp2), (h1, h2)):
        torch.testing.assert_close(x, y, rtol=0, atol=0)
    std = policy.action_head.log_std.detach().exp()
    torch.testing.assert_close(a1, mean + std * noise)
    assert not torch.allclose(a1, mean)


def test_act_without_noise_still_samples_and_deterministic_ignores_noise():
    policy, space = _policy("state")
    obs, hidden, prev_action, not_done, noise = _inputs(policy, space, 6)
    with torch.no_grad():
        _, a1, _, _ = policy.act(obs, hidden, prev_action, not_done)
        _, a2, _, _ = policy.act(obs, hidden, prev_action, not_done)
        _, m1, _, _ = policy.act(obs, hidden, prev_action, not_done, deterministic=True)
        _, m2, _, _ = policy.act(
            obs, hidden, prev_action, not_done, deterministic=True, noise=noise * 10
        )
    assert not torch.allclose(a1, a2)
    torch.testing.assert_close(m1, m2, rtol=0, atol=0)


def test_sample_without_noise_draws_like_before():
    """sample() consumes the RNG exactly as the old `mean + randn_like(mean) * std` did."""
    mean, log_std = torch.randn(5, 3), torch.full((3,), -0.5)
    torch.manual_seed(3)
    got = DiagGaussian(mean, log_std).sample()
    torch.manual_seed(3)
    expected = mean + torch.randn_like(mean) * log_std.exp()
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    with pytest.raises(ValueError, match="noise has shape"):
        DiagGaussian(mean, log_std).sample(torch.zeros(5, 2))


# --- CUDA graphs ---------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("kind", ["state", "depth"])
def test_cuda_graphs_match_eager(kind):
    # fp32 convs (no TF32), so graph vs eager differences are rounding only.
    with torch.backends.cudnn.flags(enabled=True, benchmark=False, allow_tf32=False):
        policy, space = _policy(kind)
        policy = policy.cuda()
        step = ActingStep(policy, space, ACTION_DIM, 16, "cuda")
        assert step.use_graphs and step.buckets == (1, 2, 4, 8, 16)

        def check(batch: int, seed: int):
            inputs = _inputs(policy, space, batch, seed=seed, device="cuda")
            got = step(*inputs)
            with torch.no_grad():
                expected = policy.act(*inputs[:4], noise=inputs[4])
            _assert_outputs_close(got, expected, atol=1e-5)
            return got, inputs

        # Large then small batches: padding rows left from larger calls must not matter.
        for i, batch in enumerate((16, 5, 8, 3, 1, 2, 11, 4, 16, 7)):
            check(batch, seed=i)
        assert sorted(step._graphs) == [1, 2, 4, 8, 16]

        before, inputs = check(6, seed=100)
        with torch.no_grad():
            for p in policy.parameters():
                p.data.add_(0.01)  # in place, as optimizer.step and load_state_dict are
        after, _ = check(6, seed=100)  # the captured graph sees the new weights
        assert not torch.allclose(before[0], after[0])

        # Without noise, each replay draws fresh noise; the value does not depend on it.
        v1, a1, _, _ = step(*inputs[:4])
        v2, a2, _, _ = step(*inputs[:4])
        assert not torch.allclose(a1, a2)
        torch.testing.assert_close(v1, v2, rtol=0, atol=0)


# --- values through the acting step ----------------------------------------------------------


def test_final_and_bootstrap_values_go_through_the_acting_step():
    """With an ActingStep (the trainer's on CUDA), V(final obs) and the bootstrap values come
    from the acting step, not the eager value head, and equal the value head's."""
    policy, space = _policy("state")
    action_space = spaces.Box(-1.0, 1.0, (ACTION_DIM,), np.float32)
    buffers = create_buffers(space, action_space, 3, shared=False)
    storage = RolloutStorage(
        3, 4, space, action_space, policy.num_recurrent_layers, policy.hidden_size,
        layout=buffers.layout,
    )  # fmt: skip
    rng = np.random.default_rng(0)
    for key in space.spaces:
        buffers.final_obs[key][:] = rng.normal(size=buffers.final_obs[key].shape)
        buffers.obs[key][:] = rng.normal(size=buffers.obs[key].shape)
    storage.hidden.normal_()
    storage.prev_action.normal_()
    storage.not_done[:] = [True, False, True]
    calls = []

    class Counting(ActingStep):
        def __call__(self, obs, hidden, prev_action, not_done, noise=None):
            calls.append(int(prev_action.shape[0]))
            return super().__call__(obs, hidden, prev_action, not_done, noise)

    acting = Counting(policy, space, ACTION_DIM, 3, "cpu", pad_to_bucket=True)
    worker = InferenceWorker(policy, storage, buffers, acting)
    eager = InferenceWorker(policy, storage, buffers)
    got_final, want_final = worker.final_values([2, 0]), eager.final_values([2, 0])
    assert calls == [2]
    got_boot, want_boot = worker.values([0, 1, 2]), eager.values([0, 1, 2])
    assert calls == [2, 3]
    assert sorted(got_final) == [0, 2] and sorted(got_boot) == [0, 1, 2]
    for got, want in ((got_final, want_final), (got_boot, want_boot)):
        for e in want:
            assert got[e] == pytest.approx(want[e], abs=1e-5)
    assert got_final[0] != pytest.approx(got_boot[0], abs=1e-3)  # final obs, not the live one
