"""The training runtime both trainers (VER-PPO in `ver_backend`, PQL in `pql`) sit on.

- `env_worker`, `shared_memory`, `obs_rows`: env worker processes and the shared-memory rows
  they exchange observations, actions and flags through;
- `checkpoint`: the one checkpoint type (`SkillCheckpoint`: atomic save, load), RNG state,
  step-numbered snapshots;
- `session`: `RunSession`, a trainer's checkpoints (save, resume), wall time, stop flag and
  shutdown for one session of its run;
- `logging_utils`, `stop_flag`, `result`: progress and TensorBoard logging, graceful stop on
  SIGINT/SIGTERM, and the `TrainResult` every trainer returns;
- `run`: what every trainer shares: `RunConfig` (counts in env steps), `RunSetup`, the
  `Trainer` protocol (`train() -> TrainResult`), `TrainProcessError`;
- `synthetic_env`: a tiny learnable env with controllable step time (tests, benchmarks).

Nothing here knows an RL algorithm (docs/DESIGN.md §2).
"""
