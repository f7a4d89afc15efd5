"""benchmarks/place_release: where a place skill lets go, and whether the object stayed."""

from types import SimpleNamespace

from benchmarks.place_release import Release, measure, summary


def test_moved_off_counts_releases_at_the_goal_that_ended_outside_it():
    rows = [
        Release(0, True, 30, 0.05, 0.06, 0.05),  # let go at the goal, stayed
        Release(1, False, 31, 0.14, 0.11, 0.24),  # let go at the goal, moved off
        Release(2, False, 10, 0.70, -0.09, 0.70),  # let go far away: a drop, not moved off
        Release(3, False, None, None, None, 0.28),  # never let go
    ]
    assert [r.moved_off for r in rows] == [False, True, False, False]
    assert summary(rows) == (
        "success 1/4; released 3, 2 within 0.15 m of the goal, 1 of those ended outside it; "
        "at the release a median 0.140 m from the goal and 0.060 m above it"
    )


def test_a_real_run_records_each_episode():
    args = SimpleNamespace(policy="state", base_movement=False, checkpoints=None, episodes=2,
                           seed=0)  # fmt: skip
    rows = measure(args)
    assert [r.episode for r in rows] == [0, 1]
    for r in rows:
        assert r.end_dist >= 0
        if r.success:  # a success let go within the threshold and kept the object there
            assert r.step is not None and r.dist < 0.15 and r.end_dist < 0.15
