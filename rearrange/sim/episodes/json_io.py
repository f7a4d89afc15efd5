"""Episode files: JSON (gzip-compressed when the name ends in .gz), written atomically."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

from rearrange.sim.episode_types import SPLITS, Episode, ObjectPlacement, Target
from rearrange.sim.episodes.config import TASKS, EpisodeError
from rearrange.sim.objects import OBJECT_TYPES

SCHEMA = "rearrange.episodes"
SCHEMA_VERSION = 1


def save_episodes(path: str | Path, episodes: list[Episode]) -> None:
    """Write episodes as JSON (gzip-compressed when the name ends in .gz)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "schema": SCHEMA,
        "version": SCHEMA_VERSION,
        "episodes": [dataclasses.asdict(ep) for ep in episodes],
    }
    text = json.dumps(doc, separators=(",", ":"))
    tmp = path.with_name(path.name + ".tmp")
    if path.name.endswith(".gz"):
        with gzip.open(tmp, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)  # atomic: a reader never sees half a file


def load_episodes(path: str | Path) -> list[Episode]:
    """Read a file written by `save_episodes`; EpisodeError names the file and the fix."""
    path = Path(path)
    regen = "regenerate it with `python -m rearrange.sim.generate TASK --split SPLIT --out PATH`"
    if not path.is_file():
        raise EpisodeError(f"episode file {path} not found; {regen}")
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as f:
                doc = json.load(f)
        else:
            doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise EpisodeError(
            f"episode file {path} is corrupt ({type(err).__name__}); {regen}"
        ) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise EpisodeError(
            f"{path} is not a rearrange episode file (no schema {SCHEMA!r}); {regen}"
        )
    if doc.get("version") != SCHEMA_VERSION:
        raise EpisodeError(
            f"{path} has episode schema version {doc.get('version')!r}, expected {SCHEMA_VERSION}; {regen}"
        )
    try:
        return [episode_from_dict(d) for d in doc["episodes"]]
    except (KeyError, TypeError, ValueError, IndexError) as err:
        raise EpisodeError(f"{path} has a malformed episode ({err}); {regen}") from None


def _floats(values, n: int, what: str) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if len(out) != n:
        raise ValueError(f"{what} needs {n} numbers, got {len(out)}")
    return out


def episode_from_dict(d: dict) -> Episode:
    """Inverse of `dataclasses.asdict` for an Episode, with type checks."""
    if d["task"] not in TASKS or d["split"] not in SPLITS:
        raise ValueError(f"unknown task/split {d['task']!r}/{d['split']!r}")
    objects = [
        ObjectPlacement(
            obj_type=str(o["obj_type"]),
            pos=_floats(o["pos"], 3, "pos"),
            quat=_floats(o["quat"], 4, "quat"),
            receptacle=str(o["receptacle"]),
        )
        for o in d["objects"]
    ]
    for o in objects:
        if o.obj_type not in OBJECT_TYPES:
            raise ValueError(f"unknown object type {o.obj_type!r}")
    targets = [
        Target(
            obj_index=int(t["obj_index"]),
            goal_pos=_floats(t["goal_pos"], 3, "goal_pos"),
            goal_receptacle=str(t["goal_receptacle"]),
        )
        for t in d["targets"]
    ]
    if any(not 0 <= t.obj_index < len(objects) for t in targets):
        raise ValueError("target obj_index out of range")
    return Episode(
        episode_id=str(d["episode_id"]),
        task=d["task"],
        split=d["split"],
        scene_seed=int(d["scene_seed"]),
        robot_start=_floats(d["robot_start"], 3, "robot_start"),
        objects=objects,
        targets=targets,
        articulations={str(k): float(v) for k, v in dict(d["articulations"]).items()},
        extras=dict(d["extras"]),
    )
