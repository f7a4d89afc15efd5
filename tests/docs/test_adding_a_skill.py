"""docs/ADDING_A_SKILL.md's worked example: an eighth skill (reach) defined outside the
package is one definition plus one task class, and the registries accept it: its env builds
and steps, it trains, and a spawned env worker knows it. Run in subprocesses, so the skill
never joins this process's registries (the coverage test counts them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"
DOC = ROOT / "docs" / "ADDING_A_SKILL.md"


def _run(args: list[str], timeout: int = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "MUJOCO_GL": "egl", "PYTHONPATH": str(EXAMPLES)}
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


def test_the_doc_shows_the_code_the_tests_run():
    doc = DOC.read_text()
    for name in ("reach_skill.py", "train_reach.py"):
        code = (EXAMPLES / name).read_text()
        assert f"```python\n{code}```" in doc, f"docs/ADDING_A_SKILL.md must quote {name} as it is"


def test_the_reach_skill_builds_steps_and_trains(tmp_path):
    proc = _run([str(EXAMPLES / "train_reach.py"), str(tmp_path)])
    assert proc.returncode == 0, proc.stderr[-3000:]
    sensors = "['ee_pos', 'joint', 'obj_start_sensor']"
    assert f"reach observes {sensors} reward terms" in proc.stdout
    from rearrange.runtime.checkpoint import SkillCheckpoint

    ckpt = SkillCheckpoint.load(tmp_path / "reach" / "tiny" / "checkpoints" / "latest.pt")
    assert ckpt.skill == "reach" and ckpt.num_steps == 64
    assert ckpt.action_space.shape == (7,) and ckpt.step_limit == 100


SPAWNED = """
import pickle, sys
from rearrange.runtime.env_worker import TaskEnvFactory
from rearrange.skill_spec import SKILLS
from rearrange.tasks import default_task_config
if sys.argv[1] == "parent":
    import reach_skill
    cfg = default_task_config("reach", obs_preset="state", num_episodes=1)
    sys.stdout.buffer.write(pickle.dumps(TaskEnvFactory("reach", cfg)))
else:
    assert "reach" not in SKILLS
    env = pickle.loads(sys.stdin.buffer.read())(0)  # what a spawned worker does
    obs, _ = env.reset(seed=0)
    print(sorted(obs))
"""


def test_a_spawned_env_worker_knows_the_skill_its_env_class_registers():
    parent = subprocess.run(
        [sys.executable, "-c", SPAWNED, "parent"], cwd=ROOT, capture_output=True, timeout=120,
        env={**os.environ, "MUJOCO_GL": "egl", "PYTHONPATH": str(EXAMPLES)},
    )  # fmt: skip
    assert parent.returncode == 0, parent.stderr.decode()[-3000:]
    child = subprocess.run(
        [sys.executable, "-c", SPAWNED, "child"], cwd=ROOT, capture_output=True, timeout=120,
        input=parent.stdout, env={**os.environ, "MUJOCO_GL": "egl", "PYTHONPATH": str(EXAMPLES)},
    )  # fmt: skip
    assert child.returncode == 0, child.stderr.decode()[-3000:]
    assert child.stdout.decode().strip() == "['ee_pos', 'joint', 'obj_start_sensor']"
