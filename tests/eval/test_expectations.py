"""The report says what the README says of configurations known to be weak (NoNav learned
~0 %), and nothing for the default configuration; the table and the README agree."""

import re
from pathlib import Path

import pytest

from rearrange.eval.cli import main, parse_args
from rearrange.eval.expectations import EXPECTATIONS, config_name, expectation_note
from rearrange.eval.report import EpisodeRecord, EvalResult, format_table
from rearrange.eval.runner import _config_dict

README = Path(__file__).resolve().parents[2] / "README.md"


def _config(*argv: str) -> dict:
    return _config_dict(parse_args(["tidy_house", *argv]))


@pytest.mark.parametrize(
    "argv,name",
    [
        ([], "learned"),
        (["--oracle", "nav"], "learned_oracle_nav"),
        (["--no-nav"], "learned_nonav"),
        (["--base-movement"], "learned_bm"),
        (["--skills", "oracle"], "oracle"),
        (["--skills", "oracle", "--no-nav"], "oracle_nonav"),
        (["--no-nav", "--oracle", "pick"], ""),
        (["--policy", "depth"], "learned_depth"),
        (["--policy", "depth", "--base-movement"], "learned_bm_depth"),
        (["--policy", "depth", "--no-nav"], "learned_nonav_depth"),
        (["--policy", "depth", "--no-nav", "--oracle", "pick"], ""),
        (["--policy", "depth", "--oracle", "nav"], ""),
        (["--policy", "depth", "--stochastic", "nav"], ""),
        (["--stochastic"], ""),
        (["--no-nav-unstick"], ""),  # the figures are with the unstick
        (["--policy", "depth", "--no-nav-unstick"], ""),
    ],
)
def test_config_names_follow_hab_learned(argv, name):
    assert config_name(_config(*argv)) == name


def _report(*argv: str) -> str:
    eps = [EpisodeRecord("a", 0, False, 3000, "pick", "not holding")]
    return format_table(EvalResult("tidy_house", "TP-SRL", ["pick_1"], eps, _config(*argv)))


def test_nonav_learned_report_says_what_to_expect():
    text = _report("--no-nav")
    assert "note: NoNav learned: expected ~0 % full task on tidy_house" in text
    assert 'see README, "Known weak configurations"' in text


def test_nonav_on_depth_report_says_what_to_expect():
    text = _report("--no-nav", "--policy", "depth")
    assert "note: NoNav on depth: expected ~0 % full task on tidy_house" in text


def test_every_skill_on_depth_says_what_the_shipped_files_measured(tmp_path):
    text = _report("--policy", "depth")
    assert "note: every skill on depth: expected ~36 % full task on tidy_house" in text
    assert "note:" not in _report("--policy", "depth", "--checkpoints", str(tmp_path))


def test_the_default_says_it_is_weak_where_it_is():
    eps = [EpisodeRecord("a", 0, False, 3000, "pick", "not holding")]
    result = EvalResult("prepare_groceries", "TP-SRL", ["pick_1"], eps, _config())
    text = format_table(result)
    assert (
        "note: every skill learned (state): expected ~26 % full task on prepare_groceries" in text
    )


def test_no_note_for_the_default_configuration_or_own_checkpoints(tmp_path):
    assert "note:" not in _report()  # tidy_house: the default is not weak there
    assert "note:" not in _report("--oracle", "nav")
    assert "note:" not in _report("--no-nav", "--checkpoints", str(tmp_path))
    assert "note:" not in _report("--no-nav", "--newest-run")


def test_every_expectation_is_in_the_readme_table():
    text = README.read_text()
    section = text.split("### Known weak configurations", 1)[1].split("\n#", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| ") and "%" in ln]
    header = next(ln for ln in section.splitlines() if ln.startswith("| configuration"))
    scenarios = [c.strip() for c in header.strip("|").split("|")]
    for e in EXPECTATIONS:
        row = next((r for r in rows if f"`{e.config}`" in r), None)
        assert row is not None, f"README has no row for {e.config}"
        cells = [c.strip() for c in row.strip("|").split("|")]
        cell = cells[scenarios.index(e.scenario)]
        assert re.search(rf"\b{e.full_task_pct} %", cell), (e, cell)


def test_cli_prints_the_note_for_nonav_learned(tmp_path, capsys):
    # 5 HAB steps with the shipped base-moving checkpoints: the report, not the success
    rc = main(["tidy_house", "--no-nav", "--episodes", "1", "--max-steps", "5", "--videos",
               "0", "--out", str(tmp_path), "--no-progress"])  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out
    assert "full task" in out and "note: NoNav learned: expected ~0 %" in out
    assert expectation_note("tidy_house", _config()) == ""
