"""`rearrange.eval.runner.evaluate` (the CLI and benchmarks.hab_learned both call it) runs
torch single-threaded: batch-1 policy inference beside a training run is ~5x slower with
torch's default intra-op threads."""

import torch

from rearrange.eval.args import EvalArgs
from rearrange.eval.runner import evaluate


def test_evaluate_sets_torch_to_one_thread(tmp_path):
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        args = EvalArgs(
            "tidy_house", skills="oracle", episodes=1, videos=0, out=str(tmp_path), progress=False
        )
        result = evaluate(args)
        assert torch.get_num_threads() == 1
        assert len(result.episodes) == 1
    finally:
        torch.set_num_threads(before)
