"""`EvalArgs`: everything one HAB evaluation run needs, as `python -m rearrange.eval` parses
it (`eval.cli`) and `eval.runner.evaluate` reads it; the benchmarks build it directly."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EvalArgs:
    scenario: str | None
    no_nav: bool = False
    base_movement: bool = False
    skills: str = "learned"
    policy: str = "state"  # learned skills' observations: "state" or "depth" (the paper's)
    oracle: list[str] = field(default_factory=list)
    # learned skills that sample their actions (["all"]: every learned one); the rest act
    # with the mean. Each episode's samples come from (seed, episode, skill): runner.evaluate
    stochastic: list[str] = field(default_factory=list)
    checkpoints: str | None = None  # None: the shipped checkpoints
    newest_run: bool = False  # each skill's newest train_skill run under runs/, if it has one
    episodes: int = 50
    episodes_file: str | None = None
    split: str = "val"
    videos: int = 2
    video_dir: str = "videos"
    video_every: int = 2
    reset_arm: bool = True
    nav_unstick: bool = True  # a stuck nav leg backs off (skills/nav_unstick.py)
    seed: int = 0
    out: str | None = None
    plot: list[str] = field(default_factory=list)
    max_steps: int = 3000
    stop_mask_dist: float | None = None  # None: the nav's training radius + 0.5 m
    stop_mask_heading: float | None = None  # degrees; None: the nav's 15° success angle + 15°
    step_limits: dict[str, int] = field(default_factory=dict)
    device: str = "cpu"
    progress: bool = True
