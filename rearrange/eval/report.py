"""Evaluation results: records per episode, console table, JSON/CSV files, Fig. 6 plot."""

from __future__ import annotations

import collections
import csv
import json
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

from rearrange.eval.expectations import expectation_note
from rearrange.eval.stats import format_rate, stage_success_with_ci, wilson_interval

RESULT_SCHEMA = 1
DEPTH_REPORTED = 0.02  # m: the physical-honesty target's bound on robot-vs-static overlap
# A leg "ended frozen" when at least its last FROZEN_STEPS steps were all cut short by the
# world (the robot pressed against something and the policy kept pushing): a deterministic
# policy sees the same observation each step and stays there until its step limit.
FROZEN_STEPS = 50


class ReportError(ValueError):
    """A results file that cannot be read."""


class FailureCause(str, Enum):
    """Why a HAB episode failed, recorded by the executor where the failure is detected."""

    NAV_SHORT = "nav short of goal"  # robot_at does not hold after a nav leg
    NO_GRASP = "no grasp"  # pick ended holding nothing
    WRONG_GRASP = "wrong grasp"  # pick ended holding another object
    DROPPED = "dropped object"  # the object lies on the floor, or a nav leg lost its hold
    PLACED_OFF_GOAL = "placed off goal"  # object_at does not hold after a place
    ARTICULATION_SHORT = "articulation short of target"  # not opened / not closed enough
    TIMED_OUT = "skill timed out"  # a skill or the episode ran out of steps (and not the above)
    PLAN_INCOMPLETE = "plan incomplete"  # every step held but not every object is at its goal
    EXCESSIVE_FORCE = "excessive force"  # the contact force limit ended it (force_terminate)


@dataclass
class EpisodeRecord:
    episode_id: str
    stages_completed: int  # interactions completed in plan order before the first failure
    success: bool  # all goals satisfied at the end
    steps: int
    failed_skill: str = ""  # the plan step that failed, "" on success
    failure_reason: str = ""  # what the executor saw, in words
    failure_cause: str = ""  # a FailureCause value, "" on success
    max_depth: float = 0.0  # deepest robot overlap with walls/furniture/doors at any step (m)
    video_frames: int = 0  # frames recorded for this episode's video (0: no video)
    video: str = ""  # path of the episode's mp4, "" when not recorded
    # One entry per plan step run: {"skill", "ok" (its postcondition held), "steps",
    # "ended_by", "blocked_steps" (steps the world cut short), "blocked_at_end" (how many of
    # its last steps in a row were)}; nav legs add "end_dist_m", "end_heading_deg"; pick and
    # place legs "start_reach_m", "start_bearing_deg" (shoulder to object or goal); place legs
    # "held_dist_m", "held_tilt_deg" (how the object is held: `eval/held_pose.py`).
    skill_runs: list[dict] = field(default_factory=list)


@dataclass
class EvalResult:
    scenario: str
    label: str  # e.g. "TP-SRL (oracle)" or "TP-SRL(NoNav)"
    stage_names: list[str]
    episodes: list[EpisodeRecord] = field(default_factory=list)
    config: dict = field(default_factory=dict)

    def stage_rows(self) -> list[tuple[float, float, float]]:
        """(rate, low, high) per stage, with Wilson 95 % intervals."""
        reached = [e.stages_completed for e in self.episodes]
        return stage_success_with_ci(reached, len(self.stage_names))

    @property
    def full_successes(self) -> int:
        return sum(e.success for e in self.episodes)

    @property
    def full_success(self) -> float:
        if not self.episodes:
            return 0.0
        return self.full_successes / len(self.episodes)

    def full_success_ci(self) -> tuple[float, float]:
        """Wilson 95 % interval of the full-task success rate."""
        return wilson_interval(self.full_successes, len(self.episodes))

    def skill_legs(self) -> dict[str, tuple[int, int]]:
        """Per skill: (runs whose postcondition held, runs), over every plan step run in
        every episode, in plan order of first appearance; e.g. how often a learned nav
        reached its target within the plan, whatever came after."""
        legs: dict[str, list[int]] = {}
        for episode in self.episodes:
            for run in episode.skill_runs:
                ok_runs = legs.setdefault(run["skill"], [0, 0])
                ok_runs[0] += bool(run["ok"])
                ok_runs[1] += 1
        return {skill: (ok, n) for skill, (ok, n) in legs.items()}

    def frozen_legs(self) -> dict[str, int]:
        """Per skill: legs that ended frozen (their last `FROZEN_STEPS` or more steps all
        cut short by the world); records without the count (older files) count as not."""
        frozen: collections.Counter = collections.Counter()
        for episode in self.episodes:
            for run in episode.skill_runs:
                if run.get("blocked_at_end", 0) >= FROZEN_STEPS:
                    frozen[run["skill"]] += 1
        return dict(frozen)

    def unstuck_legs(self) -> tuple[int, int, int]:
        """(legs the executor's nav unstick stepped back, of them those whose postcondition
        held, the step backs in all); records without the count (older files) have none."""
        runs = [r for e in self.episodes for r in e.skill_runs if r.get("unsticks")]
        return len(runs), sum(bool(r["ok"]) for r in runs), sum(r["unsticks"] for r in runs)


def format_table(result: EvalResult) -> str:
    lines = [
        f"{result.scenario} — {result.label} — {len(result.episodes)} episodes",
        f"{'stage':<12} {'success':>8}   95% CI (Wilson)",
    ]
    for name, (mean, low, high) in zip(result.stage_names, result.stage_rows()):
        lines.append(f"{name:<12} {mean:>8.1%}   [{low:.1%}, {high:.1%}]")
    low, high = result.full_success_ci()
    lines.append(f"{'full task':<12} {result.full_success:>8.1%}   [{low:.1%}, {high:.1%}]")
    legs = result.skill_legs()
    if legs:
        lines.append("skill legs (postcondition held / run, Wilson 95% CI): " + ", ".join(
            f"{skill} {ok}/{n} ({format_rate(ok, n)})" for skill, (ok, n) in legs.items()
        ))  # fmt: skip
        frozen = result.frozen_legs()
        if frozen:
            lines.append(
                f"legs ended frozen (last {FROZEN_STEPS}+ steps all blocked by the world): "
                + ", ".join(f"{skill} {k}/{legs[skill][1]}" for skill, k in frozen.items())
            )
        unstuck, held, backs = result.unstuck_legs()
        if unstuck:
            lines.append(
                f"nav legs stuck and stepped back (nav unstick): {unstuck}, {held} of them "
                f"held; {backs} step backs"
            )
    causes = collections.Counter(e.failure_cause for e in result.episodes if not e.success)
    if causes:
        lines.append("failures: " + ", ".join(f"{c or 'not recorded'} {k}" for c, k in sorted(
            causes.items(), key=lambda item: -item[1])))  # fmt: skip
    if result.episodes:
        deep = sum(e.max_depth > DEPTH_REPORTED for e in result.episodes)
        deepest = max(e.max_depth for e in result.episodes)
        lines.append(
            f"robot into walls/furniture deeper than {100 * DEPTH_REPORTED:.0f} cm: "
            f"{deep}/{len(result.episodes)} episodes (deepest {100 * deepest:.1f} cm)"
        )
    note = expectation_note(result.scenario, result.config)
    if note:  # a configuration known to be weak: say so, as the README does
        lines.append(note)
    return "\n".join(lines)


def write_json(result: EvalResult, path: Path) -> None:
    rows = result.stage_rows()
    payload = {
        "schema": RESULT_SCHEMA,
        "scenario": result.scenario,
        "label": result.label,
        "stage_names": result.stage_names,
        "interval": "Wilson score, 95%",
        "stage_success": [{"mean": m, "ci_low": lo, "ci_high": hi} for m, lo, hi in rows],
        "full_success": result.full_success,
        "full_success_ci": list(result.full_success_ci()),
        "skill_legs": {
            skill: {"ok": ok, "runs": n} for skill, (ok, n) in result.skill_legs().items()
        },
        "frozen_legs": result.frozen_legs(),
        "config": result.config,
        "episodes": [asdict(e) for e in result.episodes],
    }
    Path(path).write_text(json.dumps(payload, indent=2))


def read_json(path: Path) -> EvalResult:
    path = Path(path)
    try:
        payload = json.loads(path.read_text())
        if payload.get("schema") != RESULT_SCHEMA:
            raise ReportError(f"{path}: schema {payload.get('schema')!r}, expected {RESULT_SCHEMA}")
        return EvalResult(
            scenario=payload["scenario"],
            label=payload["label"],
            stage_names=list(payload["stage_names"]),
            episodes=[EpisodeRecord(**e) for e in payload["episodes"]],
            config=payload.get("config", {}),
        )
    except FileNotFoundError:
        raise ReportError(f"results file {path} does not exist") from None
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise ReportError(f"results file {path} is not a rearrange.eval result ({err})") from None


def write_csv(result: EvalResult, path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["scenario", "label", "stage", "success", "ci_low", "ci_high"])
        for name, (mean, low, high) in zip(result.stage_names, result.stage_rows()):
            writer.writerow([result.scenario, result.label, name, mean, low, high])
        low, high = result.full_success_ci()
        writer.writerow(
            [result.scenario, result.label, "full_task", result.full_success, low, high]
        )


def plot_results(results: list[EvalResult], path: Path) -> None:
    """Success vs interaction, one line per run, with Wilson 95 % bands (the paper's Fig. 6)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for result in results:
        rows = result.stage_rows()
        xs = range(len(rows))
        ax.plot(xs, [r[0] for r in rows], marker="o", label=result.label)
        ax.fill_between(xs, [r[1] for r in rows], [r[2] for r in rows], alpha=0.2)
    names = results[0].stage_names if results else []
    ax.set_xticks(range(len(names)), names, rotation=30)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("success")
    ax.set_title(results[0].scenario if results else "")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
