"""Every `python -m ...` command quoted in README.md and benchmarks/RESULTS.md still runs:
its module answers `--help`, and each flag the quote passes (`--foo`) is in that help.

Why: a quoted command whose flag was renamed fails for the reader with `unrecognized
arguments`. One `--help` subprocess per distinct module (with a timeout); the modules import
torch and the simulator lazily; they run one per core at once, each module once for both
files, so the test is not marked slow.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import pytest
from doc_commands import DocCommand, commands_in

ROOT = Path(__file__).resolve().parents[2]
DOCS = {"README.md": ROOT / "README.md", "RESULTS.md": ROOT / "benchmarks" / "RESULTS.md"}
HELP_TIMEOUT_S = 120
_HELP_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*")


@cache  # README and RESULTS quote many of the same modules
def _help(argv: tuple[str, ...]) -> tuple[int, str]:
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    try:
        proc = subprocess.run(
            [sys.executable, *argv, "--help"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=HELP_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return -1, f"--help timed out after {HELP_TIMEOUT_S} s"
    return proc.returncode, proc.stdout + proc.stderr


def _known_flags(help_text: str) -> set[str]:
    return set(_HELP_FLAG.findall(help_text))


def _subcommand(cmd: DocCommand) -> str | None:
    """The first word after the module when it is a plain word (`ship_skill export ...`)."""
    head = cmd.text.split(cmd.module if not cmd.script else cmd.script, 1)[-1].split()
    return head[0] if head and re.fullmatch(r"[a-z][a-z_]*", head[0]) else None


def check(commands: list[DocCommand]) -> list[str]:
    """One line per problem: a module whose --help fails, or a quoted flag it does not know
    (looked up in the subcommand's --help too, e.g. `ship_skill export --help`)."""
    argvs = sorted({c.argv for c in commands})
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # the subprocesses at once
        helps = dict(zip(argvs, pool.map(_help, argvs)))
    problems = []
    for cmd in commands:
        rc, text = helps[cmd.argv]
        if rc != 0:
            last = text.strip().splitlines()[-1] if text.strip() else f"exit code {rc}"
            problems.append(f"{cmd.source}: `{' '.join(cmd.argv)} --help` failed: {last}")
            continue
        unknown = [f for f in cmd.flags if f not in _known_flags(text)]
        sub = _subcommand(cmd)
        if unknown and sub:
            key = (*cmd.argv, sub)
            if key not in helps:
                helps[key] = _help(key)
            sub_rc, sub_text = helps[key]
            if sub_rc == 0:
                unknown = [f for f in unknown if f not in _known_flags(sub_text)]
        if unknown:
            problems.append(f"{cmd.source}: {cmd.module} has no {', '.join(unknown)}: {cmd.text}")
    return problems


def test_the_parser_reads_every_quoting_style(tmp_path):
    md = tmp_path / "doc.md"
    md.write_text(
        "Run `MUJOCO_GL=egl .venv/bin/python -m\n"
        "rearrange.eval tidy_house --episodes 3` or:\n\n"
        "```bash\n"
        "torchrun --nproc-per-node 2 -m rearrange.train_skill nav ver.num_envs=8 +algo=pql\n"
        "python -m rearrange.eval_skill pick [--base-movement] --json out.json  # not --this\n"
        "python -m benchmarks.systems --quick && python -m pytest --collect-only\n"
        "python benchmarks/hab_oracle.py \\\n"
        "    --episodes 2\n"
        "```\n\n"
        "    python -m benchmarks.hab_learned --configs learned\n\n"
        "A flag alone, `--videos`, and `python -m json.tool --sort-keys`, are not commands.\n"
    )
    got = [(c.module, c.flags) for c in commands_in(md)]
    assert got == [
        ("rearrange.train_skill", ()),  # --nproc-per-node is torchrun's
        ("rearrange.eval_skill", ("--base-movement", "--json")),
        ("benchmarks.systems", ("--quick",)),
        ("benchmarks.hab_oracle", ("--episodes",)),
        ("benchmarks.hab_learned", ("--configs",)),
        ("rearrange.eval", ("--episodes",)),
    ]
    assert [c.argv for c in commands_in(md)][3] == ("benchmarks/hab_oracle.py",)
    assert commands_in(md)[-1].source == "doc.md:1"


def test_the_check_catches_a_stale_flag(tmp_path):
    md = tmp_path / "doc.md"
    md.write_text("`python -m rearrange.eval tidy_house --episodes 3 --workload both`\n")
    (problem,) = check(commands_in(md))
    assert "rearrange.eval has no --workload" in problem and problem.startswith("doc.md:1")


@pytest.mark.parametrize("name", sorted(DOCS))
def test_documented_commands_answer_help_and_know_their_flags(name):
    commands = commands_in(DOCS[name], name)
    modules = {c.module for c in commands}
    # the parser still finds the commands these files are known to quote
    expected = {"README.md": {"rearrange.eval", "rearrange.train_skill", "rearrange.eval_skill"},
                "RESULTS.md": {"benchmarks.hab_learned", "benchmarks.systems"}}[name]  # fmt: skip
    assert expected <= modules, sorted(modules)
    problems = check(commands)
    assert not problems, "\n".join(problems)
