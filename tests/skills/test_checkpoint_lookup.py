"""Which checkpoint a learned skill loads: always the shipped one by default, a training run
only when asked for (`--checkpoints runs/SKILL/RUN`, `--newest-run`), with one-line errors
that name the path and the fix."""

import json
import os

import pytest
from skills_testlib import train_ckpt

from rearrange.eval_skill import main as eval_skill_main
from rearrange.skills import SkillError
from rearrange.skills import pretrained as pre
from rearrange.skills.checkpoint_lookup import describe_checkpoint, find_skill_checkpoint

SHIPPED_DIR = pre.PRETRAINED_DIR  # the real one (some tests replace it)


def _run(root, skill="pick", name="r1", base_movement=False, mtime=None):
    """A train_skill run runs/SKILL/NAME with its config.yaml and checkpoints/latest.pt."""
    run = root / "runs" / skill / name
    latest = run / "checkpoints" / "latest.pt"
    train_ckpt(latest, skill, base_movement=base_movement)
    bm = str(base_movement).lower()
    (run / "config.yaml").write_text(f"skill: {skill}\ntask:\n  base_movement: {bm}\n")
    if mtime is not None:
        os.utime(latest, (mtime, mtime))
    return run


def _same(a, b) -> bool:
    return a.resolve() == b.resolve()  # runs/ is found relative to the working directory


@pytest.fixture
def shipped_dir(tmp_path, monkeypatch):
    """cwd is a fresh folder and the shipped checkpoints are pick.pt and pick_bm.pt there."""
    monkeypatch.chdir(tmp_path)
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    for name in ("pick.pt", "pick_bm.pt"):
        (shipped / name).write_bytes(b"x")
    monkeypatch.setattr(pre, "PRETRAINED_DIR", shipped)
    return shipped


def test_default_is_the_shipped_checkpoint_even_beside_a_newer_run(tmp_path, shipped_dir):
    run = _run(tmp_path)  # e.g. a 2-minute interrupted training run
    assert find_skill_checkpoint("pick") == shipped_dir / "pick.pt"
    assert find_skill_checkpoint("pick", base_movement=True) == shipped_dir / "pick_bm.pt"
    assert _same(find_skill_checkpoint("pick", newest_run=True), run / "checkpoints" / "latest.pt")


def test_newest_run_takes_the_newest_run_trained_with_the_same_base_movement(tmp_path, shipped_dir):
    old = _run(tmp_path, name="old", mtime=1000)
    _run(tmp_path, name="new", mtime=2000)
    moving = _run(tmp_path, name="moving", base_movement=True, mtime=3000)
    assert find_skill_checkpoint("pick", newest_run=True).parent.parent.name == "new"
    (old / "checkpoints" / "latest.pt").touch()  # now the newest fixed-base run
    assert _same(find_skill_checkpoint("pick", newest_run=True).parent.parent, old)
    got = find_skill_checkpoint("pick", base_movement=True, newest_run=True)
    assert _same(got, moving / "checkpoints" / "latest.pt")


def test_newest_run_without_a_run_is_one_line_naming_the_folder_and_the_fix(shipped_dir):
    with pytest.raises(SkillError) as err:
        find_skill_checkpoint("place", newest_run=True)
    msg = str(err.value)
    assert "\n" not in msg and "runs/place/" in msg
    assert "python -m rearrange.train_skill place" in msg and "drop --newest-run" in msg


def test_checkpoints_names_a_run_a_file_or_a_folder(tmp_path, shipped_dir):
    run = _run(tmp_path)
    latest = run / "checkpoints" / "latest.pt"
    assert find_skill_checkpoint("pick", checkpoints=run) == latest
    assert find_skill_checkpoint("pick", checkpoints=run / "checkpoints") == latest
    assert find_skill_checkpoint("pick", checkpoints=latest) == latest
    assert find_skill_checkpoint("pick", checkpoints=tmp_path / "runs") == latest
    assert find_skill_checkpoint("pick", checkpoints=shipped_dir) == shipped_dir / "pick.pt"
    with pytest.raises(SkillError, match="is a training run of 'pick', not of 'place'"):
        find_skill_checkpoint("place", checkpoints=run)
    with pytest.raises(SkillError, match="pass one"):
        find_skill_checkpoint("pick", checkpoints=run, newest_run=True)


def test_a_chain_of_skills_keeps_the_shipped_one_where_the_flags_name_no_weights(
    tmp_path, shipped_dir
):
    run = _run(tmp_path)  # a run of pick only
    latest = run / "checkpoints" / "latest.pt"
    (shipped_dir / "place.pt").write_bytes(b"x")
    # HAB: --checkpoints runs/pick/RUN replaces pick; the plan's place stays shipped
    assert find_skill_checkpoint("pick", checkpoints=run, shipped_fallback=True) == latest
    got = find_skill_checkpoint("place", checkpoints=run, shipped_fallback=True)
    assert got == shipped_dir / "place.pt"
    # --newest-run: a skill never trained stays shipped in a chain (alone it is an error)
    assert _same(find_skill_checkpoint("pick", newest_run=True, shipped_fallback=True), latest)
    got = find_skill_checkpoint("place", newest_run=True, shipped_fallback=True)
    assert got == shipped_dir / "place.pt"
    # a folder of shipped-style files: SKILL_bm.pt is the base-movement variant
    folder = tmp_path / "mine"
    folder.mkdir()
    for name in ("pick.pt", "pick_bm.pt"):
        (folder / name).write_bytes(b"x")
    assert find_skill_checkpoint("pick", True, checkpoints=folder) == folder / "pick_bm.pt"
    assert find_skill_checkpoint("pick", False, checkpoints=folder) == folder / "pick.pt"


def test_missing_checkpoints_path_is_one_line_naming_it_and_the_fix(tmp_path, shipped_dir):
    missing = tmp_path / "runs" / "pick" / "typo"
    with pytest.raises(SkillError) as err:
        find_skill_checkpoint("pick", checkpoints=missing)
    msg = str(err.value)
    assert "\n" not in msg and f"--checkpoints {missing} does not exist" in msg
    assert "runs/pick/RUN" in msg and "drop --checkpoints" in msg


def test_no_shipped_checkpoint_says_how_to_train_and_use_one(shipped_dir):
    with pytest.raises(SkillError) as err:
        find_skill_checkpoint("place")
    msg = str(err.value)
    assert "\n" not in msg and "shipped with the package" in msg
    assert "--profile cpu" in msg and "--newest-run" in msg


def test_the_which_checkpoint_line_tells_a_run_from_a_shipped_checkpoint(tmp_path, shipped_dir):
    run = _run(tmp_path)
    assert "training run" in describe_checkpoint(run / "checkpoints" / "latest.pt")
    assert "(shipped;" in describe_checkpoint(SHIPPED_DIR / "pick.pt")
    # a re-encoded file names its own figure, not its source checkpoint's
    manifest = json.loads((SHIPPED_DIR / "pick_depth.json").read_text())
    rate = f"{manifest['val_success_shipped']:.0%} on {manifest['val_episodes']} val episodes"
    assert rate in describe_checkpoint(SHIPPED_DIR / "pick_depth.pt")


def test_eval_skill_uses_the_shipped_pick_beside_a_run_unless_asked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    run = _run(tmp_path)
    assert eval_skill_main(["pick", "--episodes", "1"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| pick"))
    assert str(SHIPPED_DIR / "pick.pt") in row
    assert eval_skill_main(["pick", "--episodes", "1", "--newest-run"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| pick"))
    assert f"| {os.path.join('runs', 'pick', 'r1', 'checkpoints', 'latest.pt')} |" in row
    assert eval_skill_main(["pick", "--episodes", "1", "--checkpoints", str(run)]) == 0
    assert str(run / "checkpoints" / "latest.pt") in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,needles",
    [
        (["pick", "--newest-run"], ["runs/pick/", "drop --newest-run"]),
        (["pick", "--checkpoints", "runs/pick/nope"], ["runs/pick/nope does not exist"]),
        (["pick", "--checkpoints", "x", "--newest-run"], ["not allowed with argument"]),
    ],
)
def test_eval_skill_errors_are_one_line(argv, needles, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert eval_skill_main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and all(n in err for n in needles), err


def test_a_missing_weights_distribution_is_named_with_its_install_command(
    tmp_path, shipped_dir, monkeypatch
):
    monkeypatch.setattr(pre, "weights_dir", lambda: None)
    with pytest.raises(SkillError, match="weights distribution, which is not installed") as info:
        find_skill_checkpoint("pick", base_movement=True, depth=True)
    assert "pip install -e weights" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(SkillError, match="no depth checkpoint for skill 'pick' shipped"):
        find_skill_checkpoint("pick", depth=True)  # the fixed-base one: train it
