"""n-step returns, the clipped double-Q target and the categorical projection, checked
against values computed by hand (γ = 0.5 keeps the arithmetic exact)."""

import torch

from rearrange.pql.targets import categorical_projection, clipped_double_q_target, nstep_returns

T, F = True, False


def _nstep(rewards, terminated, truncated, available, gamma=0.5):
    as_bool = lambda rows: torch.tensor(rows, dtype=torch.bool)  # noqa: E731
    return nstep_returns(
        torch.tensor(rewards, dtype=torch.float32),
        as_bool(terminated),
        as_bool(truncated),
        as_bool(available),
        gamma,
    )


def test_full_window_bootstraps_after_n_steps():
    out = _nstep([[1.0, 2.0, 4.0]], [[F, F, F]], [[F, F, F]], [[T, T, T]])
    assert out.returns.tolist() == [1 + 0.5 * 2 + 0.25 * 4]  # 3.0
    assert out.last.tolist() == [2]
    assert out.bootstrap_discount.tolist() == [0.125]  # γ^3


def test_termination_stops_the_sum_and_drops_the_bootstrap():
    # terminated at k=1: r0 + γ r1, nothing after, no bootstrap
    out = _nstep([[1.0, 2.0, 4.0]], [[F, T, F]], [[F, F, F]], [[T, T, T]])
    assert out.returns.tolist() == [2.0]
    assert out.last.tolist() == [1]
    assert out.bootstrap_discount.tolist() == [0.0]


def test_truncation_stops_the_sum_but_keeps_the_bootstrap():
    # time limit at k=1: r0 + γ r1, then γ^2 · Q(final observation of step 1)
    out = _nstep([[1.0, 2.0, 4.0]], [[F, F, F]], [[F, T, F]], [[T, T, T]])
    assert out.returns.tolist() == [2.0]
    assert out.last.tolist() == [1]
    assert out.bootstrap_discount.tolist() == [0.25]


def test_terminated_and_truncated_together_is_a_termination():
    out = _nstep([[3.0, 9.0]], [[T, F]], [[T, F]], [[T, T]])
    assert out.returns.tolist() == [3.0] and out.bootstrap_discount.tolist() == [0.0]


def test_steps_not_written_yet_shorten_the_window():
    # only t and t+1 exist: r0 + γ r1, bootstrap from step t+1's next_obs with γ^2
    out = _nstep([[1.0, 2.0, 99.0]], [[F, F, F]], [[F, F, F]], [[T, T, F]])
    assert out.returns.tolist() == [2.0]
    assert out.last.tolist() == [1]
    assert out.bootstrap_discount.tolist() == [0.25]


def test_batch_rows_are_independent():
    out = _nstep(
        [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]],
        [[T, F], [F, F], [F, F]],
        [[F, F], [F, F], [T, F]],
        [[T, T], [T, T], [T, T]],
    )
    assert out.returns.tolist() == [1.0, 1.5, 1.0]
    assert out.last.tolist() == [0, 1, 0]
    assert out.bootstrap_discount.tolist() == [0.0, 0.25, 0.5]


def test_clipped_double_q_target_takes_the_smaller_critic():
    returns = torch.tensor([1.0, 2.0, 3.0])
    discount = torch.tensor([0.5, 0.0, 0.25])
    q1 = torch.tensor([4.0, 100.0, -8.0])
    q2 = torch.tensor([6.0, -100.0, 8.0])
    y = clipped_double_q_target(returns, discount, q1, q2)
    assert y.tolist() == [1.0 + 0.5 * 4.0, 2.0, 3.0 + 0.25 * -8.0]


def test_categorical_projection_splits_mass_between_neighbours():
    support = torch.tensor([-1.0, 0.0, 1.0])
    probs = torch.tensor([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5], [0.2, 0.3, 0.5]])
    returns = torch.tensor([0.25, 0.0, 0.0])
    discount = torch.tensor([0.0, 0.5, 1.0])
    target = categorical_projection(probs, returns, discount, support)
    # row 0: every atom lands on 0.25 -> 0.75 on atom 0.0, 0.25 on atom 1.0
    # row 1: atoms -1, 1 shrink to -0.5, 0.5 -> half of each to its neighbours
    # row 2: discount 1, return 0: the distribution is unchanged
    expected = torch.tensor([[0.0, 0.75, 0.25], [0.25, 0.5, 0.25], [0.2, 0.3, 0.5]])
    assert torch.allclose(target, expected, atol=1e-6)


def test_categorical_projection_clamps_to_the_support():
    support = torch.tensor([-1.0, 0.0, 1.0])
    target = categorical_projection(
        torch.tensor([[1 / 3, 1 / 3, 1 / 3]]), torch.tensor([5.0]), torch.tensor([1.0]), support
    )
    assert torch.allclose(target, torch.tensor([[0.0, 0.0, 1.0]]), atol=1e-6)
