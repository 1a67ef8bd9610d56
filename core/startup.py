"""What every training, evaluation and tuning process sets first, before torch and the envs are imported."""
from __future__ import annotations

import os

from core.signals import exit_on_signal_at_startup

# GNU OpenMP (torch's CPU threads and MKL's on Linux) spins 300,000 times before an idle worker sleeps; beside
# other busy processes the spinning workers take the cores the work needs. Passive waiting (idle workers sleep at
# once) cost SAC with 2 threads little alone and was the fastest 2-thread setting beside two busy processes
# (BENCHMARKS.md, "Torch threads on a shared machine"). Waiting changes no result: only how idle workers wait.
OPENMP_WAIT_POLICY = "PASSIVE"


def prepare_process() -> None:
    """A signal while importing exits with one line (core.signals); OpenMP's idle workers sleep instead of spinning,
    unless the user's environment sets OMP_WAIT_POLICY or GOMP_SPINCOUNT itself (read when torch loads)."""
    exit_on_signal_at_startup()
    if "GOMP_SPINCOUNT" not in os.environ:
        os.environ.setdefault("OMP_WAIT_POLICY", OPENMP_WAIT_POLICY)
