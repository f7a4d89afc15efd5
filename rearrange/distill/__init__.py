"""DAgger distillation of a privileged state teacher into the depth student (`--algo distill`,
docs/DESIGN.md §5.4).

- `config`: `DistillConfig`, the `distill.*` settings (no torch: rearrange.config reads it);
- `schedule`: the linear β schedule (probability of executing the teacher's action);
- `teacher_labels`: the teacher beside the simulator, in each env worker: an env wrapper that
  labels every observation with the teacher's action, and the one-line teacher checks;
- `buffer`: the aggregated FIFO of labelled sequence chunks (compact depth, hidden states);
- `loss`: the student's loss on the teacher's actions;
- `collect`: lock-step collection of one round with the DAgger action mix;
- `trainer`: `DistillTrainer`, the "distill" row of the table of trainers.
"""
