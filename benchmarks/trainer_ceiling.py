"""Trainer ceiling: how fast the VER trainer itself runs, and where the main process's time goes.

Training SPS (collection + PPO update, measured by the trainer after its first rollout) of
ddppo, nover and ver on four workloads:

- zero/state, zero/depth: the synthetic reach env with no step time (a depth image added for
  the depth policy), so SPS is bounded by the trainer alone: inference, rollout storage,
  host<->device copies, env IPC and learning;
- task/state, task/depth: the real skill env (`--task`, pick by default) with state or head-depth
  observations, so the simulator's own cost is in the loop.

Policies: state = the CPU profile's (64-unit LSTM, MLP [64]); depth = the ConvNeXt-style
ResNet18 + 2-layer LSTM (`--rnn-hidden`; the paper's 512 on a GPU). PPO = the CPU profile's
settings on CPU (4 epochs x 2 mini-batches) and the paper's on a GPU. On CPU the defaults are
8 envs, T=128 (T=16 and 64² depth for the depth policy, whose learner is slow there); on a
GPU the paper's 16 envs, T=128, 128² depth.

Each measurement is a fresh process. `--baseline-src DIR` (a checkout of an older commit, e.g.
`git worktree add /tmp/base a2c517f`) runs the same measurement with DIR's `rearrange` package,
interleaved with ours, so the ratio is taken on the same machine in the same minutes. Repeats
are interleaved across systems and sources; cells are median [min-max].

For our code it also splits the main process's collection time per env step (µs) into
inference, storage, host<->device transfer, env IPC and waiting (`ver_backend/host_cost.py`).

    python -m benchmarks.trainer_ceiling --baseline-src /tmp/base            # CPU defaults
    python -m benchmarks.trainer_ceiling --workloads zero/state --repeats 5
    python -m benchmarks.trainer_ceiling --device cuda --workloads zero/depth,task/depth
    python -m benchmarks.trainer_ceiling --workloads zero/state --envs-per-worker 2,4 \
        --learner-variants update_threads=2           # the CPU-only settings, as columns
    python -m benchmarks.trainer_ceiling --workloads zero/state --systems ver --overlap \
        --baseline-src /tmp/base                      # + learning overlapped, both sources
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SYSTEMS = ("ddppo", "nover", "ver")
WORKLOADS = ("zero/state", "zero/depth", "task/state", "task/depth")
ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------- one measurement
def _module(*names: str):
    """The first of `names` that is part of the `rearrange` package this process runs: a
    baseline checkout keeps some modules elsewhere (ver_backend before runtime existed), and
    the editable install would otherwise supply ours for the names it lacks."""
    import importlib

    import rearrange

    root = Path(rearrange.__file__).resolve().parent
    for name in names:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if Path(module.__file__).resolve().is_relative_to(root):
            return module
    raise ImportError(f"none of {names} is in {root}")


def _model(policy: str, rnn_hidden: int):
    """state: the CPU profile's policy, skill_configs/model/state_cpu.yaml read from this
    checkout (not through benchmarks.model_configs: a baseline child has an older checkout
    first on its path); depth: the paper's ResNet18 + 2-layer LSTM with `rnn_hidden` units."""
    import yaml

    from rearrange.models import ModelConfig

    if policy == "state":
        path = ROOT / "skill_configs" / "model" / "state_cpu.yaml"
        return ModelConfig(**yaml.safe_load(path.read_text()))
    return ModelConfig(rnn_hidden_size=rnn_hidden, rnn_layers=2)


def _build_policy(obs_space, action_space, model):
    from rearrange.models import build_policy

    return build_policy(obs_space, action_space, model)


def _env_factory(spec: dict):
    env, policy = spec["workload"].split("/")
    if env == "zero":
        synthetic = _module(
            "rearrange.runtime.synthetic_env", "rearrange.ver_backend.synthetic_env"
        )
        SyntheticEnvConfig = synthetic.SyntheticEnvConfig  # noqa: N806
        SyntheticEnvFactory = synthetic.SyntheticEnvFactory  # noqa: N806

        depth = spec["depth_size"] if policy == "depth" else 0
        cfg = SyntheticEnvConfig(depth_size=depth) if depth else SyntheticEnvConfig()
        return SyntheticEnvFactory(cfg, spec["num_envs"])

    workers = _module("rearrange.runtime.env_worker", "rearrange.ver_backend.env_worker")
    from rearrange.tasks.config import default_task_config

    task = default_task_config(
        spec["task"], obs_preset=policy, depth_size=spec["depth_size"], num_episodes=200
    )
    task.base_movement = spec["base_movement"]
    return workers.TaskEnvFactory(spec["task"], task, "train", 0)


def _train(spec: dict, ppo, policy_builder, run_dir: Path, extra: dict):
    """One VER-PPO run of `spec["updates"]` rollouts, no logs or checkpoints on the way: ours
    (a RunConfig and the VERTrainer) or, in a baseline checkout without runtime/run.py, the
    Trainer of a VERConfig that held the run's settings and a TrainSetup."""
    ver_config = _module("rearrange.ver_backend.config")
    trainer = _module("rearrange.ver_backend.trainer")
    try:
        run_module = _module("rearrange.runtime.run")
    except ImportError:
        run_module = None
    variant = spec.get("variant", {})  # keywords an older checkout's configs may lack
    overlap = {"overlap_learning": True} if variant.get("overlap_learning") else {}
    if run_module is None:
        ver = ver_config.VERConfig(
            system=spec["system"],
            num_envs=spec["num_envs"],
            rollout_steps=spec["rollout_steps"],
            total_steps=10**9,
            checkpoint_interval=10**6,
            log_interval=10**6,
            device=spec["device"],
            **overlap,
        )
        setup = trainer.TrainSetup(
            env_factory=_env_factory(spec),
            policy_builder=policy_builder,
            run_dir=run_dir,
            resume=False,
            tensorboard=False,
            progress=False,
            max_updates=spec["updates"],
            **extra,
        )
        return trainer.Trainer(ver, ppo, setup).train()
    pool = {"envs_per_worker": variant["envs_per_worker"]} if "envs_per_worker" in variant else {}
    keys = ("update_threads", "numpy_acting", "min_inference_batch")
    ver_keys = {k: variant[k] for k in keys if k in variant}
    run = run_module.RunConfig(
        num_envs=spec["num_envs"],
        **pool,
        total_steps=10**9,
        checkpoint_every_steps=10**9,
        log_every_steps=10**9,
        device=spec["device"],
    )
    ver = ver_config.VERConfig(
        system=spec["system"],
        rollout_steps=spec["rollout_steps"],
        **ver_keys,
        **overlap,
    )
    setup = run_module.RunSetup(
        env_factory=_env_factory(spec), run_dir=run_dir, resume=False, tensorboard=False,
        progress=False,
    )  # fmt: skip
    return trainer.VERTrainer(
        run, ver, ppo, setup, policy_builder, max_updates=spec["updates"], **extra
    ).train()


def measure(spec: dict) -> dict:
    """Train `spec['updates']` rollouts with the given system and workload; SPS and costs."""
    import functools

    import torch

    from rearrange.ver_backend.config import PPOConfig

    torch.set_num_threads(spec["threads"])
    torch.manual_seed(0)
    policy = spec["workload"].split("/")[1]
    learner = spec.get("variant", {})  # learner and env-pool options of a variant (ours only)
    ppo_extra = {"autocast_bf16": True} if learner.get("bf16") else {}
    if spec["cpu_ppo"]:  # skill_configs/ppo/cpu.yaml
        ppo = PPOConfig(
            lr=5e-4, ppo_epoch=4, num_mini_batch=2, use_normalized_advantage=True, **ppo_extra
        )
    else:
        ppo = PPOConfig(**ppo_extra)
    model = _model(policy, spec["rnn_hidden"])
    if learner.get("channels_last"):
        model.channels_last = True
    extra = {}
    cost = None
    try:  # our code attaches a per-part timer; an older checkout has none
        host_cost = _module("rearrange.ver_backend.host_cost")
        cost = host_cost.HostCost(synchronize=spec["device"].startswith("cuda"))
        extra["host_cost"] = cost
    except ImportError:
        pass
    with tempfile.TemporaryDirectory() as tmp:
        policy_builder = functools.partial(_build_policy, model=model)
        result = _train(spec, ppo, policy_builder, Path(tmp), extra)
    out = {"sps": result.sps, "learn_s": result.learn_s / max(result.num_updates, 1)}
    if cost is not None:
        out["cost_us"] = cost.per_step_us()
    return out


def run_child(spec: dict, src: Path | None) -> dict | None:
    """`measure(spec)` in a fresh process importing `rearrange` from `src` (None: ours)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = f"{src}{os.pathsep}{env.get('PYTHONPATH', '')}"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=str(ROOT))
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
    print(f"    failed ({src or 'ours'}): {tail[0]}", flush=True)
    return None


# ---------------------------------------------------------------------------- the sweep
def resolve(args: argparse.Namespace) -> None:
    """Fill the device-dependent defaults (None = the device's default)."""
    if args.device == "auto":
        import torch

        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    gpu = args.device.startswith("cuda")
    args.num_envs = args.num_envs or (16 if gpu else 8)
    args.depth_size = args.depth_size or (128 if gpu else 64)
    args.rnn_hidden = args.rnn_hidden or (512 if gpu else 128)
    args.threads = args.threads or (4 if gpu else 1)


def spec_for(args, workload: str, system: str) -> dict:
    gpu = args.device.startswith("cuda")
    depth = workload.endswith("depth")
    steps = args.rollout_steps or (128 if gpu or not depth else 16)
    updates = args.updates or (12 if not depth or gpu else 4)
    return {
        "workload": workload,
        "system": system,
        "device": args.device,
        "num_envs": args.num_envs,
        "rollout_steps": steps,
        "updates": updates,
        "depth_size": args.depth_size,
        "rnn_hidden": args.rnn_hidden,
        "task": args.task,
        "base_movement": args.base_movement,
        "threads": args.threads,
        "cpu_ppo": not gpu,
    }


def cell(values: list[float]) -> str:
    """'median [min–max]' (benchmarks/spread.py). Imported here, not at the top: a child runs
    this file as a script with a baseline checkout first on its path, where
    `benchmarks.spread` may not exist; only the parent formats tables."""
    from benchmarks.spread import median_cell

    return median_cell(values)


LEARNER_VARIANTS = {
    "bf16": {"bf16": True},
    "channels_last": {"channels_last": True},
    "bf16+channels_last": {"bf16": True, "channels_last": True},
    "update_threads=2": {"update_threads": 2},
    "update_threads=4": {"update_threads": 4},
    "eager_acting": {"numpy_acting": False},
    "min_batch=1": {"min_inference_batch": 1},
    "min_batch=2": {"min_inference_batch": 2},
    "min_batch=8": {"min_inference_batch": 8},
}
"""`--learner-variants`: the learner and acting options the GPU issue asks to measure (ours
only); `eager_acting` is ours with the CPU acting step in torch instead of NumPy;
`min_batch=B` acts once B envs wait (`ver.min_inference_batch`; by default N / 1.5, 5 of 8)."""


def columns(args) -> dict[str, tuple[Path | None, dict]]:
    """Each measured column: (source tree, variant options)."""
    cols: dict[str, tuple[Path | None, dict]] = {"ours": (None, {})}
    for name in args.learner_variants:
        cols[f"ours {name}"] = (None, LEARNER_VARIANTS[name])
    for k in args.envs_per_worker:
        cols[f"ours k={k}"] = (None, {"envs_per_worker": k})
    if args.overlap:
        cols["ours overlap"] = (None, {"overlap_learning": True})
    if args.baseline_src:
        cols["baseline"] = (args.baseline_src.resolve(), {})
        if args.overlap:
            cols["baseline overlap"] = (args.baseline_src.resolve(), {"overlap_learning": True})
    return cols


def report(results: dict, args) -> str:
    sources = list(columns(args))
    head = ["workload", "system", *(f"SPS {s}" for s in sources)]
    if args.baseline_src:
        head += ["ours / baseline", "per repeat"]
        if args.overlap:
            head.append("overlap: ours / baseline")
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for (workload, system), by_src in results.items():
        sps = {s: [r["sps"] for r in by_src.get(s, [])] for s in sources}
        row = [workload, system, *(cell(sps[s]) for s in sources)]
        if args.baseline_src:
            row.append(_ratio(sps["ours"], sps["baseline"]))
            row.append(_paired_ratios(by_src.get("ours", []), by_src.get("baseline", [])))
            if args.overlap:
                row.append(_ratio(sps["ours overlap"], sps["baseline overlap"]))
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", _cost_table(results)]
    return "\n".join(lines)


def _ratio(ours: list[float], base: list[float]) -> str:
    if not (ours and base):
        return "n/a"
    return f"{statistics.median(ours) / statistics.median(base):.2f}×"


def _paired_ratios(ours: list[dict], base: list[dict]) -> str:
    """ours / baseline within each repeat (the two ran minutes apart, interleaved), as
    median [min–max]: on a machine whose speed drifts, steadier than the medians' ratio."""
    from benchmarks.spread import median_cell  # parent only (see `cell`)

    by_repeat = {r["repeat"]: r["sps"] for r in base if "repeat" in r}
    ratios = [r["sps"] / by_repeat[r["repeat"]] for r in ours if r.get("repeat") in by_repeat]
    return median_cell(ratios, digits=2)


def _cost_table(results: dict) -> str:
    from rearrange.ver_backend.host_cost import GROUPS, PARTS

    cols = [*GROUPS, "total", "learn ms/update"]
    lines = [
        "Main-process collection cost per env step (µs, median over repeats; ours):",
        "",
        "| workload | system | " + " | ".join(cols) + " | " + " | ".join(PARTS) + " |",
        "|---" * (2 + len(cols) + len(PARTS)) + "|",
    ]
    for (workload, system), by_src in results.items():
        runs = [r for r in by_src.get("ours", []) if "cost_us" in r]
        if not runs:
            continue

        def med(key, runs=runs):
            return statistics.median(r["cost_us"][key] for r in runs)

        learn = statistics.median(1e3 * r["learn_s"] for r in runs)
        cells = [f"{med(k):.1f}" for k in [*GROUPS, "total"]] + [f"{learn:.1f}"]
        cells += [f"{med(p):.1f}" for p in PARTS]
        lines.append(f"| {workload} | {system} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--workloads", default="zero/state,task/state,zero/depth,task/depth")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    parser.add_argument("--task", default="pick", help="skill env of the task/* workloads")
    parser.add_argument("--base-movement", action="store_true")
    parser.add_argument("--num-envs", type=int, default=None, help="default: 8 CPU, 16 GPU")
    parser.add_argument("--rollout-steps", type=int, default=None)
    parser.add_argument("--updates", type=int, default=None, help="rollouts per run")
    parser.add_argument("--depth-size", type=int, default=None, help="default: 64 CPU, 128 GPU")
    parser.add_argument("--rnn-hidden", type=int, default=None, help="default: 128 CPU, 512 GPU")
    parser.add_argument("--threads", type=int, default=None, help="torch threads of the trainer")
    parser.add_argument("--baseline-src", type=Path, default=None, help="older checkout to compare")
    parser.add_argument("--json", type=Path, default=None, help="also write every run here")
    parser.add_argument(
        "--learner-variants",
        default="",
        help=f"also run ours with these learner options (comma list of {','.join(LEARNER_VARIANTS)})",
    )
    parser.add_argument(
        "--envs-per-worker",
        default="",
        help="also run ours with k envs per worker process (comma list of k > 1; run.envs_per_worker)",
    )
    parser.add_argument(
        "--overlap",
        action="store_true",
        help="also run ours (and the baseline) with ver.overlap_learning: the update of rollout k "
        "in a thread while rollout k+1 is collected",
    )
    args = parser.parse_args(argv)
    if args.child is not None:
        print("RESULT " + json.dumps(measure(json.loads(args.child))), flush=True)
        return
    args.learner_variants = [v for v in args.learner_variants.split(",") if v]
    try:
        args.envs_per_worker = [int(k) for k in args.envs_per_worker.split(",") if k]
    except ValueError:
        parser.error(f"--envs-per-worker: give integers, e.g. 2,4 (got {args.envs_per_worker!r})")
    if any(k < 2 for k in args.envs_per_worker):
        parser.error("--envs-per-worker: each k must be > 1 (k = 1 is the 'ours' column)")
    if bad := sorted(set(args.learner_variants) - set(LEARNER_VARIANTS)):
        parser.error(f"--learner-variants: unknown {bad}; use {','.join(LEARNER_VARIANTS)}")
    workloads = [w for w in args.workloads.split(",") if w]
    systems = [s for s in args.systems.split(",") if s]
    if bad := sorted(set(workloads) - set(WORKLOADS)):
        parser.error(f"--workloads: unknown {bad}; use {','.join(WORKLOADS)}")
    if bad := sorted(set(systems) - set(SYSTEMS)):
        parser.error(f"--systems: unknown {bad}; use {','.join(SYSTEMS)}")
    if args.baseline_src is not None and not (args.baseline_src / "rearrange").is_dir():
        parser.error(f"--baseline-src {args.baseline_src} has no rearrange/ package")
    resolve(args)
    print(
        f"device {args.device}, {args.num_envs} envs, depth {args.depth_size}², LSTM "
        f"{args.rnn_hidden} (depth policy), {args.repeats} repeats, {os.cpu_count()} cores",
        flush=True,
    )
    sources = columns(args)
    results: dict = {}
    for workload in workloads:
        for repeat in range(args.repeats):
            for system in systems:
                spec = spec_for(args, workload, system)
                for name, (src, variant) in sources.items():
                    out = run_child(spec | {"variant": variant}, src)
                    if out is None:
                        continue
                    out["repeat"] = repeat  # pairs ours with the baseline of the same round
                    results.setdefault((workload, system), {}).setdefault(name, []).append(out)
                    print(
                        f"  {workload:11s} {system:6s} {name:9s} {out['sps']:8.0f} SPS", flush=True
                    )
    print()
    print(report(results, args))
    if args.json is not None:
        rows = [{"workload": w, "system": s, **v} for (w, s), v in results.items()]
        args.json.write_text(
            json.dumps(
                {"args": vars(args) | {"baseline_src": str(args.baseline_src)}, "runs": rows},
                indent=1,
                default=str,
            )
        )


if __name__ == "__main__":
    main()
