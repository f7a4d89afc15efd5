"""The evaluation loop behind the CLI: episodes → plans → skills → executor → EvalResult."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from rearrange.eval.args import EvalArgs
from rearrange.eval.executor import ExecutorConfig, TPSRLExecutor
from rearrange.eval.report import EpisodeRecord, EvalResult
from rearrange.eval.video import VideoRecorder
from rearrange.planner import PlanStep, make_plan, stage_names
from rearrange.runtime.checkpoint import preset_of_space
from rearrange.skill_spec import HAB_STEP_LIMITS, skill_def
from rearrange.skills import Skill, SkillError, make_skill
from rearrange.tasks.stop_rule import HAB_STOP_MASK_HEADING


def oracle_names(args: EvalArgs, names: list[str]) -> list[str]:
    """The plan's skills that run scripted: all with --skills oracle, else those in --oracle."""
    if args.skills == "oracle":
        return list(names)
    return [n for n in names if n in args.oracle]


def load_skills(args: EvalArgs, names: list[str]) -> dict[str, Skill]:
    """Every skill the plans need; learned ones are all located before any is loaded, and
    the ones without a checkpoint are named together with the flag that runs them scripted."""
    scripted = oracle_names(args, names)
    moving = manip_base_movement(args)
    skills = {n: make_skill(n, "oracle", base_movement=moving) for n in scripted}
    learned = [n for n in names if n not in scripted]
    if not learned:
        return skills
    from rearrange.skills.checkpoint_lookup import (
        RUNS_DIR,
        describe_checkpoint,
        find_skill_checkpoint,
        run_dir_of,
    )
    from rearrange.skills.learned import LearnedSkill, require_depth_policy

    _check_checkpoints_arg(args, learned)
    paths, missing = {}, []
    for n in learned:  # NoNav manipulation skills need base-movement checkpoints
        try:
            # A --checkpoints run of another skill (runs/pick/RUN beside nav and place) leaves
            # this one shipped; with --newest-run so does a skill never trained (the check
            # below fails only when no skill of the plan has a run).
            paths[n] = find_skill_checkpoint(
                n,
                moving and skill_def(n).has_base_movement_variant,
                args.checkpoints,
                args.newest_run,
                shipped_fallback=True,
                depth=args.policy == "depth",
            )
        except SkillError:
            missing.append(n)
    if missing:
        profile = "paper --algo distill" if args.policy == "depth" else "cpu"
        variant = " base-movement" if moving else ""
        variant += " depth" if args.policy == "depth" else ""
        where = f"in {args.checkpoints}" if args.checkpoints else "(none shipped)"
        raise SkillError(
            f"no learned{variant} checkpoint for {', '.join(missing)} {where}: train with `python -m rearrange.train_skill {missing[0]} --profile "
            f"{profile}`, run them scripted with `--oracle {','.join(missing)}`, or all with `--skills oracle`"
        )
    if args.newest_run and not any(run_dir_of(p.parent) for p in paths.values()):
        first = learned[0]
        raise SkillError(
            f"--newest-run: no training run of {', '.join(learned)} under {RUNS_DIR}/ (no "
            f"{RUNS_DIR}/SKILL/*/checkpoints/latest.pt); train one with `python -m "
            f"rearrange.train_skill {first} --profile cpu` or drop --newest-run for the "
            "shipped checkpoints"
        )
    sampled = sampled_skills(args, learned)
    for n in learned:
        how = ", sampled actions" if n in sampled else ""
        print(f"skill {n}: {describe_checkpoint(paths[n])}{how}", flush=True)
        skills[n] = LearnedSkill(
            paths[n], device=args.device, skill_name=n, deterministic=n not in sampled
        )
        if args.policy == "depth":
            require_depth_policy(skills[n], paths[n])
    return skills


def sampled_skills(args: EvalArgs, learned: list[str]) -> set[str]:
    """The learned skills that sample their actions (--stochastic); SkillError for a named
    skill the plans do not run as a learned skill (it would change nothing, silently)."""
    if "all" in args.stochastic:
        return set(learned)
    idle = [n for n in args.stochastic if n not in learned]
    if idle:
        raise SkillError(
            f"--stochastic {idle[0]}: these plans run no learned {idle[0]} (they run "
            f"{', '.join(learned)} learned)"
        )
    return set(args.stochastic)


def _check_checkpoints_arg(args: EvalArgs, learned: list[str]) -> None:
    """--checkpoints must name an existing folder; a training run must be of a learned skill
    the plans use (else it would change nothing, silently)."""
    if not args.checkpoints:
        return
    from rearrange.skills.checkpoint_lookup import check_checkpoint_path, run_dir_of, run_skill

    path = check_checkpoint_path(args.checkpoints)
    if path.is_file():
        raise SkillError(
            f"--checkpoints {path} is a file, but the plans run several skills: pass a training "
            "run (runs/SKILL/RUN) or a folder of SKILL.pt files (`python -m rearrange.eval_skill "
            "SKILL --checkpoints FILE` evaluates one file)"
        )
    run = run_dir_of(path)
    if run is not None and run_skill(run) not in learned:
        raise SkillError(
            f"--checkpoints {path} is a training run of {run_skill(run)!r}, which these plans "
            f"do not run as a learned skill (they run {', '.join(learned)})"
        )


def manip_base_movement(args: EvalArgs) -> bool:
    """Whether the manipulation skills move the base: always with --no-nav (they must drive
    to their targets), and with --base-movement also after a nav skill (they can correct
    where a learned nav stopped, inside its stop mask)."""
    return bool(args.no_nav or args.base_movement)


def env_settings(skills: dict[str, Skill], moving: bool) -> tuple[str, int, bool]:
    """(default obs preset, depth size, manipulation base movement) of the HAB env.

    Each learned skill observes the preset it was trained with (the executor asks the env
    for it: `executor.skill_preset`), so a chain may mix depth and state skills, e.g. a depth pick
    with the state nav and place; the depth image has one size, that of the depth skills
    (they must agree). The default preset is what a skill without one (scripted) is handed."""
    presets, sizes = set(), set()
    for skill in skills.values():
        space = getattr(skill, "observation_space", None)
        if space is None:
            continue
        presets.add(preset_of_space(space))
        if "depth" in space.spaces:
            sizes.add(int(space.spaces["depth"].shape[0]))
    if len(sizes) > 1:
        raise SkillError(
            f"the depth skills were trained at different depth sizes ({sorted(sizes)}): "
            "use checkpoints trained at one task.depth_size"
        )
    preset = "depth" if "depth" in presets else "state_rays" if "state_rays" in presets else "state"
    return preset, sizes.pop() if sizes else 128, _base_movement(skills, moving)


def _base_movement(skills: dict[str, Skill], moving: bool) -> bool:
    manip = {n: s for n, s in skills.items() if skill_def(n).has_base_movement_variant}
    has_base = {
        n: getattr(getattr(s, "layout", None), "base", None) is not None for n, s in manip.items()
    }
    if moving and not all(has_base.values()):
        lacking = sorted(n for n, b in has_base.items() if not b)
        raise SkillError(
            f"--no-nav / --base-movement need skills that move the base, but {', '.join(lacking)} cannot; "
            f"train with `python -m rearrange.train_skill {lacking[0]} --base-movement`"
        )
    if len(set(has_base.values())) > 1:
        raise SkillError(
            "some manipulation skills move the base and some do not; train them all with "
            "or all without --base-movement"
        )
    return bool(has_base) and all(has_base.values())


def plan_all(episodes: list, split: str, no_nav: bool) -> list[list[PlanStep]]:
    from rearrange.sim.apartment import generate_layout

    layouts: dict[int, Any] = {}
    plans = []
    for ep in episodes:
        if ep.scene_seed not in layouts:
            layouts[ep.scene_seed] = generate_layout(ep.scene_seed, split)
        plans.append(make_plan(layouts[ep.scene_seed], ep, no_nav=no_nav))
    return plans


def result_stage_names(plans: list[list[PlanStep]]) -> list[str]:
    """The common stage names; generic "stage_k" names when plans differ."""
    names = [stage_names(p) for p in plans]
    if all(n == names[0] for n in names):
        return names[0]
    return [f"stage_{k + 1}" for k in range(max(len(n) for n in names))]


def _progress(total: int, enabled: bool, desc: str):
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, desc=desc, unit="ep")


def evaluate(args: EvalArgs) -> EvalResult:
    from rearrange.skills.learned import single_thread_torch
    from rearrange.tasks import HabConfig, HabEnv
    from rearrange.tasks.base import load_task_episodes

    # Here, not in the CLI only: benchmarks.hab_learned calls evaluate() directly, and with
    # torch's default threads its batch-1 inference runs ~5x slower beside a training run.
    single_thread_torch()

    episodes = load_task_episodes(
        args.scenario, args.episodes_file, args.episodes, args.split, args.seed
    )[: args.episodes]
    plans = plan_all(episodes, args.split, args.no_nav)
    needed = sorted({s.skill for plan in plans for s in plan})
    skills = load_skills(args, needed)
    moving = manip_base_movement(args)
    preset, depth, base = env_settings(skills, moving)
    config = HabConfig(
        max_steps=args.max_steps,
        obs_preset=preset,
        depth_size=depth,
        skill_base_movement=base or (moving and args.skills == "oracle"),
    )
    env = HabEnv(args.scenario, config, split=args.split, seed=args.seed, episodes=episodes)
    executor = TPSRLExecutor(
        env,
        skills,
        ExecutorConfig(
            max_steps=args.max_steps,
            stop_mask_dist=args.stop_mask_dist,
            stop_mask_heading=(
                HAB_STOP_MASK_HEADING
                if args.stop_mask_heading is None
                else math.radians(args.stop_mask_heading)
            ),
            step_limits={**HAB_STEP_LIMITS, **dict(args.step_limits)},
            frame_every=args.video_every,
            end_card_frames=video_fps(args),  # the end card stays up for one second
            reset_arm=args.reset_arm,
            nav_unstick=args.nav_unstick,
        ),
    )
    records = []
    bar = _progress(len(episodes), args.progress, args.scenario)
    try:
        for k, (ep, plan) in enumerate(zip(episodes, plans)):
            env.reset(options={"episode": ep})
            seed_episode_samples(skills, args.seed, k)
            records.append(_run_one(executor, plan, args, ep, record_video=k < args.videos))
            bar.update(1)
            bar.set_postfix(success=f"{sum(r.success for r in records)}/{len(records)}")
    finally:
        bar.close()
        env.close()
    return EvalResult(
        scenario=args.scenario,
        label=label(args),
        stage_names=result_stage_names(plans),
        episodes=records,
        config=_config_dict(args),
    )


def seed_episode_samples(skills: dict[str, Skill], seed: int, episode: int) -> None:
    """Seed each sampling skill's draws for this episode (`learned.sampling_seed`)."""
    from rearrange.skills.learned import sampling_seed

    for name, skill in skills.items():
        if getattr(skill, "deterministic", True) is False:
            skill.seed_sampling(sampling_seed(seed, episode, name))


def _run_one(executor, plan, args: EvalArgs, ep, record_video: bool) -> EpisodeRecord:
    if not record_video:
        return executor.run_episode(plan)
    suffix = "_nonav" if args.no_nav else ""
    path = Path(args.video_dir) / f"{args.scenario}{suffix}_{ep.episode_id}.mp4"
    recorder = VideoRecorder(path, fps=video_fps(args))
    try:
        record = executor.run_episode(plan, frame_sink=recorder.add)
    finally:
        written = recorder.close()
    record.video = str(written) if written else ""
    return record


def video_fps(args: EvalArgs) -> int:
    """Frames per second of the videos: real time (30 Hz policy steps, a frame every
    --video-every of them)."""
    return max(1, 30 // args.video_every)


def label(args: EvalArgs) -> str:
    name = "TP-SRL(NoNav)" if args.no_nav else "TP-SRL"
    if args.base_movement and not args.no_nav:
        name += " +base-moving skills"
    oracle = args.oracle
    kind = "learned depth" if args.policy == "depth" else "learned"
    if args.stochastic:
        kind += f", sampled {'+'.join(args.stochastic)}"
    if args.skills == "learned" and oracle:
        return f"{name} ({kind}, oracle {'+'.join(oracle)})"
    return f"{name} ({kind if args.skills == 'learned' else args.skills})"


def _config_dict(args: EvalArgs) -> dict:
    keys = (
        "scenario",
        "no_nav",
        "base_movement",
        "skills",
        "policy",
        "oracle",
        "stochastic",
        "checkpoints",
        "newest_run",
        "episodes",
        "episodes_file",
        "split",
        "seed",
        "max_steps",
        "stop_mask_heading",
        "step_limits",
        "videos",
        "video_every",
        "reset_arm",
        "nav_unstick",
    )
    return {k: getattr(args, k) for k in keys}
