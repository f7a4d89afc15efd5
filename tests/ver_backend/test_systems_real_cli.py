"""benchmarks/systems_real.py: device-dependent defaults and argument errors (nothing is run),
and the sim-only stepping loop of benchmarks/sim_ceiling.py on the synthetic env."""

import math

import numpy as np
import pytest
import torch

from benchmarks import systems_real
from benchmarks.sim_ceiling import sim_only_sps, step_pool
from rearrange.runtime.env_worker import env_seeds, make_env_pool
from rearrange.runtime.synthetic_env import SyntheticEnvConfig, SyntheticEnvFactory


def fake_gpus(monkeypatch, count: int) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)


def argparse_error(capsys, argv) -> str:
    with pytest.raises(SystemExit) as exc:
        systems_real.parse_args(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_cpu_defaults_are_todays(monkeypatch):
    fake_gpus(monkeypatch, 0)
    args = systems_real.parse_args([])
    assert (args.device, args.task, args.base_movement) == ("cpu", "pick", False)
    assert (args.preset, args.num_envs, args.depth_size, args.rnn_hidden) == ("both", 4, 64, 128)
    steps = [systems_real.rollout_steps_for(args, p) for p in ("state", "depth")]
    assert steps == [64, 16]
    line = systems_real.settings_line(args, ["state", "depth"])
    assert "device cpu" in line and "state T=64" in line and "depth T=16" in line


def test_gpu_defaults_are_the_papers(monkeypatch):
    fake_gpus(monkeypatch, 1)
    args = systems_real.parse_args([])
    assert (args.device, args.preset, args.num_envs) == ("cuda", "depth", 16)
    assert (args.rollout_steps, args.depth_size, args.rnn_hidden) == (128, 128, 512)
    model = systems_real.model_for(args.preset, args.rnn_hidden)
    assert (model.rnn_hidden_size, model.rnn_layers) == (512, 2)


def test_given_flags_win_over_the_device_defaults(monkeypatch):
    fake_gpus(monkeypatch, 2)
    argv = ["--device", "cuda:1", "--num-envs", "8", "--preset", "state", "--rollout-steps", "32"]
    args = systems_real.parse_args(argv)
    assert (args.device, args.num_envs) == ("cuda:1", 8)
    assert (args.preset, args.rollout_steps) == ("state", 32)
    assert args.depth_size == 128  # the flags not given keep the GPU defaults


def test_task_and_base_movement_reach_the_env_factory(monkeypatch):
    fake_gpus(monkeypatch, 1)
    args = systems_real.parse_args(["--task", "open_fridge", "--base-movement"])
    factory = systems_real.task_factory("depth", args)
    assert (factory.task, factory.render_device) == ("open_fridge", "cuda")
    cfg = factory.config
    assert (cfg.task, cfg.base_movement) == ("open_fridge", True)
    assert (cfg.obs_preset, cfg.depth_size) == ("depth", 128)


def test_unknown_task_is_a_one_line_argparse_error(monkeypatch, capsys):
    fake_gpus(monkeypatch, 0)
    last = argparse_error(capsys, ["--task", "fly"])
    assert "argument --task: invalid choice: 'fly'" in last and "open_fridge" in last


@pytest.mark.parametrize(
    ("gpus", "argv", "message"),
    [
        (0, ["--device", "cuda"], "--device cuda: CUDA is not available here; use --device cpu"),
        (1, ["--device", "cuda:3"], "--device cuda:3: 1 CUDA device(s) here; use cuda:0..0"),
        (1, ["--device", "gpu"], "argument --device: 'gpu': use auto, cpu, cuda or cuda:N"),
        (0, ["--task", "nav", "--base-movement"], "nav always moves the base"),
        (0, ["--updates", "1"], "--updates must be >= 2"),
    ],
)
def test_bad_arguments_name_the_value_and_the_fix(monkeypatch, capsys, gpus, argv, message):
    fake_gpus(monkeypatch, gpus)
    assert message in argparse_error(capsys, argv)


# ---------------------------------------------------------------------------- sim-only loop
def synthetic_factory(num_envs: int) -> SyntheticEnvFactory:
    return SyntheticEnvFactory(SyntheticEnvConfig(), num_envs)


def test_step_pool_steps_every_env_the_same_number_of_times():
    pool = make_env_pool(synthetic_factory(3), 3, env_seeds(0, 0, 3), serial=True)
    try:
        ready = step_pool(pool, [], 3, count_first=True)  # the resets
        assert sorted(ready) == [0, 1, 2]
        ready = step_pool(pool, ready, 12)
        assert sorted(ready) == [0, 1, 2]
        np.testing.assert_array_equal(pool.buffers.scalars["steps_simulated"], [4, 4, 4])
    finally:
        pool.close()


def test_step_pool_batches_a_round_into_one_message_per_grouped_worker():
    pool = make_env_pool(synthetic_factory(4), 4, env_seeds(0, 0, 4), False, envs_per_worker=2)
    sent = []
    step = pool.step
    pool.step = lambda ids: sent.append(sorted(ids)) or step(ids)
    try:
        ready = step_pool(pool, [], 4, count_first=True)
        ready = step_pool(pool, ready, 16)
        assert int(pool.buffers.scalars["steps_simulated"].sum()) == 16
        assert sent[0] == [0, 1, 2, 3]  # the first round: every env in one call
        # later rounds: the envs a worker answered for together go out together again
        # (which envs step more depends on the processes' timing, not checked)
        for ids in sent:
            assert {0, 1} <= set(ids) or not {0, 1} & set(ids), sent
            assert {2, 3} <= set(ids) or not {2, 3} & set(ids), sent
    finally:
        pool.close()


def test_sim_only_sps_is_a_positive_rate():
    sps = sim_only_sps(synthetic_factory(2), 2, steps=20, seed=0, warmup=2, serial=True)
    assert math.isfinite(sps) and sps > 0
    with pytest.raises(ValueError, match="steps >= 1"):
        sim_only_sps(synthetic_factory(2), 2, steps=0, seed=0)
