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


def test_an_added_observation_gets_a_zero_input_column_where_sorting_puts_it():
    from rearrange.runtime.widen import vector_positions, widen_observations

    # old vector: a (2), c (1); new: a (2), b (1), c (1) -> old elements land at 0, 1, 3
    positions = vector_positions(("a", "c"), (2, 1), ("a", "b", "c"), (2, 1, 1))
    assert positions == [0, 1, 3]
    # input layer reads [2 visual features, the vector, 1 previous-action feature]
    old = {
        "rnn.w": torch.tensor([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]),  # v v a a c p
        "enc.norm.mean": torch.tensor([0.1, 0.2, 0.3]),
        "enc.norm.var": torch.tensor([2.0, 3.0, 4.0]),
    }
    target = {"rnn.w": torch.full((1, 7), 9.0), "enc.norm.mean": torch.zeros(4),
              "enc.norm.var": torch.ones(4)}  # fmt: skip
    out, widened = widen_observations(old, target, positions, 4, input_offset=2)
    assert sorted(widened) == ["enc.norm.mean", "enc.norm.var", "rnn.w"]
    assert out["rnn.w"].tolist() == [[1, 2, 3, 4, 0, 5, 6]]  # v v a a b c p
    torch.testing.assert_close(out["enc.norm.mean"], torch.tensor([0.1, 0.2, 0.0, 0.3]))
    assert out["enc.norm.var"].tolist() == [2, 3, 1, 4]
    with pytest.raises(ValueError, match="1 wide, now 2"):
        vector_positions(("a",), (1,), ("a",), (2,))
