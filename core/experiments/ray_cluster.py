"""Cells as Ray tasks: a local Ray (`--ray`) or an existing cluster (`--ray-address`).

Each cell is one task that asks Ray for the CPUs its training uses (train.torch_threads) and a GPU when it
trains on CUDA, and runs the same training command as on this machine; the nodes must see the experiment
directory and the project at the same paths (a shared filesystem), as Ray's own examples assume.
"""
from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Any

from core.errors import UserError


def _run_cell(argv: list[str], log: str) -> int:
    """The task: run the training command; a cancelled task stops it with a checkpoint (SIGTERM) first."""
    with open(log, "ab") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return process.wait()
        except KeyboardInterrupt:  # ray.cancel
            process.send_signal(signal.SIGTERM)
            return process.wait()


class RayProcess:
    def __init__(self, ray: Any, ref: Any) -> None:
        self.ray, self.ref = ray, ref
        self.code: int | None = None

    def poll(self) -> int | None:
        if self.code is None:
            ready, _ = self.ray.wait([self.ref], timeout=0)
            if ready:
                try:
                    self.code = int(self.ray.get(self.ref))
                except self.ray.exceptions.TaskCancelledError:
                    self.code = -signal.SIGTERM
        return self.code

    def stop(self) -> None:
        if self.poll() is None:
            self.ray.cancel(self.ref)


def require_ray() -> Any:
    """The ray module; UserError saying what to install where it is missing."""
    try:
        import ray
    except ImportError:
        raise UserError('--ray needs Ray: pip install "concerto[ray]" (or pip install "ray>=2.9")') from None
    return ray


class RayExecutor:
    """Starts Ray (or joins `address`) and runs each cell as a task needing `cpus` CPUs and `gpus` GPUs."""

    def __init__(self, address: str | None, cpus: float, gpus: float) -> None:
        ray = require_ray()
        self.ray, self.cpus = ray, cpus
        ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True,
                 configure_logging=False)
        self.task = ray.remote(_run_cell).options(num_cpus=cpus, num_gpus=gpus, max_retries=0)

    def capacity(self) -> int:
        """Cells the cluster runs at once."""
        return max(1, int(self.ray.cluster_resources().get("CPU", 1) // max(self.cpus, 1e-3)))

    def start(self, argv: list[str], log: Path) -> RayProcess:
        return RayProcess(self.ray, self.task.remote(argv, str(log)))

    def close(self) -> None:
        self.ray.shutdown()
