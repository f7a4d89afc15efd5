"""Dynamic batching: min/max requests, the half-inference-time wait, lagging envs first."""

import numpy as np

from rearrange.ver_backend.inference import DynamicBatcher


def test_waits_for_min_batch_then_times_out():
    b = DynamicBatcher(min_batch=3, max_batch=4)
    assert not b.should_infer(num_ready=2, num_busy=5, waited_s=0.001, avg_inference_s=0.01)
    assert b.should_infer(num_ready=3, num_busy=5, waited_s=0.0, avg_inference_s=0.01)
    assert b.should_infer(num_ready=1, num_busy=5, waited_s=0.006, avg_inference_s=0.01)
    assert not b.should_infer(num_ready=0, num_busy=5, waited_s=1.0, avg_inference_s=0.01)


def test_no_wait_when_nothing_else_can_arrive():
    b = DynamicBatcher(min_batch=3, max_batch=4)
    assert b.should_infer(num_ready=1, num_busy=0, waited_s=0.0, avg_inference_s=1.0)


def test_max_batch_and_lagging_first():
    b = DynamicBatcher(min_batch=1, max_batch=2)
    steps = np.array([5, 1, 3, 1, 0])
    # ready in arrival order 0, 2, 3, 1, 4: fewest steps first, ties by arrival
    assert b.select([0, 2, 3, 1, 4], lambda e: steps[e]) == [4, 3]


def test_lockstep_waits_for_all_and_takes_all():
    b = DynamicBatcher(min_batch=1, max_batch=2, lockstep=True)
    assert not b.should_infer(num_ready=3, num_busy=1, waited_s=10.0, avg_inference_s=0.01)
    assert b.should_infer(num_ready=4, num_busy=0, waited_s=0.0, avg_inference_s=0.01)
    assert b.select([0, 1, 2, 3], lambda e: 0) == [0, 1, 2, 3]


def test_vectorised_lagging_selection_matches_the_key_order():
    import numpy as np
    from gymnasium import spaces

    from rearrange.ver_backend.inference import lagging_key
    from rearrange.ver_backend.rollout_storage import RolloutStorage

    obs = spaces.Dict({"x": spaces.Box(-1, 1, (1,), np.float32)})
    storage = RolloutStorage(6, 4, obs, spaces.Box(-1, 1, (1,), np.float32), 1, 1)
    storage.steps_this_rollout[:] = [2, 0, 1, 0, 2, 1]
    storage.total_collected[:] = [9, 5, 3, 5, 1, 3]
    b = DynamicBatcher(min_batch=1, max_batch=4)
    ready = [4, 0, 3, 5, 1, 2]
    # by (this rollout, total, env): 1 (0,5,1), 3 (0,5,3), 2 (1,3,2), 5 (1,3,5)
    assert b.select_lagging(ready, storage) == [1, 3, 2, 5]
    assert b.select_lagging(ready, storage) == b.select(ready, lagging_key(storage))
