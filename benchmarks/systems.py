"""Systems benchmark (VER paper Table 1 analogue): SPS of ddppo, nover and ver over a sweep.

Same machine, same policy (small state-only LSTM), same synthetic reach env; only the
collection system changes. Every row is one workload:

- env-level spread s (1, 2, 4, 8): env i of N takes s**(i/(N-1)) times the base step cost
  (the environment-level straggler effect, VER §2.2);
- action-level variance σ: each step's cost is multiplied by a lognormal exp(N(0, σ²))
  (the action-level straggler effect, VER §2.1);
- busy envs: a step spins for its cost in *CPU time* (`SyntheticEnvConfig.busy_wait`), so the
  env workers compete for cores as real simulators do; with more envs than cores a step's
  wall time grows, and a system cannot get "free" throughput from idle sleeping envs;
- learner cost ≈ 1/3 of wall time (paper: learning a large visual encoder is a large share
  of each iteration): the real PPO update on the rollout, padded to a fixed time L per
  update that is the same for every system of the row, calibrated once per row from the
  collect-only bound so that L / (rollout collect time + L) = `--learn-fraction` there
  (the padding sleeps, like a main process waiting on a GPU learner; `--learner-busy` spins);
- ≥ 3 repeats per (row, system), reported as median [min–max], repeats interleaved across
  systems so that drift of the machine's load hits all of them alike;
- the collect-only bound (VER collection with learning skipped) in every row: no system can
  beat it, and VER/bound shows how much of the collection speed learning costs.

SPS is training throughput (collection + learning) measured by the trainer from the end of
the first rollout (worker start-up and resets excluded). Ratios are of medians.

Paper analogue (an a-priori judgement, not a fit): the VER paper's Table 1 task, Open Fridge
on Habitat 2.0, has strong action-level variance (contact-rich arm physics next to cheap
free-space steps) and a modest env-level spread (the scenes are rearrangements of the same
ReplicaCAD apartments, so rendering and physics cost differ little between envs), 16 envs on
10 CPUs per GPU, and a learner that is a large share of wall time. The closest row here is
spread 2, σ 0.5, busy envs, learner 1/3; run with about 1.6 envs per core for the same CPU
contention (`--num-envs` ≈ 1.6 × cores). The script also names the row whose ratios are
closest to the paper's (VER/DD-PPO 2.5, VER/NoVER 1.3, NoVER/DD-PPO 1.9) -- that is a
match of outcomes, not evidence that the workload is alike.

What the ratios show: how much each system's collection order loses to the stragglers of
this synthetic workload on this machine. What they do not show: anything about a real
simulator's step-time distribution, GPU rendering or GPU learning (see
benchmarks/systems_real.py for the real skill envs).

    python -m benchmarks.systems                          # full sweep (long: ~1 h on 2 cores)
    python -m benchmarks.systems --spreads 2 --sigmas 0.5 --repeats 5
    python -m benchmarks.systems --quick                  # smoke test, seconds
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import math
import os
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

# Only light imports at module level: env workers are spawned, and each re-imports this
# module as __mp_main__ (torch would add seconds per worker to every run's start-up).
from benchmarks.model_configs import model_config
from benchmarks.spread import median_cell
from rearrange.runtime.synthetic_env import SyntheticEnvConfig, SyntheticEnvFactory

SYSTEMS = ("ddppo", "nover", "ver")
BOUND = "collect_only"
PAPER_RATIOS = {"VER/DD-PPO": 2.5, "VER/NoVER": 1.3, "NoVER/DD-PPO": 1.9}  # Table 1, 1 GPU
PAPER_ANALOGUE = (2.0, 0.5)  # (spread, sigma), see the module docstring


# ---------------------------------------------------------------------------- learner cost
def _padded_learner(policy, ppo, total_updates, grad_sync=None, *, target_s, busy):
    """The real PPO learner whose update then waits until `target_s` has passed since it
    started (sleeping, or spinning with `busy`)."""
    from rearrange.ver_backend.learner import Learner

    class PaddedLearner(Learner):
        def update(self, rollout):
            start = time.perf_counter()
            stats = super().update(rollout)
            end = start + target_s
            if busy:
                while time.perf_counter() < end:
                    pass
            else:
                time.sleep(max(0.0, end - time.perf_counter()))
            return stats

    return PaddedLearner(policy, ppo, total_updates, grad_sync=grad_sync)


def _policy(obs_space, action_space):
    from rearrange.models import build_policy

    return build_policy(obs_space, action_space, model_config("state"))


# ---------------------------------------------------------------------------- runs
@dataclass
class Run:
    system: str
    sps: float
    learn_share: float  # learn time per update / wall time per rollout (after start-up)


@dataclass
class Row:
    spread: float
    sigma: float
    learn_target_s: float = 0.0
    runs: list[Run] = field(default_factory=list)

    def sps(self, system: str) -> list[float]:
        return [r.sps for r in self.runs if r.system == system]

    def median(self, system: str) -> float:
        values = self.sps(system)
        return statistics.median(values) if values else math.nan

    def learn_share(self, system: str) -> float:
        shares = [r.learn_share for r in self.runs if r.system == system]
        return statistics.median(shares) if shares else math.nan

    def ratios(self) -> dict[str, float]:
        ver, nover, ddppo = self.median("ver"), self.median("nover"), self.median("ddppo")
        return {
            "VER/DD-PPO": ver / ddppo,
            "VER/NoVER": ver / nover,
            "NoVER/DD-PPO": nover / ddppo,
            "VER/bound": ver / self.median(BOUND),
        }


def run_once(system: str, env: SyntheticEnvConfig, args, learn_target_s: float):
    """One training run of `args.updates` rollouts; returns the trainer's TrainResult."""
    import torch

    from rearrange.runtime.run import RunConfig, RunSetup
    from rearrange.ver_backend.config import PPOConfig, VERConfig
    from rearrange.ver_backend.trainer import VERTrainer

    torch.manual_seed(0)
    run = RunConfig(
        num_envs=args.num_envs,
        total_steps=10**9,
        checkpoint_every_steps=10**9,
        log_every_steps=10**9,
        device="cpu",
    )
    ver = VERConfig(system="ver" if system == BOUND else system, rollout_steps=args.rollout_steps)
    ppo = PPOConfig(entropy_mode="fixed", entropy_coef=1e-4)  # as the paper's benchmarks
    learner = functools.partial(_padded_learner, target_s=learn_target_s, busy=args.learner_busy)
    with tempfile.TemporaryDirectory() as tmp:
        setup = RunSetup(
            env_factory=SyntheticEnvFactory(env, args.num_envs),
            run_dir=Path(tmp),
            resume=False,
            tensorboard=False,
            progress=False,
        )
        trainer = VERTrainer(
            run, ver, ppo, setup, _policy,
            system=system, learner_factory=learner, max_updates=args.updates,
        )  # fmt: skip
        return trainer.train()


def _record(row: Row, system: str, result, steps_per_rollout: int) -> None:
    # Learning's share of an iteration after start-up: mean learn time per update over the
    # wall time per rollout implied by the SPS (which excludes the first rollout).
    learn_per_update = result.learn_s / max(result.num_updates, 1)
    share = learn_per_update * result.sps / steps_per_rollout
    row.runs.append(Run(system, result.sps, share))
    print(
        f"  spread {row.spread:g} sigma {row.sigma:g} {system:12s} {result.sps:8.1f} SPS"
        f"  learn share {row.runs[-1].learn_share:.2f}",
        flush=True,
    )


def run_row(spread: float, sigma: float, args) -> Row:
    env = SyntheticEnvConfig(
        step_time_ms=args.step_ms,
        step_time_sigma=sigma,
        scale_spread=spread,
        busy_wait=not args.sleep_envs,
    )
    row = Row(spread, sigma)
    steps = args.num_envs * args.rollout_steps
    for _ in range(args.repeats):  # the bound first: it calibrates the learner cost
        _record(row, BOUND, run_once(BOUND, env, args, 0.0), steps)
    rollout_s = steps / row.median(BOUND)
    share = args.learn_fraction
    row.learn_target_s = rollout_s * share / (1.0 - share)
    for _ in range(args.repeats):
        for system in args.systems:
            _record(row, system, run_once(system, env, args, row.learn_target_s), steps)
    return row


# ---------------------------------------------------------------------------- report
def _cell(row: Row, system: str) -> str:
    return median_cell(row.sps(system), empty="-")


def _closest_to_paper(rows: list[Row]) -> Row | None:
    def distance(row: Row) -> float:
        ratios = row.ratios()
        return sum(math.log(ratios[k] / v) ** 2 for k, v in PAPER_RATIOS.items() if ratios[k] > 0)

    complete = [r for r in rows if all(r.sps(s) for s in SYSTEMS)]
    return min(complete, key=distance) if complete else None


def markdown(rows: list[Row], systems: tuple[str, ...]) -> str:
    names = {"ddppo": "DD-PPO", "nover": "NoVER", "ver": "VER"}
    head = ["spread", "σ", "collect-only bound", *(names[s] for s in systems)]
    ratio_keys = ["VER/DD-PPO", "VER/NoVER", "NoVER/DD-PPO", "VER/bound"]
    head += [*ratio_keys, "learn share (VER)", "L (s)"]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for row in rows:
        ratios = row.ratios() if all(row.sps(s) for s in SYSTEMS) else {}
        mark = " (paper analogue)" if (row.spread, row.sigma) == PAPER_ANALOGUE else ""
        cells = [f"{row.spread:g}{mark}", f"{row.sigma:g}", _cell(row, BOUND)]
        cells += [_cell(row, s) for s in systems]
        cells += [f"{ratios[k]:.2f}×" if k in ratios else "-" for k in ratio_keys]
        cells += [f"{row.learn_share('ver'):.2f}", f"{row.learn_target_s:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spreads", default="1,2,4,8", help="env-level spreads (comma list)")
    parser.add_argument("--sigmas", default="0,0.5", help="action-level lognormal sigmas")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--rollout-steps", type=int, default=32)
    parser.add_argument("--updates", type=int, default=6, help="rollouts per run (first excluded)")
    parser.add_argument("--step-ms", type=float, default=10.0, help="base step cost (ms)")
    parser.add_argument("--learn-fraction", type=float, default=1 / 3)
    parser.add_argument("--learner-busy", action="store_true", help="spin instead of sleeping")
    parser.add_argument("--sleep-envs", action="store_true", help="old workload: envs sleep")
    parser.add_argument("--json", type=Path, default=None, help="also write every run here")
    parser.add_argument("--quick", action="store_true", help="smoke test: tiny and fast")
    args = parser.parse_args(argv)
    if args.quick:
        args.spreads, args.sigmas, args.repeats = "4", "0.5", 2
        args.num_envs, args.rollout_steps, args.updates, args.step_ms = 3, 8, 3, 2.0
    args.systems = tuple(s for s in args.systems.split(",") if s)
    if unknown := set(args.systems) - set(SYSTEMS):
        parser.error(f"--systems: unknown {sorted(unknown)}; use {','.join(SYSTEMS)}")
    if not 0 <= args.learn_fraction < 1:
        parser.error("--learn-fraction must be in [0, 1)")
    import torch

    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(1)
    cores = os.cpu_count() or 1
    print(
        f"{args.num_envs} envs on {cores} cores ({args.num_envs / cores:.1f} per core), "
        f"T={args.rollout_steps}, {args.updates} updates, {args.repeats} repeats, "
        f"{'sleeping' if args.sleep_envs else 'busy (CPU-time)'} envs, base {args.step_ms} ms, "
        f"learner {args.learn_fraction:.2f} of wall time at the bound",
        flush=True,
    )
    rows = []
    for spread in parse_floats(args.spreads):
        for sigma in parse_floats(args.sigmas):
            rows.append(run_row(spread, sigma, args))
    print()
    print(markdown(rows, args.systems))
    closest = _closest_to_paper(rows)
    if closest is not None:
        print(
            f"\nRow closest to the paper's ratios {PAPER_RATIOS}: spread {closest.spread:g}, "
            f"σ {closest.sigma:g} (an outcome match, not a workload match)"
        )
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))


if __name__ == "__main__":
    main()
