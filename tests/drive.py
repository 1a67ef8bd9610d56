"""Driving a runner outside the trainer, the way the training loop does: the clock advances with every step."""
from __future__ import annotations

from core.run_state import RunState


def drive(runner, run: RunState, iterations: int) -> dict[str, float]:
    """Run `iterations` iterations, counting their steps on `run.clock`; the last iteration's metrics."""
    metrics: dict[str, float] = {}
    for _ in range(iterations):
        metrics = runner.iteration(run.clock.advance)
        run.clock.iterations += 1
    return metrics
