import torch

# The machine has 2 cores shared with env worker processes: one torch thread is much faster.
torch.set_num_threads(1)
