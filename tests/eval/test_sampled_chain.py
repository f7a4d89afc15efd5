"""`python -m rearrange.eval SCENARIO --stochastic [SKILL,...]`: the named learned skills
sample their actions, from a seed per episode and skill, so a run repeats from --seed; the
report's label and config say which skills sampled."""

import json
import sys
from pathlib import Path

import pytest

from rearrange.eval.cli import main, parse_args

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "skills"))
from skills_testlib import train_ckpt  # noqa: E402


def _run(tmp_path, ckpts, name, *extra):
    out = tmp_path / name
    rc = main(["tidy_house", "--checkpoints", str(ckpts), "--oracle", "nav,place",
               "--episodes", "1", "--videos", "0", "--out", str(out), "--no-progress",
               "--step-limit", "pick=25", *extra])  # fmt: skip
    assert rc == 0
    return json.loads((out / "results.json").read_text())


def test_a_sampled_pick_repeats_from_the_seed_and_says_it_sampled(tmp_path, capsys, monkeypatch):
    import numpy as np

    from rearrange.skills.learned import LearnedSkill

    acted = []
    act = LearnedSkill.act

    def spy(self, obs, sim):
        acted.append(act(self, obs, sim))
        return acted[-1]

    monkeypatch.setattr(LearnedSkill, "act", spy)
    ckpts = tmp_path / "ckpts"
    train_ckpt(ckpts / "pick.pt")  # untrained: the actions, not the success, are compared
    runs = {}
    for name, extra in (("a", ["--stochastic", "pick"]), ("b", ["--stochastic", "pick"]),
                        ("mean", [])):  # fmt: skip
        acted.clear()
        runs[name] = (_run(tmp_path, ckpts, name, *extra), np.stack(acted))
    (a, a_acts), (b, b_acts), (mean, mean_acts) = runs["a"], runs["b"], runs["mean"]
    assert "sampled actions" in capsys.readouterr().out
    assert a["label"] == "TP-SRL (learned, sampled pick, oracle nav+place)"
    assert a["config"]["stochastic"] == ["pick"]
    assert len(a_acts) == 25 and np.array_equal(a_acts, b_acts)  # the same draws
    assert a["episodes"] == b["episodes"]
    assert len(mean_acts) == 25 and not np.allclose(a_acts, mean_acts, atol=1e-3)
    assert mean["config"]["stochastic"] == [] and "sampled" not in mean["label"]


def test_stochastic_alone_means_every_learned_skill():
    assert parse_args(["tidy_house", "--stochastic"]).stochastic == ["all"]
    assert parse_args(["tidy_house", "--stochastic", "nav,pick"]).stochastic == ["nav", "pick"]
    assert parse_args(["tidy_house"]).stochastic == []


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["tidy_house", "--stochastic", "fly"], "--stochastic 'fly'"),
        (["tidy_house", "--skills", "oracle", "--stochastic"], "drop it with --skills oracle"),
        (["tidy_house", "--oracle", "nav", "--stochastic", "nav"], "--oracle nav"),
    ],
)
def test_bad_stochastic_arguments_are_one_line_usage_errors(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]


def test_a_sampled_skill_the_plans_do_not_run_learned_is_named(tmp_path, capsys):
    ckpts = tmp_path / "ckpts"
    train_ckpt(ckpts / "pick.pt")
    rc = main(["tidy_house", "--checkpoints", str(ckpts), "--oracle", "nav,place",
               "--stochastic", "open_fridge", "--episodes", "1", "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err
    assert "--stochastic open_fridge: these plans run no learned open_fridge" in err
