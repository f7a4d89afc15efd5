"""Step-by-step trace of a HAB chain's legs of one skill: the action, the base's move, whether
the world blocked the step or the sim counted a collision, the robot's static contacts, and
beside them a teacher's action for the same state (what DAgger would label it with).

It runs `rearrange.eval` as given (the first N episodes of a seed) with the executor's plan
steps wrapped: every step of a leg of `--skill` is recorded, and a leg is printed when it
fails (`--all`: every leg). With `--teacher CKPT` a state checkpoint of that skill acts on
every step of the leg on its own observations, its recurrent state and previous action
following the executed actions (`LearnedSkill.follow`), as the DAgger teacher's do, and its
action is printed beside the skill's. The trace changes nothing in the
episode. Found with it: the depth nav's frozen legs in tidy_house are jams the state teacher
labels with the same move (benchmarks/RESULTS.md, "Nav unjammed").

    MUJOCO_GL=egl python -m benchmarks.leg_trace tidy_house --policy depth --episodes 5 --seed 0 \\
        --teacher rearrange/skills/pretrained/nav.pt
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from benchmarks.penetration import geom_labels, static_contacts

DEFAULT_EVERY = 25  # print every this many steps of a run of identical stopped steps


@dataclass
class StepLine:
    step: int
    action: np.ndarray
    teacher: np.ndarray | None
    pose: np.ndarray
    moved: np.ndarray
    blocked: bool
    contacts: tuple
    collided: bool = False  # the sim counted a collision (the base's disc against a footprint)

    @property
    def stopped(self) -> bool:
        """The world stopped the step: blocked, or a collision."""
        return self.blocked or self.collided

    def text(self) -> str:
        t = "" if self.teacher is None else f" teacher={_fmt(self.teacher)}"
        c = ", ".join(f"{link}->{piece}" for link, piece in self.contacts) or "-"
        return (
            f"  {self.step:4d} action={_fmt(self.action)}{t} base={_fmt(self.pose)} "
            f"moved={_fmt(self.moved, 3)} {'BLOCKED' if self.blocked else 'free'}"
            f"{' collided' if self.collided else ''} contacts={c}"
        )


def _fmt(v, digits: int = 2) -> str:
    return "[" + ", ".join(f"{float(x):.{digits}f}" for x in np.asarray(v).ravel()) + "]"


@dataclass
class LegTrace:
    """The recorded steps of one leg, and what prints of them (`lines`)."""

    skill: str
    episode: int
    steps: list[StepLine] = field(default_factory=list)

    def lines(self, every: int = DEFAULT_EVERY) -> list[str]:
        """Every step, except inside a run of stopped steps (`StepLine.stopped`) with the
        same action and contacts, where only every `every`-th and the run's last are kept."""
        out, run = [], 0
        for i, s in enumerate(self.steps):
            prev = self.steps[i - 1] if i else None
            same = (
                prev is not None
                and s.stopped
                and prev.stopped
                and s.contacts == prev.contacts
                and np.allclose(s.action, prev.action, atol=0.02)
            )
            run = run + 1 if same else 0
            last = i == len(self.steps) - 1
            if run == 0 or run % every == 0 or last:
                out.append(s.text())
        return out


DISAGREE = 0.5  # |skill - teacher| on a base component above this: the two disagree


def disagreement(trace: LegTrace, base: slice = slice(0, 2)) -> dict[str, float]:
    """Shares of a leg's steps (traced with a teacher): stopped (blocked or collided),
    and where the skill's and the teacher's clipped base actions differ by more than
    `DISAGREE`, on all steps, on the free ones and on the stopped ones (nan if none)."""
    a = np.clip(np.array([s.action[base] for s in trace.steps]), -1, 1)
    t = np.clip(np.array([s.teacher[base] for s in trace.steps]), -1, 1)
    differ = np.abs(a - t).max(axis=1) > DISAGREE
    stopped = np.array([s.stopped for s in trace.steps])

    def share(mask):
        return float(differ[mask].mean()) if mask.any() else float("nan")

    return {
        "stopped": float(stopped.mean()),
        "differ": float(differ.mean()),
        "differ_free": share(~stopped),
        "differ_stopped": share(stopped),
    }


def summary(done: list) -> list[str]:
    """One line per failed leg and one for the legs that held (means), from `install`'s list."""
    lines = []
    for trace, run, ok in done:
        if not ok:
            d = disagreement(trace)
            lines.append(
                f"episode {trace.episode}: {run.steps} steps, stopped {d['stopped']:.2f}, "
                f"differs from the teacher on {d['differ']:.2f} (free steps {d['differ_free']:.2f}, "
                f"stopped ones {d['differ_stopped']:.2f})"
            )
    held = [disagreement(t) for t, _, ok in done if ok]
    if held:
        lines.append(
            f"{len(held)} legs held: stopped {np.mean([d['stopped'] for d in held]):.2f}, "
            f"differs from the teacher on {np.mean([d['differ'] for d in held]):.2f} (means)"
        )
    return lines


def install(skill: str, teacher_path: str | None, show_all: bool, out=None) -> list:
    """Wrap `TPSRLExecutor._run_step` so legs of `skill` are traced; returns the list the
    finished `LegTrace`s are appended to (with their `StepRun`)."""
    from rearrange.eval import executor as ex

    original = ex.TPSRLExecutor._run_step
    done: list = []
    counter = {"episode": -1}
    original_run = ex.TPSRLExecutor.run_episode

    def run_episode(self, *args, **kwargs):
        counter["episode"] += 1
        return original_run(self, *args, **kwargs)

    def traced(self, step):
        if step.skill != skill:
            return original(self, step)
        env = self.env
        labels = geom_labels(env.sim.model, env.sim.layout)
        trace = LegTrace(skill, counter["episode"])
        teacher, target, preset = None, self.task_target(step), None
        if teacher_path is not None:
            from rearrange.skills.learned import LearnedSkill

            teacher = LearnedSkill(Path(teacher_path), skill_name=skill)
            teacher.reset(replace(target, receptacle=step.receptacle), env.sim)
            preset = ex.skill_preset(teacher)
        apply = env.apply_action

        def wrapped(name, action):
            label = None
            if teacher is not None:
                label = np.asarray(teacher.act(env.observe(skill, target, preset), env.sim))
            blocked_before, pose_before = env.sim.blocked_steps, np.array(env.sim.base_pose())
            collided_before = env.sim.collision_count
            apply(name, action)
            if teacher is not None:
                teacher.follow(action)  # its memory follows what was done, as DAgger's
            pose = np.array(env.sim.base_pose())
            moved = pose - pose_before
            moved[2] = math.remainder(float(moved[2]), 2.0 * math.pi)
            contacts = tuple(sorted({(c.link, c.piece) for c in static_contacts(env.sim, labels)}))
            trace.steps.append(
                StepLine(
                    len(trace.steps) + 1,
                    np.asarray(action, dtype=np.float32).copy(),
                    label,
                    pose,
                    moved,
                    env.sim.blocked_steps > blocked_before,
                    contacts,
                    env.sim.collision_count > collided_before,
                )
            )

        env.apply_action = wrapped
        try:
            run = original(self, step)
        finally:
            env.apply_action = apply
        ok = self.check(step)[0]
        done.append((trace, run, ok))
        if show_all or not ok:
            blocked = sum(s.blocked for s in trace.steps)
            print(
                f"episode {trace.episode} {skill} leg: {'ok' if ok else 'FAILED'}, ended by "
                f"{run.ended_by} after {run.steps} steps, {blocked} blocked "
                f"({run.blocked_at_end} at the end)",
                file=out or sys.stdout,
            )
            for line in trace.lines():
                print(line, file=out or sys.stdout)
        return run

    ex.TPSRLExecutor._run_step = traced
    ex.TPSRLExecutor.run_episode = run_episode
    return done


def _own_flags(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--skill", default="nav", help="the skill whose legs are traced (nav)")
    p.add_argument("--teacher", help="a state checkpoint of that skill to act beside it")
    p.add_argument("--all", action="store_true", help="print every leg, not only failed ones")
    return p


def main(argv: list[str] | None = None) -> int:
    from rearrange.eval.cli import UsageError, build_parser
    from rearrange.eval.cli import main as eval_main

    argv = list(sys.argv[1:] if argv is None else argv)
    full = _own_flags(build_parser())  # --help lists rearrange.eval's flags with ours
    full.prog, full.description = "python -m benchmarks.leg_trace", __doc__.splitlines()[0]
    try:
        full.parse_args(argv)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ns, rest = _own_flags(argparse.ArgumentParser(add_help=False)).parse_known_args(argv)
    done = install(ns.skill, ns.teacher, ns.all)
    if "--videos" not in rest:
        rest += ["--videos", "0"]
    code = eval_main(rest + ["--no-progress"])
    if ns.teacher is not None and done:
        print(
            f"\n{ns.skill} legs beside the teacher (|skill - teacher| > {DISAGREE} on a base part):"
        )
        for line in summary(done):
            print("  " + line)
    return code


if __name__ == "__main__":
    sys.exit(main())
