"""One skill on its own task, on held-out episodes: typed arguments, the run, the table.

The library behind `python -m rearrange.eval_skill` (the CLI parses flags into
`SkillEvalArgs`); `ship_skill`, checkpoint selection and the benchmarks call `evaluate_skill`
with `SkillEvalArgs` directly. HAB evaluation (`rearrange.eval` CLI) chains skills instead.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rearrange.eval.report import DEPTH_REPORTED
from rearrange.eval.stats import format_rate, wilson_interval
from rearrange.sim.episode_types import SPLITS
from rearrange.skill_spec import SUCCESS, skill_def, skill_names


class UsageError(ValueError):
    """Bad input to a skill evaluation; printed by the CLI as one line, exit code 2."""


@dataclass
class SkillEvalArgs:
    """What to evaluate and how (the flags of `python -m rearrange.eval_skill`)."""

    skill: str
    base_movement: bool = False
    skills: str = "learned"  # "learned" or "oracle"
    policy: str = "state"  # the learned policy's observations: "state" or "depth" (the paper's)
    checkpoints: str | None = None  # file, training run or folder; None: the shipped one
    newest_run: bool = False  # the skill's newest training run under runs/
    episodes: int = 100
    split: str = "val"
    seed: int = 0
    videos: int = 0
    video_dir: str = "videos"
    stochastic: bool = False  # sample actions (default: the mean)
    unstick: bool = False  # nav: the HAB executor's recovery where the base is stuck
    verbose: bool = False
    json: str | None = None  # also write the results here (the CLI does)
    task_overrides: dict = field(default_factory=dict)  # TaskConfig fields of the episodes

    def __post_init__(self) -> None:
        if self.skill not in skill_names():
            raise UsageError(
                f"unknown skill {self.skill!r}; choose one of: {', '.join(skill_names())}"
            )
        if self.skills not in ("learned", "oracle"):
            raise UsageError(f"skills={self.skills!r}: use 'learned' or 'oracle'")
        if self.policy not in ("state", "depth"):
            raise UsageError(f"--policy {self.policy!r}: use 'state' or 'depth'")
        if self.split not in SPLITS:
            raise UsageError(f"--split {self.split!r}: use one of {', '.join(SPLITS)}")
        if self.episodes < 1:
            raise UsageError(f"--episodes must be >= 1, got {self.episodes}")
        if self.videos < 0:
            raise UsageError(f"--videos must be >= 0, got {self.videos}")
        if self.base_movement and not skill_def(self.skill).has_base_movement_variant:
            raise UsageError(f"{self.skill} always moves the base: drop --base-movement")
        if self.checkpoints is not None and self.newest_run:
            raise UsageError("--checkpoints and --newest-run exclude each other: pass one")
        if self.unstick and skill_def(self.skill).target != "nav_goal":
            raise UsageError(
                f"--unstick is the HAB executor's nav recovery: {self.skill} is not a nav "
                "skill, drop --unstick"
            )
        if self.unstick and self.skills == "oracle":
            raise UsageError(
                "--unstick: the scripted nav backs up and re-plans itself; drop --unstick"
            )
        if self.stochastic and self.skills == "oracle":
            raise UsageError(
                "--stochastic samples a learned policy's actions: drop it with --skills oracle"
            )

    @classmethod
    def for_checkpoint(cls, path, trained, episodes: int, seed: int) -> SkillEvalArgs:
        """Evaluate the checkpoint file `path` on its own skill and base movement (`trained`:
        its loaded `SkillCheckpoint`): the release steps' evaluation."""
        return cls(
            trained.skill,
            checkpoints=str(path),
            episodes=episodes,
            seed=seed,
            base_movement=trained.base_movement,
            policy="depth" if trained.obs_preset == "depth" else "state",
        )

    def command(self) -> str:
        """The `python -m rearrange.eval_skill` command that runs this evaluation (for
        manifests and logs; task_overrides, which have no single flag form, are left out)."""
        parts = ["python -m rearrange.eval_skill", self.skill]
        if self.base_movement:
            parts.append("--base-movement")
        if self.skills != "learned":
            parts += ["--skills", self.skills]
        if self.policy != "state":
            parts += ["--policy", self.policy]
        if self.checkpoints is not None:
            parts += ["--checkpoints", self.checkpoints]
        if self.newest_run:
            parts.append("--newest-run")
        parts += ["--episodes", str(self.episodes), "--seed", str(self.seed)]
        if self.split != "val":
            parts += ["--split", self.split]
        if self.stochastic:
            parts.append("--stochastic")
        if self.unstick:
            parts.append("--unstick")
        return " ".join(parts)


@dataclass
class SkillEvalResult:
    skill: str
    kind: str
    base_movement: bool
    checkpoint: str
    split: str
    seed: int
    results: list = field(default_factory=list)  # EpisodeResult
    seconds: float = 0.0

    @property
    def successes(self) -> int:
        return sum(r.success for r in self.results)

    @property
    def success_rate(self) -> float:
        return self.successes / max(len(self.results), 1)

    def success_ci(self) -> tuple[float, float]:
        """Wilson 95 % interval of the success rate."""
        return wilson_interval(self.successes, len(self.results))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["success_rate"] = self.success_rate
        d["success_ci"] = list(self.success_ci())
        d["episodes"] = len(self.results)
        return d


TABLE_HEADER = (
    "| skill | checkpoint | episodes | success [95% CI] | mean steps (succ.) | mean return "
    "| collision steps / ep | max overlap > 2 cm | deepest (cm) | failures |\n"
    "|---|---|---|---|---|---|---|---|---|---|"
)


def table_row(r: SkillEvalResult) -> str:
    ok = [e for e in r.results if e.success]
    steps = f"{sum(e.steps for e in ok) / len(ok):.0f}" if ok else "-"
    ret = sum(e.ret for e in r.results) / max(len(r.results), 1)
    coll = sum(e.collisions for e in r.results) / max(len(r.results), 1)
    causes = collections.Counter(e.cause for e in r.results if not e.success)
    fails = ", ".join(f"{k} {v}" for k, v in sorted(causes.items())) or "-"
    name = r.skill + (" (base)" if r.base_movement else "")
    # The per-episode maximum robot overlap with walls/furniture/doors (issue 27's target).
    deep = sum(e.max_depth > DEPTH_REPORTED for e in r.results)
    deepest = 100 * max((e.max_depth for e in r.results), default=0.0)
    return (
        f"| {name} | {r.checkpoint} | {len(r.results)} | "
        f"{format_rate(r.successes, len(r.results))} | {steps} | {ret:.2f} | {coll:.1f} | "
        f"{deep}/{len(r.results)} | {deepest:.1f} | {fails} |"
    )


NEAR_GOAL = 0.25  # m: the end-pose line counts the episodes that ended this close


def end_pose_line(r: SkillEvalResult) -> str | None:
    """Where the episodes of a nav-goal skill ended, relative to the goal pose (None for
    the other skills): a nav that succeeds inside its 0.5 m radius may still stop where the
    skill after it in a HAB chain cannot start."""
    ends = [e for e in r.results if e.goal_dist is not None]
    if not ends:
        return None
    ok = [e.goal_dist for e in ends if e.success]
    near = sum(e.goal_dist <= NEAR_GOAL for e in ends)
    dist = statistics.median(e.goal_dist for e in ends)
    yaw = statistics.median(e.goal_yaw_deg for e in ends)
    ok_text = f"successes {statistics.median(ok):.2f} m" if ok else "no successes"
    return (
        f"{r.skill} {r.checkpoint}: ended a median {dist:.2f} m and {yaw:.0f} deg from the "
        f"goal pose ({ok_text}; {near}/{len(ends)} within {NEAR_GOAL} m)"
    )


def source_line(r: SkillEvalResult) -> str | None:
    """A pick's successes by where its targets lay (open receptacle, fridge shelf, drawer),
    when the episodes had more than one source (None otherwise): the fridge and drawer picks
    are the hard ones, and a seed's share of them moves its success rate."""
    from rearrange.tasks.pick import PICK_SOURCES

    sources = [s for s in PICK_SOURCES if any(e.source == s for e in r.results)]
    if len(sources) < 2:
        return None
    parts = []
    for s in sources:
        eps = [e for e in r.results if e.source == s]
        ok = sum(e.success for e in eps)
        parts.append(f"{s} {ok}/{len(eps)} ({100 * ok / len(eps):.0f} %)")
    return f"{r.skill} {r.checkpoint} by source: {', '.join(parts)}"


TRAINING_ONLY = (
    "oracle_start_prob",
    "oracle_start_max_frac",
    "hand_off_to",
    "hand_off_reach",
    "hand_off_approach",
)
"""TaskConfig fields only the trainers' env factory applies (`trainers.run_setup`): an
evaluation's `--set` of one would change nothing."""


def task_overrides(items: list[str], skill: str) -> dict:
    """{field: value} from `--set FIELD=VALUE` items (values as Python literals, else text);
    FIELD may name a field of a nested config (`thresholds.nav_dist`), whose value is then
    that config (the skill's default) with the field replaced; an episode generation option
    may omit its `episodes.` (`nav_hold_prob`, `tasks.config.task_field`)."""
    from rearrange.tasks.config import TaskConfig, default_task_config, task_field

    fields = TaskConfig.__dataclass_fields__
    out: dict = {}
    for item in items:
        name, sep, text = item.partition("=")
        top, _, sub = task_field(name).partition(".")
        if not sep or not name:
            raise UsageError(f"--set {item!r}: write FIELD=VALUE, e.g. nav_hold_prob=1.0")
        if top in TRAINING_ONLY:
            raise UsageError(
                f"--set {name}: a training-only option (the trainers' env factory applies it); "
                "benchmarks/teacher_success.py acts a hand-off teacher as the policy"
            )
        nested = getattr(default_task_config(skill), top) if top in fields and sub else None
        if (
            top not in fields
            or top in ("task", "obs_preset", "base_movement", "num_episodes")
            or (sub and not (dataclasses.is_dataclass(nested) and hasattr(nested, sub)))
        ):
            raise UsageError(
                f"--set {name}: not a settable TaskConfig field (e.g. nav_near_start_prob, "
                "thresholds.nav_dist; the skill, preset and --episodes have flags)"
            )
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        if sub:
            value = dataclasses.replace(out.get(top, nested), **{sub: value})
        out[top] = value
    return out


def trained_release(thresholds, skill):
    """`thresholds` with the release distance a learned place was trained with, unless
    `--set thresholds.place_release=` chose one (it differs from the default then)."""
    trained = getattr(skill, "release_dist", None)
    if trained is None or thresholds.place_release != SUCCESS.place_release:
        return thresholds
    return dataclasses.replace(thresholds, place_release=trained)


def checkpoint_file(args: SkillEvalArgs):
    """The checkpoint file a learned skill's arguments name, found without loading it (None
    for the oracle). eval_skill resolves every --checkpoints value with it before the first
    one is evaluated, so a mistyped last path fails at once, not after minutes of episodes."""
    if args.skills == "oracle":
        return None
    from rearrange.skills.checkpoint_lookup import find_skill_checkpoint

    return find_skill_checkpoint(
        args.skill,
        args.base_movement,
        args.checkpoints,
        args.newest_run,
        depth=args.policy == "depth",
    )


def load_skill(args: SkillEvalArgs):
    """(skill, checkpoint description, obs preset) for the arguments."""
    from rearrange.skills.registry import make_oracle

    if args.skills == "oracle":
        return make_oracle(args.skill, base_movement=args.base_movement), "oracle", "state"
    from rearrange.skills.base import SkillError
    from rearrange.skills.learned import LearnedSkill, require_depth_policy

    depth = args.policy == "depth"
    path = checkpoint_file(args)
    skill = LearnedSkill(path, skill_name=args.skill, deterministic=not args.stochastic)
    if depth:
        require_depth_policy(skill, path)
    variant = skill_def(args.skill).has_base_movement_variant  # nav always drives
    if variant and skill.base_movement != args.base_movement:
        trained = "with" if skill.base_movement else "without"
        flag = "add" if skill.base_movement else "drop"
        raise SkillError(
            f"checkpoint {path} was trained {trained} base movement: {flag} --base-movement "
            "or pass a matching checkpoint"
        )
    return skill, str(path), skill.observation_preset


def evaluate_skill(args: SkillEvalArgs) -> SkillEvalResult:
    """Run the episodes (torch single-threaded meanwhile: batch-1 inference)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _evaluate(args)
    finally:
        torch.set_num_threads(threads)


def task_env(args: SkillEvalArgs, skill, preset: str):
    """The skill's own task env for `args` (its episodes, split and seed, the --set
    overrides), at the depth size and release distance the skill was trained with; the
    skill's step limit becomes the task's (what it was trained and is judged with)."""
    from rearrange.tasks import default_task_config, make_env

    overrides = dict(args.task_overrides)
    space = getattr(skill, "observation_space", None)
    if preset == "depth" and space is not None:  # the size the policy was trained at
        overrides.setdefault("depth_size", int(space.spaces["depth"].shape[0]))
    cfg = default_task_config(
        args.skill,
        obs_preset=preset,
        num_episodes=args.episodes,
        base_movement=args.base_movement,
        **overrides,
    )
    cfg.thresholds = trained_release(cfg.thresholds, skill)
    env = make_env(args.skill, cfg, split=args.split, seed=args.seed)
    skill.step_limit = cfg.max_episode_steps
    return env


def _evaluate(args: SkillEvalArgs) -> SkillEvalResult:
    from rearrange.eval.video import VideoRecorder
    from rearrange.skills.learned import sampling_seed
    from rearrange.skills.rollout import run_skill_episode

    skill, ckpt, preset = load_skill(args)
    env = task_env(args, skill, preset)
    if args.unstick:  # the nav as the HAB chain runs it (skills/nav_unstick.py)
        from rearrange.skills import action_layout
        from rearrange.skills.nav_unstick import UnstickingNav

        skill = UnstickingNav(skill, action_layout(args.skill, args.base_movement))
        ckpt += " + unstick"
    out = SkillEvalResult(args.skill, args.skills, args.base_movement, ckpt, args.split, args.seed)
    t0 = time.time()
    try:
        for i in range(args.episodes):
            recorder = None
            if i < args.videos:
                name = f"{args.skill}{'_bm' if args.base_movement else ''}_{args.skills}_{i}.mp4"
                recorder = VideoRecorder(Path(args.video_dir) / name)
            if args.stochastic:  # each episode's samples from its own seed
                skill.seed_sampling(sampling_seed(args.seed, i, args.skill))
            result = run_skill_episode(env, skill, i, recorder.add if recorder else None)
            if recorder is not None:
                path = recorder.close()
                print(f"video: {path} ({'success' if result.success else result.cause})")
            out.results.append(result)
            if args.verbose and not result.success:
                unstuck = f" ({skill.unsticks} unsticks)" if args.unstick else ""
                print(f"  {result.episode_id}: {result.cause} after {result.steps} steps{unstuck}")
    finally:
        env.close()
    out.seconds = time.time() - t0
    return out
