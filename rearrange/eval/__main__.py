"""`python -m rearrange.eval SCENARIO ...` (see rearrange/eval/cli.py)."""

import sys

from rearrange.eval.cli import main

sys.exit(main())
