"""benchmarks/student_speed.py measures the depth student's acting and update on the shapes
a distillation round uses (a tiny size here: the numbers' existence, not their speed)."""

import math

from benchmarks import student_speed


def test_measure_times_acting_and_an_update_of_the_student():
    spec = {"threads": 1, "channels_last": True, "depth_size": 32, "batch": 2, "chunks": 2,
            "chunk_len": 4, "act_calls": 1, "updates": 1}  # fmt: skip
    out = student_speed.measure(spec)
    assert set(out) == {"act_fps", "update_fps"}
    assert all(math.isfinite(v) and v > 0 for v in out.values())


def test_cells_are_median_min_max():
    assert student_speed.cell([30.0, 10.0, 20.0]) == "20 [10–30]"
    assert student_speed.cell([]) == "n/a"
