"""Shipped learned skills succeed on val episodes they never trained on (eval_skill path)."""

import pytest

from rearrange.eval.one_skill import SkillEvalArgs, evaluate_skill
from rearrange.skills import pretrained as pre

SHIPPED = [m for m in pre.shipped() if not m.get("base_movement")]


def _successes(skill: str, episodes: int, seed: int) -> int:
    ckpt = str(pre.PRETRAINED_DIR / f"{skill}.pt")
    run = SkillEvalArgs(skill, episodes=episodes, seed=seed, checkpoints=ckpt)
    result = evaluate_skill(run)
    return sum(r.success for r in result.results)


def test_shipped_pick_picks_on_val_episodes():
    # Default run: 5 val episodes (seed 2, not the manifest's seed 0), ~10 s.
    assert pre.pretrained_path("pick") is not None, "pick.pt is not shipped"
    assert _successes("pick", 5, seed=2) >= 4


def floor_for(val_success: float, episodes: int = 10) -> int:
    """The fewest successes in `episodes` consistent with the manifest's val success: two
    binomial standard deviations under the expected count (0.93 -> 7 of 10, 0.55 -> 2)."""
    p = val_success
    return max(0, int(episodes * p - 2 * (episodes * p * (1 - p)) ** 0.5))


def test_floor_for_hand_computed():
    assert floor_for(0.93) == 7  # 9.3 - 2 * 0.807 = 7.69
    assert floor_for(0.55) == 2  # 5.5 - 2 * 1.573 = 2.35
    assert floor_for(1.0) == 10 and floor_for(0.0) == 0


@pytest.mark.slow
@pytest.mark.parametrize("manifest", SHIPPED, ids=[m["skill"] for m in SHIPPED])
def test_every_shipped_skill_succeeds_as_its_manifest_says(manifest):
    # 10 fresh val episodes (seed 3, not the manifest's seed 0)
    assert _successes(manifest["skill"], 10, seed=3) >= floor_for(manifest["val_success"])
