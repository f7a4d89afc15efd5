"""Training SPS of the CPU profile beside the collection-only bound of the same workload.

    MUJOCO_GL=egl python -m benchmarks.cpu_profile_sps --skill pick --steps 40960 --repeats 3

Runs `python -m rearrange.train_skill SKILL --profile cpu` with `ver.system=ver` (collect +
learn) and `ver.system=collect_only` (the same env workers and inference, no PPO update),
interleaved, `--repeats` times each, in fresh processes on this machine, and prints
min/median/max SPS of each and the ratio of medians (learner cost = 1 - ratio). SPS is the
trainer's own figure: steps after the first rollout / time since then.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

DONE_RE = re.compile(r"done: (\d+) steps, (\d+) updates, (\d+) SPS")


def run_once(skill: str, system: str, steps: int, extra: list[str]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "rearrange.train_skill", skill, "--profile", "cpu",
               "--algo", "ver", f"ver.system={system}", f"total_steps={steps}", f"runs_root={tmp}",
               "--run-name", "bench", *extra]  # fmt: skip
        env = dict(os.environ, MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"))
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
        match = DONE_RE.search(out.stdout + out.stderr)
        if out.returncode != 0 or match is None:
            raise RuntimeError(f"{' '.join(cmd)} failed: {(out.stderr or out.stdout)[-500:]}")
        return float(match.group(3))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--skill", default="pick")
    p.add_argument("--steps", type=int, default=40960)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("overrides", nargs="*", help="extra hydra overrides for both systems")
    args = p.parse_args(argv)
    sps: dict[str, list[float]] = {"ver": [], "collect_only": []}
    for r in range(args.repeats):
        for system in sps:
            sps[system].append(run_once(args.skill, system, args.steps, args.overrides))
            print(f"repeat {r + 1} {system}: {sps[system][-1]:.0f} SPS", flush=True)
    print(f"\n{args.skill}, CPU profile, {args.steps} steps per run, {os.cpu_count()} CPUs\n")
    print("| system | SPS min | median | max |\n|---|---|---|---|")
    for system, values in sps.items():
        print(f"| {system} | {min(values):.0f} | {statistics.median(values):.0f} | "
              f"{max(values):.0f} |")  # fmt: skip
    ratio = statistics.median(sps["ver"]) / statistics.median(sps["collect_only"])
    print(f"\nver / collect_only (medians): {ratio:.2f} (learning costs {1 - ratio:.0%} of SPS)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
