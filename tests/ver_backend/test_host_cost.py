"""HostCost: per-part seconds become µs per collected step, grouped as the benchmark reports."""

from rearrange.ver_backend.host_cost import GROUPS, PARTS, HostCost


def test_per_step_us_divides_by_steps_and_sums_groups():
    cost = HostCost()
    cost.seconds.update(policy=0.002, commit=0.001, complete=0.0005, stage=0.0004, wait=0.003)
    cost.steps = 100
    us = cost.per_step_us()
    assert us["policy"] == 20.0 and us["commit"] == 10.0 and us["wait"] == 30.0
    assert us["storage"] == 15.0  # commit + complete
    assert us["transfer"] == 4.0  # stage + actions_d2h (0)
    assert us["total"] == 20.0 + 10.0 + 5.0 + 4.0 + 30.0
    assert set(GROUPS["inference"]) <= set(PARTS)


def test_add_charges_elapsed_time_and_reset_clears():
    cost = HostCost()
    t = cost.add("send", 0.0)  # since t=0: the whole perf_counter value
    assert cost.seconds["send"] == t > 0
    cost.steps = 3
    cost.reset()
    assert cost.steps == 0 and all(v == 0.0 for v in cost.seconds.values())
