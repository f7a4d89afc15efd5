"""benchmarks/trainer_ceiling: device-dependent defaults and argument errors (no runs)."""

import argparse
import json

import pytest

from benchmarks import trainer_ceiling as tc


def _args(**over):
    base = dict(device="cpu", num_envs=None, depth_size=None, rnn_hidden=None, threads=None,
                rollout_steps=None, updates=None, task="pick", base_movement=False)  # fmt: skip
    base.update(over)
    ns = argparse.Namespace(**base)
    tc.resolve(ns)
    return ns


def test_cpu_and_gpu_defaults():
    cpu, gpu = _args(), _args(device="cuda")
    assert (cpu.num_envs, cpu.depth_size, cpu.rnn_hidden) == (8, 64, 128)
    assert (gpu.num_envs, gpu.depth_size, gpu.rnn_hidden) == (16, 128, 512)  # the paper's
    state, depth = tc.spec_for(cpu, "zero/state", "ver"), tc.spec_for(cpu, "task/depth", "ver")
    assert (state["rollout_steps"], state["cpu_ppo"]) == (128, True)
    assert depth["rollout_steps"] == 16  # the CPU depth learner is slow: short rollouts
    assert tc.spec_for(gpu, "task/depth", "ddppo")["rollout_steps"] == 128
    assert not tc.spec_for(gpu, "zero/state", "ver")["cpu_ppo"]
    assert _args(num_envs=4).num_envs == 4  # an explicit value wins
    json.dumps(state)  # a spec crosses the process boundary as JSON


def test_unknown_workload_or_system_is_a_one_line_error(capsys):
    with pytest.raises(SystemExit):
        tc.main(["--workloads", "zero/lidar"])
    assert "unknown ['zero/lidar']" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        tc.main(["--systems", "ver,a3c"])
    assert "unknown ['a3c']" in capsys.readouterr().err
