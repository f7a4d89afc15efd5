"""Run a benchmark with the scripted skills as they were before issue 27 item 4.

The "before" rows of this folder's tables: the oracle skills of commit 8b6bee7
(`rearrange/skills/oracle_{articulated,manip,nav}.py`, `ik.py`, `arm_sweep.py`), taken
from git into a temporary folder and put in place of today's through
`rearrange.skills.registry.make_oracle`, run by today's benchmark in today's world (the
world that blocks the robot is not in that commit, so it cannot simply be checked out).
The HAB executor's arm reset between skills is today's.

    PYTHONPATH=/tmp/blk MUJOCO_GL=egl python benchmarks/results/oracle_blocking/before_skills.py \\
        oracle_success --import blockon --episodes 50 [--base-movement]
    PYTHONPATH=/tmp/blk MUJOCO_GL=egl python benchmarks/results/oracle_blocking/before_skills.py \\
        hab_oracle --import blockon --episodes 20
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
from pathlib import Path

COMMIT = "8b6bee7"
ROOT = Path(__file__).resolve().parents[3]
FILES = {  # module name in the temp folder <- path at COMMIT
    "old_art": "rearrange/skills/oracle_articulated.py",
    "old_manip": "rearrange/skills/oracle_manip.py",
    "old_nav": "rearrange/skills/oracle_nav.py",
    "old_ik": "rearrange/skills/ik.py",
    "old_sweep": "rearrange/skills/arm_sweep.py",
}
IMPORTS = {  # intra-skill imports pointed at the old copies
    "from rearrange.skills.oracle_nav import": "from old_nav import",
    "from rearrange.skills.ik import": "from old_ik import",
    "from rearrange.skills.arm_sweep import": "from old_sweep import",
}


def install_old_skills() -> None:
    folder = Path(tempfile.mkdtemp(prefix="oracle_before_"))
    for name, path in FILES.items():
        text = subprocess.run(
            ["git", "show", f"{COMMIT}:{path}"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for old, new in IMPORTS.items():
            text = text.replace(old, new)
        (folder / f"{name}.py").write_text(text)
    sys.path.insert(0, str(folder))
    old_art, old_manip, old_nav = (
        importlib.import_module(n) for n in ("old_art", "old_manip", "old_nav")
    )
    import rearrange.skills.registry as registry

    def make_oracle(skill_name: str, base_movement: bool = False):
        if skill_name == "nav":
            return old_nav.OracleNav()
        if skill_name == "pick":
            return old_manip.OraclePick(base_movement=base_movement)
        if skill_name == "place":
            return old_manip.OraclePlace(base_movement=base_movement)
        return old_art.OracleArticulation(skill_name, base_movement=base_movement)

    registry.make_oracle = make_oracle


def main() -> None:
    bench, args = sys.argv[1], sys.argv[2:]
    if bench not in ("oracle_success", "hab_oracle"):
        raise SystemExit("usage: before_skills.py {oracle_success|hab_oracle} [benchmark args]")
    for i, a in enumerate(args):  # the plugin first: it must patch defaults before any use
        if a == "--import":
            importlib.import_module(args[i + 1])
    install_old_skills()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    module = importlib.import_module(bench)
    sys.argv = [f"{bench}.py", *args]
    result = module.main(args) if bench == "oracle_success" else module.main()
    raise SystemExit(result or 0)


if __name__ == "__main__":
    main()
