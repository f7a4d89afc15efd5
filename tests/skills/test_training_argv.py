"""A manifest's training command read back: its train_skill arguments as the shell splits
them, and the trainer it ran (pretrained.training_argv, train_skill.manifest_algo)."""

import pytest

from rearrange.skills.pretrained import training_argv
from rearrange.train_skill import manifest_algo


def test_arguments_are_split_as_a_shell_would_and_notes_dropped():
    command = ("python -m rearrange.train_skill pick --algo pql 'x=[1,1,4]' run.total_steps=5 "
               "(then 20k more steps from its latest.pt)")  # fmt: skip
    assert training_argv(command) == ["pick", "--algo", "pql", "x=[1,1,4]", "run.total_steps=5"]


@pytest.mark.parametrize("command", ["", "python -m rearrange.eval tidy_house", "a 'b"])
def test_a_command_that_is_not_train_skill_has_no_arguments(command):
    assert training_argv(command) == []


@pytest.mark.parametrize(
    ("args", "algo"),
    [("pick --algo pql", "pql"), ("pick --algo=distill", "distill"), ("pick +algo=pql", "pql"),
     ("nav --algo ver", "ver"), ("pick --system ver", "ver"), ("nav --profile cpu", "ver"),
     ("pick --profile cpu", "pql"), ("pick --profile=cpu", "pql"),
     ("pick run.run_name=--algo_pql", "ver")],
)  # fmt: skip
def test_the_trainer_is_read_from_the_arguments(args, algo):
    assert manifest_algo(args.split()[0], f"python -m rearrange.train_skill {args}") == algo
