"""benchmarks/spread.py: the 'median [min–max]' cells of every benchmark table."""

from benchmarks import acting_graph, student_speed, systems_real, trainer_ceiling
from benchmarks.spread import median_cell


def test_median_cell():
    assert median_cell([30.0, 10.0, 20.0]) == "20 [10–30]"
    assert median_cell([1.0, 4.0]) == "2 [1–4]"  # median of an even count: the mean of two
    assert median_cell([0.71234, 0.5, 1.25], digits=3) == "0.712 [0.500–1.250]"
    assert median_cell([]) == "n/a" and median_cell([], empty="-") == "-"


def test_every_table_uses_it():
    assert trainer_ceiling.cell([3.0, 1.0, 2.0]) == "2 [1–3]"
    assert student_speed.cell([]) == "n/a"
    result = systems_real.PresetResult("pick")
    assert result.cell("ver") == "-"
    result.sps["ver"] = [5.0, 7.0, 6.0]
    assert result.cell("ver") == "6 [5–7]"
    assert acting_graph.median_cell is median_cell
