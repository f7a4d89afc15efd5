"""benchmarks/pql_vs_ppo.py: the commands it runs and its threshold table."""

from benchmarks.pql_vs_ppo import SnapshotEval, table, train_command


def test_commands_train_both_algos_on_the_cpu_profile(tmp_path):
    pql = train_command("pick", "pql", 1, tmp_path, 50_000)
    ver = train_command("pick", "ver", 1, tmp_path, 50_000)
    for cmd in (pql, ver):
        assert cmd[2:6] == ["rearrange.train_skill", "pick", "--profile", "cpu"]
    assert "--algo" in pql and "pql.checkpoint_interval=50000" in pql and "pql.seed=1" in pql
    assert "--algo" not in ver and "ver.checkpoint_interval=48" in ver and "ver.seed=1" in ver


def test_table_reports_the_first_snapshot_over_each_threshold():
    rows = [
        SnapshotEval("pick", "pql", 0, "a", 100_000, 5.0, 0.4),
        SnapshotEval("pick", "pql", 0, "b", 200_000, 10.0, 0.75),
        SnapshotEval("pick", "pql", 0, "c", 300_000, 15.0, 0.6),
        SnapshotEval("pick", "ver", 0, "a", 500_000, 12.0, 0.55),
    ]
    lines = table(rows).splitlines()
    assert lines[2] == "| pick | pql | 0 | 10.0 / 200,000 | 10.0 / 200,000 | - | 75% |"
    assert lines[3] == "| pick | ver | 0 | 12.0 / 500,000 | - | - | 55% |"
