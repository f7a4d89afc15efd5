"""benchmarks/pql_vs_ppo.py: the commands it runs and its threshold table."""

import pytest

from benchmarks.pql_vs_ppo import SnapshotEval, table, train_command


def test_commands_train_both_algos_on_the_cpu_profile(tmp_path):
    pql = train_command("pick", "pql", 1, tmp_path, 50_000)
    ver = train_command("pick", "ver", 1, tmp_path, 50_000)
    for cmd in (pql, ver):
        assert cmd[2:6] == ["rearrange.train_skill", "pick", "--profile", "cpu"]
    assert pql[6:8] == ["--algo", "pql"] and ver[6:8] == ["--algo", "ver"]
    for cmd in (pql, ver):  # one snapshot interval in env steps for both trainers
        assert "run.checkpoint_every_steps=50000" in cmd and "run.seed=1" in cmd


def test_table_reports_the_first_snapshot_over_each_threshold():
    rows = [
        SnapshotEval("pick", "pql", 0, "a", 100_000, 5.0, 0.4),
        SnapshotEval("pick", "pql", 0, "b", 200_000, 10.0, 0.75),
        SnapshotEval("pick", "pql", 0, "c", 300_000, 15.0, 0.6),
        SnapshotEval("pick", "ver", 0, "a", 500_000, 12.0, 0.55),
    ]
    lines = table(rows).splitlines()
    assert (
        lines[2] == "| pick | pql | 0 | 10.0 / 200,000 | 10.0 / 200,000 | - | 75% | 60% | 0 of 3 |"
    )
    assert lines[3] == "| pick | ver | 0 | 12.0 / 500,000 | - | - | 55% | 55% | 0 of 1 |"


def test_table_says_whether_a_run_kept_what_it_reached():
    rows = [
        SnapshotEval("open_cab", "ver", 0, "a", 150_000, 1.6, 1.0),
        SnapshotEval("open_cab", "ver", 0, "c", 450_000, 4.6, 0.0),
        SnapshotEval("open_cab", "ver", 0, "b", 300_000, 3.1, 0.92),
    ]
    row = table(rows).splitlines()[2]
    assert row.endswith("| 1.6 / 150,000 | 100% | 0% | 2 of 3 |")


def test_ver_schedule_is_fitted_to_the_budget_only_when_asked(tmp_path):
    fitted = train_command("pick", "ver", 0, tmp_path, 100_000, ver_total_steps=1_300_000)
    default = train_command("pick", "ver", 0, tmp_path, 100_000)
    pql = train_command("pick", "pql", 0, tmp_path, 25_000, ver_total_steps=1_300_000)
    assert "run.total_steps=1300000" in fitted and "run.checkpoint_every_steps=100000" in fitted
    assert not any(a.startswith("run.total_steps=") for a in default)
    assert "run.total_steps=1300000" not in pql and "run.total_steps=1000000000" in pql


def test_continue_keeps_finished_runs_and_their_evaluations(tmp_path, monkeypatch):
    import benchmarks.pql_vs_ppo as bench

    rows = [
        SnapshotEval("pick", "pql", 0, "ckpt_0000050000.pt", 50_000, 3.2, 0.62),
        SnapshotEval("pick", "pql", 0, "ckpt_0000100000.pt", 100_000, 6.1, 0.94),
        SnapshotEval("open_cab", "ver", 0, "ckpt_0000200000.pt", 200_000, 4.0, 0.0),
    ]
    out, runs = tmp_path / "out", tmp_path / "runs"
    out.mkdir()
    bench.write_csv(rows, out / "evals.csv")
    assert bench.read_csv(out / "evals.csv") == [
        SnapshotEval(
            r.skill,
            r.algo,
            r.seed,
            r.checkpoint,
            r.steps,
            round(r.minutes, 2),
            round(r.val_success, 3),
        )  # fmt: skip
        for r in rows
    ]
    ckpts = runs / "pick" / "bench_pql_s0" / "checkpoints"
    ckpts.mkdir(parents=True)
    for r in rows[:2]:
        (ckpts / r.checkpoint).write_bytes(b"not read: already evaluated")
    (ckpts.parent / "DONE").write_text("25 min, rc 0\n")

    def no_training(*a, **k):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(bench, "train", no_training)
    argv = ["--skills", "pick", "--algos", "pql", "--seeds", "0", "--continue",
            "--runs-root", str(runs), "--out", str(out)]  # fmt: skip
    assert bench.main(argv) == 0
    table_lines = (out / "table.md").read_text().splitlines()
    assert table_lines[2] == "| open_cab | ver | 0 | - | - | - | 0% | 0% | 0 of 1 |"  # kept
    pick = "| pick | pql | 0 | 3.2 / 50,000 | 6.1 / 100,000 | 6.1 / 100,000 | 94% | 94% | 1 of 2 |"
    assert table_lines[3] == pick
    assert (out / "curves.png").stat().st_size > 0
    assert len(bench.read_csv(out / "evals.csv")) == 3


def test_continue_on_a_fresh_checkout_keeps_runs_evaluated_in_the_csv(tmp_path, monkeypatch):
    """runs/ is not in git: a run with rows in evals.csv is finished even without its dir."""
    import benchmarks.pql_vs_ppo as bench

    out = tmp_path / "out"
    out.mkdir()
    row = SnapshotEval("pick", "ver", 1, "ckpt_0000199680.pt", 199_680, 6.74, 0.08)
    bench.write_csv([row], out / "evals.csv")
    monkeypatch.setattr(bench, "train", lambda *a, **k: pytest.fail("trained again"))
    argv = ["--skills", "pick", "--algos", "ver", "--seeds", "1", "--continue",
            "--runs-root", str(tmp_path / "runs"), "--out", str(out)]  # fmt: skip
    assert bench.main(argv) == 0
    assert bench.read_csv(out / "evals.csv") == [row]
    assert "| pick | ver | 1 | - | - | - | 8% |" in (out / "table.md").read_text()
