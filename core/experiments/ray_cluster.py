"""Cells as Ray tasks: a local Ray (`--ray`) or an existing cluster (`--ray-address`).

Each cell is one task that asks Ray for the CPUs its training uses (train.torch_threads) and a GPU when it
trains on CUDA, and runs the same training command as on this machine; the nodes must see the experiment
directory and the project at the same paths (a shared filesystem), as Ray's own examples assume. Joining a
cluster is checked before any cell starts, within seconds: an address where nothing answers, a refused token
or another Ray version is one UserError saying what to do, with Ray's own messages in the experiment's ray.log.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core.errors import UserError
from core.paths import install_hint

CONNECT_TIMEOUT_S = 5.0  # for the TCP connection to the cluster's address, before Ray tries it
# Ray's attempts to reach the cluster's GCS once the address answers, about 2 s each (Ray's default is 20): a
# refused token is refused at once, and a cluster that answers does so on the first
JOIN_ATTEMPTS = "3"
TOKEN_HELP = ("RAY_AUTH_TOKEN (or a file at RAY_AUTH_TOKEN_PATH, default ~/.ray/auth_token) holding the "
              "cluster's token (`ray get-auth-token` on its head prints it)")


def _run_cell(argv: list[str], log: str) -> int:
    """The task: record the node it runs on, run the training command; a cancelled task stops it with a
    checkpoint (SIGTERM) first."""
    import ray

    node = f"ray node {ray.get_runtime_context().get_node_id()} ({ray.util.get_node_ip_address()})\n"
    with open(log, "ab") as out:
        out.write(node.encode())
        out.flush()
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
        raise UserError(f"--ray needs Ray: {install_hint('ray')} (or pip install 'ray>=2.9')") from None
    return ray


class RayExecutor:
    """Starts Ray (or joins `address`) and runs each cell as a task needing `cpus` CPUs and `gpus` GPUs; Ray's
    messages while it starts or joins go to `log`."""

    def __init__(self, address: str | None, cpus: float, gpus: float, log: Path) -> None:
        ray = require_ray()
        self.ray, self.cpus = ray, cpus
        if address is not None:
            check_reachable(address)
        start = log.stat().st_size if log.is_file() else 0  # a rerun appends: only this join's messages count
        try:
            with _stderr_into(log), _join_attempts(address):
                ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True,
                         configure_logging=False)
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError or its own errors for each cause
            raise join_error(address, exc, log, start) from None
        self.task = ray.remote(_run_cell).options(num_cpus=cpus, num_gpus=gpus, max_retries=0)

    def capacity(self) -> int:
        """Cells the cluster runs at once."""
        return max(1, int(self.ray.cluster_resources().get("CPU", 1) // max(self.cpus, 1e-3)))

    def start(self, argv: list[str], log: Path) -> RayProcess:
        return RayProcess(self.ray, self.task.remote(argv, str(log)))

    def close(self) -> None:
        self.ray.shutdown()


def check_reachable(address: str) -> None:
    """UserError unless something accepts a TCP connection at `address` (HOST:PORT or ray://HOST:PORT) within
    CONNECT_TIMEOUT_S; `auto` is left to Ray, which finds the cluster this node belongs to."""
    if address in ("auto", "local"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        raise UserError(f"--ray-address {address}: expected HOST:PORT (the head's GCS port, 6379 by default), "
                        "ray://HOST:PORT (Ray Client, 10001 by default) or auto")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise UserError(f"no Ray cluster answers at --ray-address {address} ({reason}): start one there with "
                        "`ray start --head`, or give the address `ray start --head` printed") from None


def join_error(address: str | None, exc: Exception, log: Path, start: int = 0) -> UserError:
    """What went wrong joining (or starting) Ray, and what to do, from its exception and the messages it wrote
    to `log` from byte `start` on."""
    with log.open("rb") as messages:
        messages.seek(start)
        text = f"{exc}\n{messages.read().decode(errors='replace')}"
    where = f"the Ray cluster at {address}" if address else "a local Ray"
    if "InvalidAuthToken" in text or "Unauthenticated" in text or "no authentication token" in text:
        if os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
            return UserError(f"{where} requires token authentication: set RAY_AUTH_MODE=token and {TOKEN_HELP}")
        return UserError(f"{where} refused this client's token (or this client has none): set {TOKEN_HELP}")
    if "Version mismatch" in text:
        python = ".".join(map(str, sys.version_info[:3]))
        return UserError(f"{where} runs another Ray or Python version than this one (Ray {_ray_version()}, "
                         f"Python {python}): install the cluster's versions here; details in {log}")
    if "ray client connection timeout" in text:  # Ray Client tells a refused token from silence only in debug logs
        return UserError(f"{where} did not answer as a Ray Client server: check the head's Ray Client port (10001 by "
                         f"default) and, where the cluster uses token authentication, set RAY_AUTH_MODE=token and "
                         f"{TOKEN_HELP}")
    lines = [line for line in str(exc).splitlines() if line.strip()]
    reason = lines[-1] if lines else type(exc).__name__
    if address is None:
        return UserError(f"cannot start a local Ray: {reason}; Ray's messages: {log}")
    return UserError(f"cannot join {where}: {reason} (is it the address `ray start --head` printed, and this "
                     f"machine a node of the cluster?); Ray's messages: {log}")


def _ray_version() -> str:
    import ray

    return str(ray.__version__)


@contextmanager
def _stderr_into(log: Path) -> Iterator[None]:
    """Ray's messages (its C++ core writes to file descriptor 2, retrying each second) go to `log`."""
    sys.stderr.flush()
    saved = os.dup(2)
    with log.open("ab") as out:
        os.dup2(out.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


@contextmanager
def _join_attempts(address: str | None) -> Iterator[None]:
    """Ray's attempts to reach a cluster's GCS bounded to JOIN_ATTEMPTS, unless the user set their own (Ray's
    RAY_gcs_server_port_wait_time_s, read as it joins; a local start uses it for its own wait, so is left)."""
    key = "RAY_gcs_server_port_wait_time_s"
    if address is None or key in os.environ:
        yield
        return
    os.environ[key] = JOIN_ATTEMPTS
    try:
        yield
    finally:
        del os.environ[key]
