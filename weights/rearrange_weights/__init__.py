"""Shipped checkpoints that do not fit in the `rearrange` package's weight budget.

The `rearrange` package holds the state skills and the fixed-base depth students (issue 29
gives the depth students 40 MB of it). The base-moving depth students
(`<skill>_bm_depth.pt`, int4, ~5 MB each) live here, a second distribution in the same
repository that `scripts/install.sh` installs beside the package from the working tree:
nothing is fetched at run time. `rearrange.skills.pretrained.pretrained_path` looks here
after `rearrange/skills/pretrained/` (docs/DESIGN.md §9, "Weight budget").
"""

from pathlib import Path

WEIGHTS_DIR = Path(__file__).resolve().parent
