"""Systems benchmark on the real skill envs (issue 4, benchmark (c)): SPS of ddppo, nover, ver.

The same machine, the same policy and the same env (a MuJoCo skill task, pick by default);
only the collection system changes. SPS is training throughput (collection + PPO update),
measured by the trainer after the first rollout (worker start-up and resets excluded).

Each repeat also measures the simulator-only SPS of the same env processes (random actions,
no policy, no learning: benchmarks/sim_ceiling.py), the ceiling of every system; the table
shows it as "sim-only" and VER's share of it as "VER/sim-only". Repeats are interleaved (sim-only,
ddppo, nover, ver, then again) so that drift of the machine's load hits all columns alike;
cells are median [min–max] over repeats, ratios are of medians.

    MUJOCO_GL=egl python -m benchmarks.systems_real                   # this device's defaults
    MUJOCO_GL=egl python -m benchmarks.systems_real --task open_fridge --base-movement
    MUJOCO_GL=egl python -m benchmarks.systems_real --device cpu --preset state --updates 8
    MUJOCO_GL=egl python -m benchmarks.systems_real --quick           # smoke test

Defaults depend on the device (None = the device's default, printed at the start):
- GPU (the VER paper's setting): --preset depth, 16 envs, T=128, 128x128 depth, ResNet18 +
  2-layer LSTM of 512; env workers render through EGL on the trainer's GPU;
- CPU: both presets, 4 envs, T 64 (state) / 16 (depth), 64x64 depth, 2-layer LSTM of 128 (to
  keep CPU learning time in proportion).

Presets:
- state: state sensors only, small state-only LSTM policy (backbone "none");
- depth: head depth camera + state sensors, the paper's ConvNeXt-style half-width ResNet18 +
  LSTM.
"""

from __future__ import annotations

import argparse
import functools
import logging
import re
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

# Only light imports at module level: env workers are spawned, and each re-imports this
# module as __mp_main__.
from benchmarks.model_configs import model_config
from benchmarks.sim_ceiling import sim_only_sps
from benchmarks.spread import median_cell
from rearrange.skill_spec import SKILL_NAMES, skill_def

SYSTEMS = ("ddppo", "nover", "ver")
SIM_ONLY = "sim-only"
PRESETS = ("state", "depth")
DEVICE_PATTERN = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")

# None-valued flags take these per device kind; "rollout_steps" on CPU is per preset.
DEVICE_DEFAULTS = {
    "cuda": {
        "preset": "depth",
        "num_envs": 16,
        "rollout_steps": 128,
        "depth_size": 128,
        "rnn_hidden": 512,
    },
    "cpu": {
        "preset": "both",
        "num_envs": 4,
        "rollout_steps": None,
        "depth_size": 64,
        "rnn_hidden": 128,
    },
}
CPU_ROLLOUT_STEPS = {"state": 64, "depth": 16}


def model_for(preset: str, rnn_hidden: int):
    """The state policy of skill_configs/model/state.yaml, or the paper's depth policy (the
    ConvNeXt-style ResNet18 + 2-layer LSTM) with `rnn_hidden` units."""
    if preset == "state":
        return model_config("state")
    return model_config("default", rnn_hidden_size=rnn_hidden, rnn_layers=2)


def _policy(obs_space, action_space, model):
    from rearrange.models import build_policy

    return build_policy(obs_space, action_space, model)


# ---------------------------------------------------------------------------- arguments
def resolve_device_name(name: str) -> str:
    """'auto' → 'cuda' if CUDA is available, else 'cpu'; 'cuda[:N]' must exist here."""
    import torch

    available = torch.cuda.is_available()
    if name == "auto":
        return "cuda" if available else "cpu"
    if name == "cpu":
        return name
    if not available:
        raise ValueError(f"--device {name}: CUDA is not available here; use --device cpu")
    index = int(name.split(":")[1]) if ":" in name else 0
    count = torch.cuda.device_count()
    if index >= count:
        raise ValueError(f"--device {name}: {count} CUDA device(s) here; use cuda:0..{count - 1}")
    return name


def rollout_steps_for(args: argparse.Namespace, preset: str) -> int:
    """T of a preset: the flag, else the device's default (on CPU it depends on the preset)."""
    return args.rollout_steps or CPU_ROLLOUT_STEPS[preset]


def resolve_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> argparse.Namespace:
    """Fill every None flag with the device's default; argparse errors name the bad value."""
    if args.base_movement and not skill_def(args.task).has_base_movement_variant:
        parser.error(f"--task {args.task} always moves the base: drop --base-movement")
    try:
        args.device = resolve_device_name(args.device)
    except ValueError as exc:
        parser.error(str(exc))
    defaults = DEVICE_DEFAULTS["cpu" if args.device == "cpu" else "cuda"]
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.quick:
        args.updates, args.repeats, args.num_envs = 3, 1, 2
        args.rollout_steps, args.depth_size, args.num_episodes = 8, 32, 4
        args.rnn_hidden = min(args.rnn_hidden, 64)
    for name in ("num_envs", "updates", "repeats", "depth_size", "rnn_hidden", "num_episodes"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.updates < 2:
        parser.error("--updates must be >= 2: the trainer's SPS excludes the first rollout")
    return args


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", type=_device_arg, default="auto", help="auto|cpu|cuda|cuda:N")
    parser.add_argument("--task", choices=SKILL_NAMES, default="pick", help="skill env")
    parser.add_argument("--base-movement", action="store_true", help="manipulation + base")
    parser.add_argument("--preset", choices=(*PRESETS, "both"), default=None, help="GPU: depth")
    parser.add_argument("--num-envs", type=int, default=None, help="GPU 16, CPU 4")
    parser.add_argument(
        "--rollout-steps", type=int, default=None, help="T (GPU 128; CPU: state 64, depth 16)"
    )
    parser.add_argument("--updates", type=int, default=6, help="rollouts per run (first excluded)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per column, interleaved")
    parser.add_argument("--depth-size", type=int, default=None, help="GPU 128, CPU 64")
    parser.add_argument("--rnn-hidden", type=int, default=None, help="LSTM width: GPU 512, CPU 128")
    parser.add_argument("--num-episodes", type=int, default=20)
    parser.add_argument("--sim-warmup", type=int, default=8, help="sim-only: untimed steps/env")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="smoke test: tiny and fast")
    return parser


def _device_arg(text: str) -> str:
    if not DEVICE_PATTERN.match(text):
        raise argparse.ArgumentTypeError(f"{text!r}: use auto, cpu, cuda or cuda:N")
    return text


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line with every device-dependent default resolved (runs nothing)."""
    parser = build_parser()
    return resolve_args(parser.parse_args(argv), parser)


def settings_line(args: argparse.Namespace, presets: list[str]) -> str:
    """One line of the resolved settings, printed before anything runs."""
    per_preset = ", ".join(
        f"{p} T={rollout_steps_for(args, p)} (sim-only {_sim_steps(args, p)} steps/env)"
        for p in presets
    )
    bm = " + base movement" if args.base_movement else ""
    return (
        f"task {args.task}{bm}, device {args.device}, {args.num_envs} envs, {per_preset}, "
        f"depth {args.depth_size}x{args.depth_size}, depth LSTM 2x{args.rnn_hidden}, "
        f"{args.updates} updates, {args.repeats} repeats, sim-only warm-up {args.sim_warmup} "
        "steps/env"
    )


# ---------------------------------------------------------------------------- runs
def task_factory(preset: str, args: argparse.Namespace):
    """The env factory of a preset: the trainer and the sim-only ceiling use the same one."""
    from rearrange.runtime.env_worker import TaskEnvFactory
    from rearrange.tasks.config import default_task_config

    task = default_task_config(
        args.task,
        base_movement=args.base_movement,
        obs_preset=preset,
        depth_size=args.depth_size,
        num_episodes=args.num_episodes,
    )
    return TaskEnvFactory(args.task, task, "train", args.seed, render_device=args.device)


def run_system(system: str, preset: str, args: argparse.Namespace):
    """Train `system` on the task env for `args.updates` rollouts (SPS, collect/learn time)."""
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
        device=args.device,
    )
    ver = VERConfig(system=system, rollout_steps=rollout_steps_for(args, preset))
    ppo = PPOConfig(entropy_mode="fixed", entropy_coef=1e-4)  # as the paper's benchmarks
    model = model_for(preset, args.rnn_hidden)
    with tempfile.TemporaryDirectory() as tmp:
        setup = RunSetup(
            env_factory=task_factory(preset, args),
            run_dir=Path(tmp),
            tensorboard=False,
            progress=False,
        )
        policy = functools.partial(_policy, model=model)
        return VERTrainer(run, ver, ppo, setup, policy, max_updates=args.updates).train()


def _sim_steps(args: argparse.Namespace, preset: str) -> int:
    """Sim-only steps per env: as many as the trainer's measured rollouts take on average."""
    return (args.updates - 1) * rollout_steps_for(args, preset)


@dataclass
class PresetResult:
    """SPS of every run of one preset, by column (a system or sim-only)."""

    preset: str
    sps: dict[str, list[float]] = field(default_factory=dict)

    def add(self, column: str, value: float) -> None:
        self.sps.setdefault(column, []).append(value)

    def median(self, column: str) -> float:
        values = self.sps.get(column)
        return statistics.median(values) if values else float("nan")

    def cell(self, column: str) -> str:
        return median_cell(self.sps.get(column) or [], empty="-")

    def ratio(self, num: str, den: str) -> str:
        value = self.median(num) / self.median(den)
        return f"{value:.2f}x" if value == value else "-"  # nan: a column without runs


def run_preset(preset: str, args: argparse.Namespace) -> PresetResult:
    """`args.repeats` rounds of sim-only, ddppo, nover, ver on one preset."""
    out = PresetResult(preset)
    for _ in range(args.repeats):
        sps = sim_only_sps(
            task_factory(preset, args),
            args.num_envs,
            _sim_steps(args, preset),
            args.seed,
            warmup=args.sim_warmup,
        )
        out.add(SIM_ONLY, sps)
        print(f"{preset:6s} {SIM_ONLY:8s} {sps:8.0f} SPS  (random actions, no policy)", flush=True)
        for system in SYSTEMS:
            result = run_system(system, preset, args)
            out.add(system, result.sps)
            share = result.learn_s / max(result.learn_s + result.collect_s, 1e-9)
            print(
                f"{preset:6s} {system:8s} {result.sps:8.0f} SPS  "
                f"(learning {share:.0%} of the time)",
                flush=True,
            )
    return out


# ---------------------------------------------------------------------------- report
def markdown(results: list[PresetResult], args: argparse.Namespace) -> str:
    head = ["preset", *SYSTEMS, SIM_ONLY, "VER/DD-PPO", "VER/NoVER", "VER/sim-only"]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for res in results:
        cells = [res.preset, *(res.cell(c) for c in (*SYSTEMS, SIM_ONLY))]
        cells += [res.ratio("ver", "ddppo"), res.ratio("ver", "nover"), res.ratio("ver", SIM_ONLY)]
        lines.append("| " + " | ".join(cells) + " |")
    bm = " + base movement" if args.base_movement else ""
    t = ", ".join(f"{r.preset} T={rollout_steps_for(args, r.preset)}" for r in results)
    lines.append(
        f"\n{args.task}{bm} env on {args.device}, {args.num_envs} env processes, {t}, "
        f"{args.updates} updates per run, {args.repeats} repeats (median [min–max]), "
        f"depth {args.depth_size}x{args.depth_size}, depth LSTM 2x{args.rnn_hidden}, "
        f"{time.strftime('%Y-%m-%d')}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    import torch

    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(1)
    presets = list(PRESETS) if args.preset == "both" else [args.preset]
    print(settings_line(args, presets), flush=True)
    results = [run_preset(preset, args) for preset in presets]
    print()
    print(markdown(results, args))


if __name__ == "__main__":
    main()
