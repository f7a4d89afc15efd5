"""The GPU path end to end (pinned staging, storage on the device, CUDA-graph acting, learner):
skipped without CUDA; CI has no GPU, the lent H100 runs them with `-m gpu`."""

from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium import spaces

from rearrange.ver_backend.rollout_storage import RolloutStorage

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

OBS = spaces.Dict(
    {
        "depth": spaces.Box(0.0, 10.0, (8, 8, 1), np.float32),
        "x": spaces.Box(-10, 10, (3,), np.float32),
    }
)
ACT = spaces.Box(-1, 1, (2,), np.float32)


def test_cuda_storage_matches_cpu_storage():
    stores = [RolloutStorage(4, 3, OBS, ACT, 2, 5, device=d) for d in ("cpu", "cuda")]
    rng = np.random.default_rng(0)
    for step in range(6):
        obs = {k: rng.uniform(0, 5, (4, *s.shape)).astype(np.float32) for k, s in OBS.items()}
        rows = stores[0].layout.pack(obs)
        ids = [3, 1, 0] if step % 2 else [2, 0]
        ids = [e for e in ids if stores[0].pending[e] < 0]
        for s in stores:
            b = s.stage(ids, rows)
            n = len(ids)
            dev = s.device
            action = torch.arange(2 * n, dtype=torch.float32, device=dev).view(n, 2) + step
            s.commit(b, torch.full((n,), float(step), device=dev), action,
                     torch.zeros(n, device=dev), torch.ones(n, 2, 5, device=dev) * step, step)  # fmt: skip
            done = np.array([e == 0 for e in ids])
            s.complete_steps(np.array(ids), np.full(n, 0.5), done, np.zeros(n, bool), np.zeros(n))
    cpu, gpu = (s.build_rollout(s.bootstrap_values()) for s in stores)
    for key in OBS:
        torch.testing.assert_close(gpu.obs[key].cpu(), cpu.obs[key])
    for name in ("actions", "hidden_in", "prev_actions", "env_ids", "dones", "rewards"):
        torch.testing.assert_close(getattr(gpu, name).cpu(), getattr(cpu, name))


def test_trainer_runs_on_cuda_with_graphs(tmp_path: Path):
    from rearrange.models import ModelConfig, build_policy
    from rearrange.runtime.run import RunConfig, RunSetup
    from rearrange.runtime.synthetic_env import SyntheticEnvConfig, SyntheticEnvFactory
    from rearrange.ver_backend.config import PPOConfig, VERConfig
    from rearrange.ver_backend.graph_acting import ActingStep
    from rearrange.ver_backend.trainer import VERTrainer

    def policy(obs_space, action_space):
        return build_policy(obs_space, action_space, ModelConfig(rnn_hidden_size=32, rnn_layers=2))

    run = RunConfig(num_envs=4, total_steps=10**6, device="cuda")
    setup = RunSetup(
        env_factory=SyntheticEnvFactory(SyntheticEnvConfig(depth_size=32), 4),
        run_dir=tmp_path,
        tensorboard=False,
        progress=False,
    )
    trainer = VERTrainer(
        run, VERConfig(rollout_steps=16), PPOConfig(), setup, policy, max_updates=3
    )
    result = trainer.train()
    assert result.num_steps == 3 * 4 * 16 and result.checkpoint is not None
    assert isinstance(trainer.inference.acting, ActingStep)  # the graph step was used
    assert trainer.inference.acting._graphs  # and captured at least one bucket
    assert np.isfinite(result.last_scalars["learn/value_loss"])


def test_bf16_autocast_and_channels_last_update_on_cuda(tmp_path: Path):
    """The two learner options a GPU benchmark decides on: both run, and stay finite."""
    from rearrange.models import ModelConfig, build_policy
    from rearrange.runtime.run import RunConfig, RunSetup
    from rearrange.runtime.synthetic_env import SyntheticEnvConfig, SyntheticEnvFactory
    from rearrange.ver_backend.config import PPOConfig, VERConfig
    from rearrange.ver_backend.trainer import VERTrainer

    def policy(obs_space, action_space):
        cfg = ModelConfig(rnn_hidden_size=32, rnn_layers=2, channels_last=True)
        return build_policy(obs_space, action_space, cfg)

    setup = RunSetup(
        env_factory=SyntheticEnvFactory(SyntheticEnvConfig(depth_size=32), 2),
        run_dir=tmp_path,
        tensorboard=False,
        progress=False,
    )
    run = RunConfig(num_envs=2, total_steps=10**6, device="cuda")
    ppo = PPOConfig(autocast_bf16=True)
    trainer = VERTrainer(run, VERConfig(rollout_steps=16), ppo, setup, policy, max_updates=2)
    result = trainer.train()
    assert np.isfinite(result.last_scalars["learn/value_loss"])
