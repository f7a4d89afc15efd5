"""`rearrange.eval` loads the shipped checkpoints whatever is under runs/, a training run only
when asked (`--checkpoints runs/SKILL/RUN`: that skill from the run, the others shipped;
`--newest-run`), and says which checkpoint each skill uses."""

import sys
from pathlib import Path

import pytest

from rearrange.eval.cli import main, parse_args
from rearrange.eval.runner import load_skills
from rearrange.skills import SkillError
from rearrange.skills.pretrained import PRETRAINED_DIR

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "skills"))
from skills_testlib import train_ckpt  # noqa: E402

PLAN_SKILLS = ["nav", "pick", "place"]  # what tidy_house's plans run


@pytest.fixture
def pick_run(tmp_path, monkeypatch):
    """cwd with runs/pick/r1, an (untrained) interrupted training run of pick."""
    monkeypatch.chdir(tmp_path)
    run = Path("runs") / "pick" / "r1"
    train_ckpt(run / "checkpoints" / "latest.pt")
    (run / "config.yaml").write_text("skill: pick\ntask:\n  base_movement: false\n")
    return run


def _which(capsys) -> dict[str, str]:
    """skill -> its printed `skill NAME: PATH ...` line."""
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("skill ")]
    return {ln.split(":")[0].split()[1]: ln for ln in lines}


def test_default_loads_the_shipped_checkpoints_beside_a_training_run(pick_run, capsys):
    load_skills(parse_args(["tidy_house"]), PLAN_SKILLS)
    which = _which(capsys)
    for name in PLAN_SKILLS:
        assert f"skill {name}: {PRETRAINED_DIR / name}.pt (shipped;" in which[name]


def test_checkpoints_run_replaces_its_skill_only(pick_run, capsys):
    skills = load_skills(parse_args(["tidy_house", "--checkpoints", str(pick_run)]), PLAN_SKILLS)
    which = _which(capsys)
    run_line = f"skill pick: {pick_run}/checkpoints/latest.pt (training run, not the shipped"
    assert which["pick"] == run_line + " checkpoint)"
    assert "(shipped;" in which["nav"] and "(shipped;" in which["place"]
    assert skills["pick"].policy is not None


def test_newest_run_uses_the_runs_there_are(pick_run, capsys):
    load_skills(parse_args(["tidy_house", "--newest-run"]), PLAN_SKILLS)
    which = _which(capsys)
    assert f"{pick_run}/checkpoints/latest.pt (training run" in which["pick"]
    assert "(shipped;" in which["nav"] and "(shipped;" in which["place"]


def test_newest_run_without_any_run_is_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SkillError) as err:
        load_skills(parse_args(["tidy_house", "--newest-run"]), PLAN_SKILLS)
    msg = str(err.value)
    assert "\n" not in msg and "no training run of nav, pick, place under runs/" in msg
    assert "drop --newest-run" in msg


def test_a_run_of_a_skill_the_plans_do_not_run_is_refused(pick_run):
    args = parse_args(["tidy_house", "--checkpoints", str(pick_run)])
    with pytest.raises(SkillError, match="training run of 'pick', which these plans do not"):
        load_skills(args, ["nav", "place"])
    ckpt = pick_run / "checkpoints" / "latest.pt"
    with pytest.raises(SkillError, match="is a file, but the plans run several skills"):
        load_skills(parse_args(["tidy_house", "--checkpoints", str(ckpt)]), PLAN_SKILLS)


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["tidy_house", "--checkpoints", "runs/pick/typo"], "--checkpoints runs/pick/typo does"),
        (["tidy_house", "--checkpoints", "x", "--newest-run"], "not allowed with argument"),
    ],
)
def test_checkpoint_usage_errors_are_one_line(argv, needle, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and needle in err, err
    assert "runs/SKILL/RUN" in err or "not allowed" in err
