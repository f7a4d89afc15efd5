"""Shipped learned skills succeed on val episodes they never trained on (eval_skill path)."""

import pytest

from rearrange.eval_skill import evaluate_skill, parse_args
from rearrange.skills import pretrained as pre

SHIPPED = [m for m in pre.shipped() if not m.get("base_movement")]


def _successes(skill: str, episodes: int, seed: int) -> int:
    result = evaluate_skill(parse_args([skill, "--episodes", str(episodes), "--seed", str(seed),
                                        "--checkpoints", str(pre.PRETRAINED_DIR / f"{skill}.pt")]))  # fmt: skip
    return sum(r.success for r in result.results)


def test_shipped_pick_picks_on_val_episodes():
    # Default run: 5 val episodes (seed 2, not the manifest's seed 0), ~10 s.
    assert pre.pretrained_path("pick") is not None, "pick.pt is not shipped"
    assert _successes("pick", 5, seed=2) >= 4


@pytest.mark.slow
@pytest.mark.parametrize("skill", [m["skill"] for m in SHIPPED])
def test_every_shipped_skill_succeeds_on_7_of_10_val_episodes(skill):
    assert _successes(skill, 10, seed=3) >= 7
