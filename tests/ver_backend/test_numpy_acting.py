"""The NumPy acting step of state policies on CPU (rearrange/ver_backend/numpy_acting.py).

Its outputs against `policy.act` for the same inputs and noise, over the policy options it
covers; the RNG it consumes; the weight copy and its refresh (by hand and by the inference
worker at each policy version); the policies it refuses; and the rollout storage's NumPy
writes on CPU against its torch path.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

from rearrange.models import ModelConfig, build_policy
from rearrange.runtime.shared_memory import create_buffers
from rearrange.ver_backend.inference import InferenceWorker
from rearrange.ver_backend.numpy_acting import NumpyActingStep, numpy_acting_supported
from rearrange.ver_backend.rollout_storage import RolloutStorage

ACTION_DIM = 4
SPACE = spaces.Dict(
    {
        "joint": spaces.Box(-np.inf, np.inf, (7,), np.float32),
        "goal": spaces.Box(-np.inf, np.inf, (3,), np.float32),
        "holding": spaces.MultiBinary(1),
    }
)
ACTIONS = spaces.Box(-1.0, 1.0, (ACTION_DIM,), np.float32)

CONFIGS = {
    "cpu_profile": {"rnn_hidden_size": 64, "rnn_layers": 1, "state_mlp_hidden": [64],
                    "prev_action_embedding_size": 16, "action_log_std_init": -1.0},
    "two_layers": {"rnn_hidden_size": 32, "rnn_layers": 2, "state_mlp_hidden": [48, 24],
                   "prev_action_embedding_size": 8},
    "squashed_no_prev_action": {"rnn_hidden_size": 16, "rnn_layers": 1, "state_mlp_hidden": [],
                                "prev_action_embedding_size": 8, "squash_mean": True,
                                "prev_action_input": False},
    "clamped_log_std": {"rnn_hidden_size": 16, "rnn_layers": 1, "state_mlp_hidden": [16],
                        "prev_action_embedding_size": 4, "action_log_std_init": -9.0},
}  # fmt: skip


def _policy(name: str = "cpu_profile", seed: int = 0):
    torch.manual_seed(seed)
    policy = build_policy(SPACE, ACTIONS, ModelConfig(backbone="none", **CONFIGS[name]))
    with torch.no_grad():  # non-zero biases and a visible mean, so every term counts
        for p in policy.parameters():
            p.add_(0.05 * torch.randn_like(p))
    return policy


def _inputs(policy, batch: int, seed: int = 1, all_live: bool = False):
    gen = torch.Generator().manual_seed(seed)
    obs = {
        "joint": torch.randn(batch, 7, generator=gen) * 2,
        "goal": torch.randn(batch, 3, generator=gen),
        "holding": (torch.rand(batch, 1, generator=gen) > 0.5).to(torch.int8),
    }
    hidden = torch.randn(batch, policy.num_recurrent_layers, policy.hidden_size, generator=gen)
    prev_action = torch.randn(batch, ACTION_DIM, generator=gen)
    not_done = torch.ones(batch, dtype=torch.bool) if all_live else torch.arange(batch) % 3 != 0
    noise = torch.randn(batch, ACTION_DIM, generator=gen)
    return obs, hidden, prev_action, not_done, noise


def _assert_close(got, want, atol=1e-5):
    for name, g, w in zip(("value", "action", "log_prob", "hidden"), got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype == torch.float32, name
        torch.testing.assert_close(g, w, atol=atol, rtol=atol, msg=lambda m, n=name: f"{n}: {m}")


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("batch", [1, 5, 8])
@pytest.mark.parametrize("all_live", [False, True])
def test_matches_policy_act_with_the_same_noise(name, batch, all_live):
    policy = _policy(name)
    step = NumpyActingStep(policy)
    obs, hidden, prev_action, not_done, noise = _inputs(policy, batch, all_live=all_live)
    with torch.inference_mode():
        want = policy.act(obs, hidden, prev_action, not_done, noise=noise)
        got = step(obs, hidden, prev_action, not_done, noise=noise)
        _assert_close(got, want)
        mode = step(obs, hidden, prev_action, not_done, deterministic=True)
        _assert_close(mode, policy.act(obs, hidden, prev_action, not_done, deterministic=True))
    assert not torch.equal(got[1], mode[1])  # the noise moved the action off the mean


def test_the_log_std_clamp_is_applied():
    policy = _policy("clamped_log_std")
    low = policy.action_head.log_std_bounds[0]
    assert float(policy.action_head.log_std.detach().max()) < low  # below the bound: clamped
    obs, hidden, prev_action, not_done, noise = _inputs(policy, 4)
    with torch.inference_mode():
        value, action, log_prob, _ = NumpyActingStep(policy)(
            obs, hidden, prev_action, not_done, deterministic=True
        )
    half_log_2pi = 0.5 * np.log(2 * np.pi)
    np.testing.assert_allclose(log_prob.numpy(), -ACTION_DIM * (low + half_log_2pi), rtol=1e-6)


def test_draws_the_same_random_numbers_as_act():
    """Without `noise`, both paths draw [B, A] standard normals from torch's generator: the
    same seed gives the same actions, and the generator ends in the same state."""
    policy = _policy()
    step = NumpyActingStep(policy)
    obs, hidden, prev_action, not_done, _ = _inputs(policy, 6)
    with torch.inference_mode():
        torch.manual_seed(11)
        want = policy.act(obs, hidden, prev_action, not_done)
        after_eager = torch.rand(3)
        torch.manual_seed(11)
        got = step(obs, hidden, prev_action, not_done)
        after_numpy = torch.rand(3)
    _assert_close(got, want)
    assert torch.equal(after_eager, after_numpy)


def test_weights_are_a_copy_until_refresh():
    policy = _policy()
    step = NumpyActingStep(policy)
    obs, hidden, prev_action, not_done, noise = _inputs(policy, 3)
    with torch.no_grad():
        policy.critic.bias.add_(1.0)
        policy.rnn.weight_hh_l0.mul_(1.5)
    with torch.inference_mode():
        want = policy.act(obs, hidden, prev_action, not_done, noise=noise)
        stale = step(obs, hidden, prev_action, not_done, noise=noise)
        assert (want[0] - stale[0]).abs().min() > 0.5  # the old weights: the bias is 1 lower
        step.refresh()
        _assert_close(step(obs, hidden, prev_action, not_done, noise=noise), want)


def test_input_errors_name_the_problem():
    policy = _policy()
    step = NumpyActingStep(policy)
    obs, hidden, prev_action, not_done, noise = _inputs(policy, 3)
    with pytest.raises(ValueError, match=r"lacks keys \['goal'\]"):
        step({k: v for k, v in obs.items() if k != "goal"}, hidden, prev_action, not_done)
    with pytest.raises(ValueError, match=r"hidden has shape \(2, 2, 64\), expected \(3, 2, 64\)"):
        step(obs, hidden[:2], prev_action, not_done)
    with pytest.raises(ValueError, match=r"noise has shape \(3, 2\)"):
        step(obs, hidden, prev_action, not_done, noise=noise[:, :2])


def test_visual_policies_are_refused():
    space = spaces.Dict(
        {
            "depth": spaces.Box(0.0, 10.0, (32, 32, 1), np.float32),
            "joint": spaces.Box(-np.inf, np.inf, (7,), np.float32),
        }
    )
    policy = build_policy(space, ACTIONS, ModelConfig(rnn_hidden_size=16, rnn_layers=1))
    assert numpy_acting_supported(_policy())
    assert not numpy_acting_supported(policy)
    assert not numpy_acting_supported(torch.nn.Linear(3, 3))
    with pytest.raises(ValueError, match="not a state-only RecurrentGaussianPolicy"):
        NumpyActingStep(policy)


def _worker_setup(policy, num_envs=3):
    buffers = create_buffers(SPACE, ACTIONS, num_envs, shared=False)
    storage = RolloutStorage(
        num_envs, 4, SPACE, ACTIONS, policy.num_recurrent_layers, policy.hidden_size,
        layout=buffers.layout,
    )  # fmt: skip
    rng = np.random.default_rng(0)
    for key in SPACE.spaces:
        buffers.obs[key][:] = rng.normal(size=buffers.obs[key].shape) > 0 if key == "holding" else (
            rng.normal(size=buffers.obs[key].shape))  # fmt: skip
        buffers.final_obs[key][:] = buffers.obs[key] * 0.5
    return buffers, storage


def test_inference_worker_refreshes_once_per_policy_version():
    policy = _policy()
    buffers, storage = _worker_setup(policy)
    refreshes = []

    class Counting(NumpyActingStep):
        def refresh(self):
            refreshes.append(1)
            super().refresh()

    step = Counting(policy)
    refreshes.clear()  # the constructor's own copy
    worker = InferenceWorker(policy, storage, buffers, step)
    worker.act([0, 1])
    worker.act([2])
    assert len(refreshes) == 1  # first act of version 0
    with torch.no_grad():
        policy.critic.bias.add_(2.0)  # an "update"
    worker.policy_version += 1
    storage.complete_steps(np.array([0]), np.zeros(1), np.zeros(1, bool), np.zeros(1, bool),
                           np.zeros(1))  # fmt: skip
    worker.act([0])
    assert len(refreshes) == 2
    slot = int(storage.pending[0])
    hidden, prev_action, not_done = storage.hidden_in[slot : slot + 1], (
        storage.prev_actions[slot : slot + 1]), torch.ones(1, dtype=torch.bool)  # fmt: skip
    obs = {k: torch.from_numpy(np.asarray(buffers.obs[k][[0]])) for k in SPACE.spaces}
    with torch.no_grad():
        want = policy.get_value(obs, hidden, prev_action, not_done)
    assert float(storage.values[slot]) == pytest.approx(float(want), abs=1e-5)  # new weights


def test_values_go_through_the_numpy_step_and_match_the_value_head():
    policy = _policy()
    buffers, storage = _worker_setup(policy)
    storage.hidden.normal_()
    storage.prev_action.normal_()
    storage.not_done[:] = [True, False, True]
    worker = InferenceWorker(policy, storage, buffers, NumpyActingStep(policy))
    eager = InferenceWorker(policy, storage, buffers)
    for got, want in ((worker.final_values([2, 0]), eager.final_values([2, 0])),
                      (worker.values([0, 1, 2]), eager.values([0, 1, 2]))):  # fmt: skip
        assert sorted(got) == sorted(want)
        for e in want:
            assert got[e] == pytest.approx(want[e], abs=1e-5)


def test_storage_numpy_writes_match_the_torch_path():
    """On CPU the storage writes the policy's fields through NumPy views; the staged path
    (CUDA's, run on CPU) writes them with torch ops. Same calls, same buffers."""
    host = RolloutStorage(3, 3, SPACE, ACTIONS, 2, 5)
    torch_path = RolloutStorage(3, 3, SPACE, ACTIONS, 2, 5, staged=True)
    assert host._np is not None and torch_path._np is None
    rows = host.layout.pack(
        {"joint": np.arange(21, dtype=np.float32).reshape(3, 7),
         "goal": np.ones((3, 3), np.float32), "holding": np.array([[1], [0], [1]], np.int8)}
    )  # fmt: skip
    gen = torch.Generator().manual_seed(0)
    outputs = [
        (torch.randn(b, generator=gen), torch.randn(b, ACTION_DIM, generator=gen),
         torch.randn(b, generator=gen), torch.randn(b, 2, 5, generator=gen))
        for b in (2, 1, 3, 2)
    ]  # fmt: skip
    plan = ([2, 0], [1], [0, 1, 2], [1, 0])  # the last: env 0 starts an episode, env 1 not
    ends = ([2], [0, 1], [0, 1, 2], [1])  # which envs' steps complete after each batch
    for s in (host, torch_path):
        for k, (ids, out, done_ids) in enumerate(zip(plan, outputs, ends, strict=True)):
            batch = s.stage(ids, rows)
            s.commit(batch, *out, policy_version=k)
            done = np.array([e == 0 and k == 2 for e in done_ids])  # env 0 ends an episode
            s.complete_steps(np.array(done_ids), np.ones(len(done_ids)), done,
                             np.zeros(len(done_ids), bool), np.zeros(len(done_ids)))  # fmt: skip
    for name in ("actions", "prev_actions", "log_probs", "values", "hidden_in", "hidden",
                 "prev_action", "obs_rows"):  # fmt: skip
        assert torch.equal(getattr(host, name), getattr(torch_path, name)), name
    # slots: batch 0 -> 0, 1; batch 1 -> 2; batch 2 -> 3, 4, 5; batch 3 -> 6 (env 1), 7 (env 0)
    assert torch.equal(host.hidden_in[4], outputs[1][3][0])  # env 1 went on from batch 1
    assert torch.equal(host.prev_actions[4], outputs[1][1][0])
    assert torch.equal(host.hidden_in[6], outputs[2][3][1])  # env 1 again, from batch 2
    assert float(host.hidden_in[7].abs().sum()) == 0.0  # env 0 ended its episode: reset
    assert float(host.prev_actions[7].abs().sum()) == 0.0
    assert torch.equal(host.hidden[0], outputs[3][3][1])  # the carried state: batch 3's out


def test_acting_benchmark_prints_one_checked_row_per_batch(capsys):
    from benchmarks import acting_numpy

    acting_numpy.main(["--batches", "1,3", "--rounds", "2", "--calls", "2"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert rows[0].split("|")[1].strip() == "batch"
    body = [r for r in rows if r.split("|")[1].strip().isdigit()]
    assert [r.split("|")[1].strip() for r in body] == ["1", "3"]
    for row in body:
        ratio, diff = row.split("|")[4].strip(), row.split("|")[5].strip()
        assert ratio.endswith("×") and float(ratio[:-1]) > 0
        assert float(diff) < 1e-5  # the two steps agree on the benchmark's own inputs


def _train_synthetic(run_dir, numpy_acting: bool, updates: int = 3):
    from rearrange.runtime.run import RunConfig, RunSetup
    from rearrange.runtime.synthetic_env import SyntheticEnvConfig, SyntheticEnvFactory
    from rearrange.ver_backend.config import PPOConfig, VERConfig
    from rearrange.ver_backend.trainer import VERTrainer

    config = ModelConfig(backbone="none", **CONFIGS["cpu_profile"])
    torch.manual_seed(0)
    run = RunConfig(num_envs=3, total_steps=10**6, serial=True, device="cpu", seed=3,
                    checkpoint_every_steps=10**6)  # fmt: skip
    setup = RunSetup(
        env_factory=SyntheticEnvFactory(SyntheticEnvConfig(max_episode_steps=12), 3),
        run_dir=run_dir, tensorboard=False, progress=False,
    )  # fmt: skip
    trainer = VERTrainer(
        run, VERConfig(rollout_steps=16, numpy_acting=numpy_acting), PPOConfig(lr=1e-3), setup,
        lambda obs, act: build_policy(obs, act, config), max_updates=updates,
    )  # fmt: skip
    result = trainer.train()
    return trainer, result


def test_training_with_the_numpy_step_follows_the_torch_step(tmp_path):
    """The same seeded run with either acting step: the same steps, the same bookkeeping,
    and weights that differ by float32 rounding only after three updates."""
    fast, fast_result = _train_synthetic(tmp_path / "numpy", True)
    slow, slow_result = _train_synthetic(tmp_path / "torch", False)
    assert isinstance(fast.inference.acting, NumpyActingStep)
    assert not isinstance(slow.inference.acting, NumpyActingStep)
    assert fast_result.num_steps == slow_result.num_steps == 3 * 48
    a, b = fast.policy.state_dict(), slow.policy.state_dict()
    for name, value in a.items():
        torch.testing.assert_close(value, b[name], atol=1e-4, rtol=1e-4, msg=name)
    # ... while two more updates move them by far more than that
    one, _ = _train_synthetic(tmp_path / "one", True, updates=1)
    moved = max(float((one.policy.state_dict()[k] - v).abs().max()) for k, v in a.items())
    assert moved > 1e-3  # (1e-2 here; the two acting steps: ~3e-8)
