"""Which checkpoint a learned skill loads: the shipped one unless a training run is asked for.

`find_skill_checkpoint` is the one place that answers it, for `eval_skill`, the HAB
evaluation, `make_skill` and the benchmarks. The default is always the checkpoint shipped in
`rearrange/skills/pretrained/`, whatever is under runs/: a half-trained run on disk must never
replace a shipped skill unnoticed (docs/DESIGN.md §9). A run's weights are used only when
asked for, by `--checkpoints PATH` (a checkpoint file, a train_skill run runs/SKILL/RUN, a
folder of SKILL[_bm].pt files, or a folder of runs such as runs/) or by `--newest-run` (the
skill's newest train_skill run under runs/). Errors are one line naming the path and the fix.
"""

from __future__ import annotations

from pathlib import Path

from rearrange.skill_spec import skill_def
from rearrange.skills.base import SkillError

# Where `python -m rearrange.train_skill` writes: runs/SKILL/<run>/checkpoints/latest.pt.
RUNS_DIR = Path("runs")


def find_skill_checkpoint(
    skill: str,
    base_movement: bool = False,
    checkpoints: str | Path | None = None,
    newest_run: bool = False,
    *,
    shipped_fallback: bool = False,
    depth: bool = False,
) -> Path:
    """The checkpoint file of `skill` (its base-movement variant if asked): the one
    `checkpoints` names (a file, or found in a run or folder, see `_in_folder`); with
    `newest_run`, latest.pt of the skill's newest train_skill run under runs/ trained with the
    same base movement; else, always, the checkpoint shipped with the package.

    `shipped_fallback` is for several skills sharing those flags (the HAB evaluation): a
    `checkpoints` training run of another skill, or `newest_run` without a run of this
    skill, leaves this skill on its shipped checkpoint instead of failing.

    `depth` asks for a policy on head depth (the paper's; issue 29): SKILL[_bm]_depth.pt in
    a folder and in the package, and only runs trained on depth for `newest_run` (without
    it, any run, as before)."""
    if checkpoints is not None and newest_run:
        raise SkillError("--checkpoints and --newest-run both name the weights: pass one")
    if checkpoints is not None:
        path = check_checkpoint_path(checkpoints, skill)
        if path.is_file():
            return path
        run = run_dir_of(path)
        if not (shipped_fallback and run is not None and run_skill(run) != skill):
            return _in_folder(path, skill, base_movement, depth)
    has_variant = skill_def(skill).has_base_movement_variant  # nav always drives
    variant = " with base movement" if base_movement and has_variant else ""
    kind = "depth " if depth else ""
    if newest_run:
        runs = _newest_runs(RUNS_DIR / skill, base_movement if has_variant else None, depth or None)
        if runs:
            return runs[-1]
        if not shipped_fallback:
            raise SkillError(
                f"--newest-run: no {kind}training run of {skill!r}{variant} under "
                f"{RUNS_DIR / skill}/ (no */checkpoints/latest.pt); train one with "
                f"{_train_hint(skill, bool(variant), depth)} or drop --newest-run for the "
                "shipped checkpoint"
            )
    from rearrange.skills.pretrained import pretrained_path, weights_dir

    shipped = pretrained_path(skill, base_movement, depth)
    if shipped is not None:
        return shipped
    if depth and variant and weights_dir() is None:
        raise SkillError(
            f"no depth checkpoint for skill {skill!r}{variant}: the base-moving depth "
            "students ship in the weights distribution, which is not installed: run "
            "`.venv/bin/python -m pip install -e weights` (bash scripts/install.sh does)"
        )
    raise SkillError(
        f"no {kind}checkpoint for skill {skill!r}{variant} shipped with the package; train "
        f"one with {_train_hint(skill, bool(variant), depth)} and pass --newest-run, or use "
        "oracle skills"
    )


def _train_hint(skill_name: str, base_movement: bool = False, depth: bool = False) -> str:
    flag = " --base-movement" if base_movement else ""
    profile = "paper --algo distill" if depth else "cpu"
    return f"`python -m rearrange.train_skill {skill_name}{flag} --profile {profile}`"


def run_dir_of(path: str | Path) -> Path | None:
    """The train_skill run `path` names (runs/SKILL/RUN, or its checkpoints/ folder), else None."""
    path = Path(path)
    if (path / "checkpoints" / "latest.pt").is_file():
        return path
    if path.name == "checkpoints" and (path / "latest.pt").is_file():
        return path.parent
    return None


def _run_config(run_dir: Path):
    """A run's config.yaml (None if missing or unreadable)."""
    try:
        from omegaconf import OmegaConf

        return OmegaConf.load(run_dir / "config.yaml")
    except Exception:  # no or unreadable config: cannot tell
        return None


def run_skill(run_dir: Path) -> str:
    """The skill a run trained: its config.yaml's `skill`, else the folder above it
    (train_skill's runs/SKILL/RUN layout)."""
    cfg = _run_config(run_dir)
    skill = cfg.get("skill") if cfg is not None else None
    return str(skill) if skill else run_dir.parent.name


def _run_base_movement(run_dir: Path) -> bool | None:
    """base_movement of a train_skill run, from its config.yaml (None if it cannot tell)."""
    from omegaconf import OmegaConf

    from rearrange.runtime.checkpoint import config_base_movement  # lazy: torch-heavy

    cfg = _run_config(run_dir)
    return None if cfg is None else config_base_movement(OmegaConf.to_container(cfg))


def _run_depth(run_dir: Path) -> bool | None:
    """Whether a train_skill run's policy observes head depth (its config.yaml's
    task.obs_preset; None if it cannot tell)."""
    cfg = _run_config(run_dir)
    preset = cfg.get("task", {}).get("obs_preset") if cfg is not None else None
    return None if preset is None else preset == "depth"


def _newest_runs(
    skill_dir: Path, base_movement: bool | None, depth: bool | None = None
) -> list[Path]:
    """latest.pt of every run under skill_dir, oldest first; with `base_movement` (`depth`)
    given, only runs trained that way (or that do not say)."""
    runs = sorted(skill_dir.glob("*/checkpoints/latest.pt"), key=lambda p: p.stat().st_mtime)
    if base_movement is not None:
        runs = [r for r in runs if _run_base_movement(r.parent.parent) in (base_movement, None)]
    if depth is not None:
        runs = [r for r in runs if _run_depth(r.parent.parent) in (depth, None)]
    return runs


def _in_folder(root: Path, skill_name: str, base_movement: bool, depth: bool = False) -> Path:
    """The checkpoint of `skill_name` in the folder `root`, which the user named.

    A train_skill run (runs/SKILL/RUN) gives its checkpoints/latest.pt (it must be a run of
    `skill_name`). Any other folder: SKILL.pt (SKILL_bm.pt for base movement, SKILL[_bm]_depth.pt
    for a depth policy), SKILL/latest.pt,
    then the newest run SKILL/<run>/checkpoints/latest.pt trained with the same base
    movement, then the newest SKILL/*.pt.
    """
    from rearrange.runtime.checkpoint import checkpoint_stem  # lazy: torch-heavy

    run = run_dir_of(root)
    if run is not None:
        trained = run_skill(run)
        if trained != skill_name:
            raise SkillError(
                f"{root} is a training run of {trained!r}, not of {skill_name!r}; pass a run "
                f"of {skill_name} (runs/{skill_name}/RUN) or drop --checkpoints for the "
                "shipped checkpoint"
            )
        return run / "checkpoints" / "latest.pt"
    sub = root / skill_name
    name = f"{checkpoint_stem(skill_name, base_movement, depth)}.pt"
    for cand in (root / name, sub / "latest.pt"):
        if cand.is_file():
            return cand
    runs = _newest_runs(sub, base_movement, depth or None)
    loose = sorted(sub.glob("*.pt"), key=lambda p: p.stat().st_mtime)
    if runs or loose:
        return (runs or loose)[-1]
    raise SkillError(
        f"no checkpoint for skill {skill_name!r} under {root} (looked for {name}, "
        f"{skill_name}/<run>/checkpoints/latest.pt); train it with "
        f"{_train_hint(skill_name, bool(base_movement), depth)} or run with `--skills oracle`"
    )


def check_checkpoint_path(path: str | Path, skill_name: str = "SKILL") -> Path:
    """`path` as given to --checkpoints, which must exist: one line naming it and the fix."""
    path = Path(path)
    if not path.exists():
        raise SkillError(
            f"--checkpoints {path} does not exist; pass a training run (runs/{skill_name}/RUN, "
            "see `ls runs/*/`), a checkpoint file or a folder of SKILL.pt files, or drop "
            "--checkpoints for the shipped checkpoints"
        )
    return path


def describe_checkpoint(path: Path) -> str:
    """One line saying which checkpoint a skill uses: shipped ones with their manifest's
    training steps and the shipped file's val success (`val_success_shipped`, what an int8 /
    int4 file itself scored; its source checkpoint's `val_success` for older manifests),
    training runs marked as such."""
    from rearrange.skills.pretrained import read_manifest

    m = read_manifest(path)
    if not m:
        run = run_dir_of(Path(path).parent)
        return f"{path} (training run, not the shipped checkpoint)" if run else str(path)
    rate = m.get("val_success_shipped", m.get("val_success"))
    rate_txt = f", {rate:.0%} on {m.get('val_episodes')} val episodes" if rate is not None else ""
    return f"{path} (shipped; {m.get('steps', 0):,} steps{rate_txt})"
