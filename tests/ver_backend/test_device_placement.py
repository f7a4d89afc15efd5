"""GPU placement: rank → device, the default group's backend when ranks share a GPU, and the
EGL device env workers render on. CPU-runnable (CUDA faked), plus GPU-only checks."""

import datetime
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

from rearrange.runtime.env_worker import TaskEnvFactory
from rearrange.sim.egl_device import EGL_DEVICE_VAR, cuda_index, select_egl_device
from rearrange.ver_backend import distributed
from rearrange.ver_backend.distributed import (
    default_backend,
    rank_device,
    ranks_share_gpu,
    resolve_device,
)

REPO = Path(__file__).resolve().parents[2]


def fake_gpus(monkeypatch, count: int) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)


# ---------------------------------------------------------------------------- rank → device
@pytest.mark.parametrize(
    ("gpus", "ranks", "expected"),
    [
        (1, 1, ["cuda:0"]),
        (1, 2, ["cuda:0", "cuda:0"]),
        (1, 3, ["cuda:0", "cuda:0", "cuda:0"]),
        (2, 1, ["cuda:0"]),
        (2, 2, ["cuda:0", "cuda:1"]),
        (2, 3, ["cuda:0", "cuda:1", "cuda:0"]),
    ],
)
def test_local_ranks_spread_over_the_gpus(monkeypatch, gpus, ranks, expected):
    fake_gpus(monkeypatch, gpus)
    for name in ("auto", "cuda"):
        devices = []
        for local_rank in range(ranks):
            monkeypatch.setenv("LOCAL_RANK", str(local_rank))
            devices.append(str(rank_device(name)))
        assert devices == expected


def test_explicit_index_is_kept_for_every_rank(monkeypatch):
    fake_gpus(monkeypatch, 2)
    assert [str(resolve_device("cuda:1", r)) for r in range(3)] == ["cuda:1"] * 3


def test_without_cuda_auto_is_cpu_and_cuda_is_an_error(monkeypatch):
    fake_gpus(monkeypatch, 0)
    assert resolve_device("auto", 3) == torch.device("cpu")
    assert resolve_device("cpu", 1) == torch.device("cpu")
    with pytest.raises(ValueError, match="'cuda:0' requested but CUDA is not available"):
        resolve_device("cuda:0")


def test_bad_device_names_and_indices_fail_with_the_fix(monkeypatch):
    fake_gpus(monkeypatch, 2)
    with pytest.raises(ValueError, match=r"'cuda:2'.*2 CUDA device\(s\).*device=auto"):
        resolve_device("cuda:2")
    with pytest.raises(ValueError, match="'gpu'.*use 'auto', 'cpu', 'cuda' or 'cuda:N'"):
        resolve_device("gpu")


# ---------------------------------------------------------------------------- backend
@pytest.mark.parametrize(
    ("name", "ranks", "gpus", "shared"),
    [
        ("auto", 1, 1, False),
        ("auto", 2, 1, True),
        ("auto", 3, 1, True),
        ("auto", 2, 2, False),
        ("auto", 3, 2, True),
        ("cuda", 2, 2, False),
        ("cuda:0", 2, 2, True),  # every rank on GPU 0
        ("cpu", 3, 2, False),
        ("auto", 2, 0, False),  # no GPU: CPU ranks
    ],
)
def test_ranks_share_a_gpu_when_more_ranks_than_gpus(name, ranks, gpus, shared):
    assert ranks_share_gpu(name, ranks, gpus) is shared


def test_backend_is_nccl_only_with_one_gpu_per_rank():
    cuda = torch.device("cuda", 0)
    assert default_backend(cuda, shared_gpu=False) == "nccl"
    assert default_backend(cuda, shared_gpu=True) == "gloo"
    assert default_backend(torch.device("cpu"), shared_gpu=False) == "gloo"


def _agree(store, rank, local_world_size, out):
    out[rank] = distributed._agreed_backend(
        torch.device("cuda", rank), "auto", store, rank, 2, local_world_size=local_world_size
    )


@pytest.mark.parametrize(("sizes", "expected"), [((2, 2), "nccl"), ((2, 3), "gloo")])
def test_all_ranks_agree_on_the_backend(monkeypatch, caplog, sizes, expected):
    """Rank 1's node runs 3 ranks on 2 GPUs: rank 0, alone on its GPU, must still pick gloo
    (NCCL on one rank and gloo on the other would hang), and says so in one line."""
    fake_gpus(monkeypatch, 2)
    store = dist.HashStore()
    store.set_timeout(datetime.timedelta(seconds=10))
    out = {}
    other = threading.Thread(target=_agree, args=(store, 1, sizes[1], out))
    other.start()
    with caplog.at_level(logging.WARNING, logger=distributed.__name__):
        _agree(store, 0, sizes[0], out)
    other.join(timeout=10)
    assert out == {0: expected, 1: expected}
    warnings = [r.getMessage() for r in caplog.records if r.name == distributed.__name__]
    if expected == "gloo":
        assert len(warnings) == 1 and "share a GPU" in warnings[0] and "gloo" in warnings[0]
    else:
        assert warnings == []


# ---------------------------------------------------------------------------- EGL device
def test_egl_device_follows_the_cuda_index():
    env = {"MUJOCO_GL": "egl"}
    assert select_egl_device("cuda:1", env) == 1 and env[EGL_DEVICE_VAR] == "1"
    assert select_egl_device(torch.device("cuda", 2), env) == 2 and env[EGL_DEVICE_VAR] == "2"
    assert select_egl_device("cuda", env) == 0 and env[EGL_DEVICE_VAR] == "0"


@pytest.mark.parametrize("device", ["cpu", None])
def test_egl_device_is_left_alone_on_cpu(device):
    env = {"MUJOCO_GL": "egl"}
    assert select_egl_device(device, env) is None and EGL_DEVICE_VAR not in env
    env[EGL_DEVICE_VAR] = "3"  # a user's choice stays
    select_egl_device(device, env)
    assert env[EGL_DEVICE_VAR] == "3"


@pytest.mark.parametrize("gl", [None, "glfw", "osmesa"])
def test_egl_device_is_left_alone_without_egl(gl):
    env = {} if gl is None else {"MUJOCO_GL": gl}
    assert select_egl_device("cuda:1", env) is None and EGL_DEVICE_VAR not in env


def test_bad_render_device_names_the_value():
    assert cuda_index("cuda:3") == 3
    with pytest.raises(ValueError, match="'gpu1' is not a torch device"):
        select_egl_device("gpu1", {"MUJOCO_GL": "egl"})


def test_task_env_factory_selects_the_device_before_building_the_env(monkeypatch):
    import rearrange.tasks

    monkeypatch.setenv("MUJOCO_GL", "egl")
    # setenv first, so that teardown restores the variable's state before the test (a bare
    # delenv of an absent variable records nothing, and the factory sets it below)
    monkeypatch.setenv(EGL_DEVICE_VAR, "unset")
    monkeypatch.delenv(EGL_DEVICE_VAR)
    seen = []

    def fake_make_env(task, config, split, seed):
        seen.append((task, seed, os.environ.get(EGL_DEVICE_VAR)))
        return "env"

    monkeypatch.setattr(rearrange.tasks, "make_env", fake_make_env)
    assert TaskEnvFactory("pick", None, seed=10, render_device="cuda:1")(2) == "env"
    assert seen == [("pick", 12, "1")]
    os.environ.pop(EGL_DEVICE_VAR)
    TaskEnvFactory("pick", None, seed=10)(0)  # no render device: MuJoCo's default
    assert seen[-1] == ("pick", 10, None)


# ---------------------------------------------------------------------------- real GPU
@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_torchrun_two_ranks_share_one_gpu(tmp_path):
    """Two ranks on GPU 0 (NCCL would refuse): the default group falls back to gloo, says so,
    and training finishes with CUDA tensors all-reduced over gloo."""
    torchrun = Path(sys.executable).with_name("torchrun")
    cmd = [str(torchrun), "--nproc-per-node", "2", "--master-port", "29641", "-m",
           "rearrange.train_skill", "synthetic", "--serial", "--run-name", "gpu",
           f"runs_root={tmp_path}", "ver.device=cuda:0", "ver.num_envs=2",
           "ver.rollout_steps=8", "total_steps=96"]  # fmt: skip
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        OMP_NUM_THREADS="1",
    )
    out = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert (out.stdout + out.stderr).count("ranks share a GPU") == 1
    assert (tmp_path / "synthetic" / "gpu" / "checkpoints" / "latest.pt").is_file()
