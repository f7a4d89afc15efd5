"""`widen_actions`: a fixed-base policy's weights fitted to its base-moving variant."""

import pytest
import torch

from rearrange.runtime.widen import widen_actions


def test_action_layers_keep_their_rows_and_start_the_base_at_rest():
    old = {
        "mean.weight": torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),  # 3 actions x 2
        "mean.bias": torch.tensor([0.5, -0.5, 0.25]),
        "log_std": torch.tensor([-1.0, -2.0, -3.0]),
        "embed.weight": torch.tensor([[1.0, 1.0, 1.0]]),  # 1 x 3 actions (columns)
        "trunk.weight": torch.ones(2, 2),  # not an action layer
    }
    target = {
        "mean.weight": torch.full((5, 2), 9.0),
        "mean.bias": torch.full((5,), 9.0),
        "log_std": torch.tensor([7.0, 7.0, 7.0, 0.3, 0.4]),
        "embed.weight": torch.full((1, 5), 9.0),
        "trunk.weight": torch.zeros(2, 2),
    }
    out, widened = widen_actions(old, target, 3, 5)
    assert sorted(widened) == ["embed.weight", "log_std", "mean.bias", "mean.weight"]
    assert out["mean.weight"].tolist() == [[1, 2], [3, 4], [5, 6], [0, 0], [0, 0]]
    assert out["mean.bias"].tolist() == [0.5, -0.5, 0.25, 0, 0]
    # the new log-stds are the new policy's own initial values
    torch.testing.assert_close(out["log_std"], torch.tensor([-1.0, -2.0, -3.0, 0.3, 0.4]))
    assert out["embed.weight"].tolist() == [[1, 1, 1, 0, 0]]
    assert out["trunk.weight"] is old["trunk.weight"]  # same shape: passed as is
    assert torch.equal(target["mean.bias"], torch.full((5,), 9.0))  # the target is not written


def test_other_misfits_pass_unchanged_for_load_state_dict_to_refuse():
    old = {"a": torch.ones(4, 3), "b": torch.ones(3, 3), "c": torch.ones(3)}
    target = {"a": torch.ones(4, 6), "b": torch.ones(5, 5)}  # 3->6 is not 3->5; b: two dims
    out, widened = widen_actions(old, target, 3, 5)
    assert widened == [] and all(out[k] is old[k] for k in old)
    with pytest.raises(ValueError, match="not a widening"):
        widen_actions(old, target, 5, 5)


def test_the_widened_linear_layer_computes_the_same_arm_actions():
    torch.manual_seed(0)
    fixed, moving = torch.nn.Linear(4, 8), torch.nn.Linear(4, 10)
    out, _ = widen_actions(fixed.state_dict(), moving.state_dict(), 8, 10)
    moving.load_state_dict(out)
    x = torch.randn(6, 4)
    y = moving(x)
    torch.testing.assert_close(y[:, :8], fixed(x))
    assert torch.count_nonzero(y[:, 8:]) == 0
