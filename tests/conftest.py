"""Test-session settings.

Tests use tiny networks, for which intra-op threading only adds overhead (and on a
loaded 2-core machine it slows DeepXDE steps by ~10x): run torch on one thread.
"""

import os

os.environ.setdefault("DDE_BACKEND", "pytorch")
os.environ.setdefault("MPLBACKEND", "Agg")

import torch  # noqa: E402

torch.set_num_threads(1)
