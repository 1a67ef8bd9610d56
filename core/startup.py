"""What every training, evaluation and tuning process sets first, before torch and the envs are imported."""
from __future__ import annotations

import os

from core.signals import exit_on_signal_at_startup

# GNU OpenMP (torch's CPU threads and MKL's on Linux) spins 300,000 times before an idle worker sleeps; beside
# other busy processes the spinning workers take the cores the work needs (SAC with 2 threads beside two busy
# processes: BENCHMARKS.md, "Torch threads on a shared machine"). 1,000 is what libgomp itself uses when it has
# more threads than cores. Waiting changes no result: only how idle workers wait.
OPENMP_SPIN = "1000"


def prepare_process() -> None:
    """A signal while importing exits with one line (core.signals); OpenMP's idle workers spin briefly, unless the
    user's environment sets GOMP_SPINCOUNT or OMP_WAIT_POLICY itself (read by libgomp when torch loads)."""
    exit_on_signal_at_startup()
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", OPENMP_SPIN)
