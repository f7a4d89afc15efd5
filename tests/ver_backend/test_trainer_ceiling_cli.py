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


def test_overlap_adds_a_column_per_source_and_their_ratio(tmp_path):
    (tmp_path / "rearrange").mkdir()
    args = _args(learner_variants=[], envs_per_worker=[], overlap=True, baseline_src=tmp_path)
    cols = tc.columns(args)
    assert list(cols) == ["ours", "ours overlap", "baseline", "baseline overlap"]
    assert cols["ours overlap"] == (None, {"overlap_learning": True})
    assert cols["baseline overlap"] == (tmp_path.resolve(), {"overlap_learning": True})
    runs = {"ours": [300.0, 100.0, 200.0], "ours overlap": [600.0], "baseline": [50.0, 150.0],
            "baseline overlap": [100.0]}  # fmt: skip
    table = tc.report(
        {
            ("zero/state", "ver"): {
                k: [{"sps": v, "repeat": i} for i, v in enumerate(vs)] for k, vs in runs.items()
            }
        },
        args,
    )
    row = next(line for line in table.splitlines() if line.startswith("| zero/state"))
    # medians: ours 200, baseline 100 -> 2.00x; overlapped 600 / 100 -> 6.00x; per repeat
    # 300/50 = 6.00 and 100/150 = 0.67 (ours' third repeat has no baseline): median 3.33
    assert row.endswith("| 2.00× | 3.33 [0.67–6.00] | 6.00× |")
    assert "200 [100–300]" in row
    assert "| ours / baseline | per repeat | overlap: ours / baseline |" in table
