"""The package's import layers (README "Layout"): each subpackage imports only from the
layers below it, so the seams stay where the design put them (e.g. `skills` never reaches up
into the `eval_skill` CLI, `sim` never into `tasks`). Imports inside functions count too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rearrange"

# Rank of each top-level name in `rearrange`: an import must go to a strictly lower rank
# (or stay inside its own subpackage). The CLI modules at the top may use each other.
RANKS = {
    "skill_spec": 0,
    "sim": 1,
    "tasks": 2,
    "models": 2,
    "runtime": 3,
    "ver_backend": 4,
    "pql": 4,
    "skills": 5,
    "planner": 5,
    "eval": 6,
    "distill": 6,
}
TOP = 7  # config, logs, gym_envs, trainers, the CLIs (train_skill, eval_skill, ship_skill, ...)
TOP_NAMES = {
    "__init__",
    "config",
    "logs",
    "gym_envs",
    "train_skill",
    "trainers",
    "eval_skill",
    "ship_skill",
    "select_checkpoint",
    "train_curve",
}


def _owner(path: Path, root: Path = PACKAGE) -> str:
    """The top-level name a file belongs to: its subpackage, or its own module name."""
    rel = path.relative_to(root)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _rank(name: str) -> int:
    if name in RANKS:
        return RANKS[name]
    if name in TOP_NAMES:
        return TOP
    raise KeyError(name)


def _imported(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, top-level name under rearrange) of every absolute `rearrange.X` import."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            mods = [node.module]
            if node.module == "rearrange":  # from rearrange import sim, ...
                mods = [f"rearrange.{a.name}" for a in node.names]
        else:
            continue
        out += [(node.lineno, m.split(".")[1]) for m in mods if m.startswith("rearrange.")]
    return out


def layer_violations(root: Path = PACKAGE) -> list[str]:
    bad = []
    for path in sorted(root.rglob("*.py")):
        owner = _owner(path, root)
        for line, target in _imported(ast.parse(path.read_text(), str(path))):
            if target != owner and _rank(target) >= _rank(owner) and _rank(owner) != TOP:
                bad.append(f"{path.relative_to(root.parent)}:{line}: {owner} -> {target}")
    return bad


def test_every_module_has_a_layer():
    names = {_owner(p) for p in PACKAGE.rglob("*.py")}
    unknown = sorted(n for n in names if n not in RANKS and n not in TOP_NAMES)
    assert not unknown, f"give these a rank in tests/test_layers.py: {unknown}"


def test_no_import_reaches_up_a_layer():
    assert layer_violations() == []


def test_the_check_sees_an_upward_import(tmp_path):
    pkg = tmp_path / "rearrange"
    (pkg / "sim").mkdir(parents=True)
    (pkg / "sim" / "a.py").write_text("def f():\n    from rearrange.tasks.base import x\n")
    (pkg / "tasks").mkdir()
    (pkg / "tasks" / "b.py").write_text("from rearrange.sim import a\nimport rearrange.tasks.c\n")
    assert layer_violations(pkg) == ["rearrange/sim/a.py:2: sim -> tasks"]


@pytest.mark.parametrize("name", sorted(RANKS))
def test_ranked_packages_exist(name):
    assert (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file()
