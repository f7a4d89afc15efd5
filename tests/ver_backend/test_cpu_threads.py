"""CPU-only speed settings: the PPO update's own thread count (`ver.update_threads`) and
acting without autograd bookkeeping (inference mode) that leaves rollout storage usable by
the learner."""

import pytest
import torch

from rearrange.config import compose_train_config
from rearrange.trainers import TRAINERS
from rearrange.ver_backend.config import VERConfig
from rearrange.ver_backend.trainer import update_threads
from ver_backend.helpers import build_collector
from ver_backend.test_collection import collect_rollouts


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield before
    torch.set_num_threads(before)


def test_update_threads_apply_inside_the_block_and_restore_after(restore_threads):
    torch.set_num_threads(1)
    with update_threads(2, torch.device("cpu")):
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == 1
    with pytest.raises(RuntimeError), update_threads(3, torch.device("cpu")):
        raise RuntimeError("an update that fails")
    assert torch.get_num_threads() == 1  # restored on the error path too


@pytest.mark.parametrize("threads, device", [(None, "cpu"), (2, "cuda")])
def test_update_threads_leave_the_count_alone_unset_or_on_a_gpu(restore_threads, threads, device):
    torch.set_num_threads(1)
    with update_threads(threads, torch.device(device)):
        assert torch.get_num_threads() == 1


def test_update_threads_must_be_positive():
    with pytest.raises(ValueError, match=r"VERConfig.update_threads must be >= 1"):
        VERConfig(update_threads=0)


def test_a_run_updates_with_the_update_threads_and_acts_with_its_own(tmp_path, restore_threads):
    torch.set_num_threads(1)
    cfg = compose_train_config(
        "synthetic", ["run.serial=true", "ver.update_threads=2", "run.total_steps=512"]
    )
    trainer = TRAINERS["ver"].build(cfg, tmp_path)
    trainer.setup.progress = False
    seen = {"update": set(), "act": set()}
    learner_update, worker_act = None, None

    def build_hook(self, ctx, original=trainer._build):
        nonlocal learner_update, worker_act
        original(ctx)
        learner_update, worker_act = self.learner.update, self.inference.act
        self.learner.update = lambda r: (
            seen["update"].add(torch.get_num_threads()) or learner_update(r)
        )
        self.inference.act = lambda ids: seen["act"].add(torch.get_num_threads()) or worker_act(ids)

    trainer._build = build_hook.__get__(trainer)
    result = trainer.train()
    assert result.num_updates >= 2
    assert seen == {"update": {2}, "act": {1}}


def test_update_threads_beside_overlapped_learning_are_reported_unused(
    tmp_path, restore_threads, caplog
):
    cfg = compose_train_config(
        "synthetic",
        ["run.serial=true", "ver.update_threads=2", "ver.overlap_learning=true",
         "run.total_steps=256"],
    )  # fmt: skip
    trainer = TRAINERS["ver"].build(cfg, tmp_path)
    trainer.setup.progress = False
    with caplog.at_level("WARNING", logger="rearrange.train"):
        trainer.train()
    lines = [r.getMessage() for r in caplog.records if "update_threads" in r.getMessage()]
    assert lines == [
        "ver.update_threads=2 has no effect (overlap_learning runs it beside collection): the "
        "update keeps the run's torch_threads; drop the setting, or use it on CPU without "
        "overlap_learning"
    ]


def test_cpu_acting_runs_in_inference_mode_and_its_rollout_trains():
    from rearrange.ver_backend.config import PPOConfig
    from rearrange.ver_backend.learner import Learner

    collector, pool, storage = build_collector("ver", num_envs=3, rollout_steps=5)
    inference, modes = collector.inference, set()
    policy, act = inference.policy, inference.acting
    inference.acting = lambda *a: modes.add(torch.is_inference_mode_enabled()) or act(*a)
    try:
        _, rollouts = collect_rollouts(collector, storage, 2)
    finally:
        pool.close()
    assert modes == {True}
    for name in ("actions", "hidden_in", "values", "log_probs", "obs_rows", "hidden"):
        assert not getattr(storage, name).is_inference(), name
    # a PPO update on what inference mode collected: parameters change, no autograd error
    before = [p.detach().clone() for p in policy.parameters()]
    Learner(policy, PPOConfig(ppo_epoch=1, num_mini_batch=1), 10).update(rollouts[-1])
    assert any(not torch.equal(b, p) for b, p in zip(before, policy.parameters()))
