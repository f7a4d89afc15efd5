"""load_moments: the saved Adam moments come back under the resuming command's lr and eps."""

import torch

from rearrange.runtime.optim_state import load_moments


def _adam(lr: float, eps: float = 1e-8) -> torch.optim.Adam:
    torch.manual_seed(0)
    return torch.optim.Adam(torch.nn.Linear(2, 1).parameters(), lr=lr, eps=eps)


def _stepped(lr: float) -> torch.optim.Adam:
    opt = _adam(lr)
    for p in opt.param_groups[0]["params"]:
        p.grad = torch.ones_like(p)
    opt.step()
    return opt


def test_moments_load_and_lr_eps_stay_the_commands():
    saved = _stepped(5e-4).state_dict()
    opt = _adam(1e-4, eps=1e-5)
    changes = load_moments(opt, saved)
    assert changes == ["lr 0.0005 -> 0.0001", "eps 1e-08 -> 1e-05"]
    assert opt.param_groups[0]["lr"] == 1e-4 and opt.param_groups[0]["eps"] == 1e-5
    assert opt.state_dict()["state"][0]["step"] == 1  # the moments are the saved ones
    assert torch.equal(opt.state_dict()["state"][0]["exp_avg"], saved["state"][0]["exp_avg"])


def test_unchanged_rates_report_nothing():
    saved = _stepped(5e-4).state_dict()
    assert load_moments(_adam(5e-4), saved) == []
