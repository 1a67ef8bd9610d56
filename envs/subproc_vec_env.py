"""Vector env with one worker process per env, exchanging arrays through shared memory.

Workers write their results straight into shared arrays; the pipe only carries short commands and
acknowledgements. An exception in a worker is re-raised in the parent as EnvWorkerError naming the env
index and the exception's file and line; a worker that dies (killed, segfault) is detected through its
process sentinel, and one that does not answer within `worker_timeout_s` is given up on, instead of being
waited on forever. Workers ignore SIGINT/SIGTERM: the parent stops the run and closes them.
"""
from __future__ import annotations

import contextlib
import ctypes
import multiprocessing as mp
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import NoReturn

import numpy as np
from threadpoolctl import threadpool_limits

from core import signals
from core.errors import ConcertoError, EnvWorkerError, Interrupted, describe_exception
from envs.pettingzoo_adapter import PettingZooAdapter
from envs.sync_vec_env import row_views
from envs.vec_env import VecEnv, VecStep, array_layout

POLL_S = 0.25  # how often a wait for workers looks at the clock and at stop requests

SharedBytes = ctypes.Array[ctypes.c_byte]  # a shared-memory RawArray("b", n)


class SubprocVecEnv(VecEnv):
    """Steps n_envs envs in parallel worker processes (start method "spawn" by default)."""

    def __init__(self, factories: Sequence[Callable[[], object]], name: str = "env", seed: int | None = None,
                 start_method: str = "spawn", worker_timeout_s: float = 60.0) -> None:
        probe = PettingZooAdapter(factories[0](), name=name)
        self.spec = probe.spec
        probe.close()
        self.n_envs = len(factories)
        self.default_seed = seed
        self.worker_timeout_s = worker_timeout_s
        self._closed = False
        ctx = mp.get_context(start_method)
        layout = array_layout(self.spec, self.n_envs)
        raw = {k: ctx.RawArray("b", max(int(np.prod(shape)) * dtype.itemsize, 1))
               for k, (shape, dtype) in layout.items()}
        self.arrays = _views(raw, layout)
        self._actions = {g.name: self.arrays[f"actions/{g.name}"] for g in self.spec.groups}
        self._step = VecStep(self.spec, self.arrays)
        self._conns: list[Connection] = []
        self._procs: list[BaseProcess] = []
        for i, factory in enumerate(factories):
            parent, child = ctx.Pipe()
            # typeshed types get_context(str) as BaseContext, without Process; every start method's context has it
            proc: BaseProcess = ctx.Process(  # type: ignore[attr-defined]
                target=_worker, args=(i, factory, name, raw, layout, child), daemon=True, name=f"concerto-env-{i}")
            proc.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(proc)
        self._gather("starting")

    def reset(self, seed: int | None = None) -> VecStep:
        seed = self.default_seed if seed is None else seed
        for i in range(self.n_envs):
            self._send(i, ("reset", None if seed is None else seed + i))
        self._gather("resetting")
        return self._step

    def step(self, actions: Mapping[str, np.ndarray]) -> VecStep:
        self.group_actions(actions, self._actions)
        for i in range(self.n_envs):
            self._send(i, ("step", None))
        self._gather("stepping")
        return self._step

    def _send(self, index: int, message: tuple) -> None:
        try:
            self._conns[index].send(message)
        except (BrokenPipeError, OSError):
            self._died(index)

    def _gather(self, doing: str) -> None:
        """Wait for every worker's acknowledgement, raising on a worker error, death or silence (see module
        docstring); a stop request (core.signals) is not held up by a hung worker for long."""
        pending = dict(enumerate(self._conns))
        deadline = time.monotonic() + self.worker_timeout_s
        while pending:
            sentinels = {self._procs[i].sentinel: i for i in pending}
            ready = wait(list(pending.values()) + list(sentinels), timeout=POLL_S)
            if not ready and (time.monotonic() > deadline or signals.overdue()):
                late = ", ".join(map(str, sorted(pending)))
                self.close(graceful=False)
                if signals.overdue():
                    raise Interrupted(signals.pending() or signal.SIGINT,
                                      f"while env {late} did not answer ({doing})")
                raise EnvWorkerError(f"env {late} did not answer within train.worker_timeout_s="
                                     f"{self.worker_timeout_s:g} s while {doing}")
            for obj in ready:
                if isinstance(obj, int):  # a process sentinel (connections are objects): that worker exited
                    i = sentinels[obj]
                    if i in pending and not pending[i].poll():
                        self._died(i)
                    continue
                i = next(j for j, conn in enumerate(self._conns) if conn is obj)
                if i not in pending:
                    continue
                try:
                    status, payload = self._conns[i].recv()
                except (EOFError, OSError):
                    self._died(i)
                if status == "error":
                    self._fail(f"env {i} raised {payload} while {doing}")
                del pending[i]

    def _died(self, index: int) -> NoReturn:
        self._procs[index].join(timeout=1)
        self._fail(f"env {index}: worker process died (exit code {self._procs[index].exitcode})")

    def _fail(self, message: str) -> NoReturn:
        self.close(graceful=False)
        raise EnvWorkerError(message)

    def close(self, graceful: bool = True) -> None:
        if self._closed:
            return
        self._closed = True
        if graceful:
            for conn, proc in zip(self._conns, self._procs, strict=True):
                if proc.is_alive():
                    with contextlib.suppress(BrokenPipeError, OSError):
                        conn.send(("close", None))
            for proc in self._procs:
                proc.join(timeout=5)
        for proc in self._procs:  # workers ignore SIGTERM, and a stopped (SIGSTOP) one would not act on it
            if proc.is_alive():
                proc.kill()
            proc.join(timeout=1)
        for conn in self._conns:
            conn.close()

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            self.close(graceful=False)


def _views(raw: Mapping[str, SharedBytes],
           layout: Mapping[str, tuple[tuple[int, ...], np.dtype]]) -> dict[str, np.ndarray]:
    return {k: np.frombuffer(memoryview(raw[k]), dtype=dtype, count=int(np.prod(shape))).reshape(shape)
            for k, (shape, dtype) in layout.items()}


def _worker(index: int, factory: Callable[[], object], name: str, raw: Mapping[str, SharedBytes],
            layout: Mapping[str, tuple[tuple[int, ...], np.dtype]], conn: Connection) -> None:
    """Worker loop: build the env, then serve reset/step/close commands until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # signals are handled by the parent, which closes us
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threadpool_limits(1, user_api="blas")  # one env per worker: BLAS threads per core would oversubscribe
    try:
        adapter = PettingZooAdapter(factory(), name=name)
        adapter.bind(row_views(_views(raw, layout), index))
        conn.send(("ok", None))
        while True:
            command, arg = conn.recv()
            if command == "step":
                adapter.step()
            elif command == "reset":
                adapter.reset(arg)
            elif command == "close":
                adapter.close()
                return
            conn.send(("ok", None))
    except EOFError:  # parent went away
        return
    except BaseException as exc:  # report everything else to the parent
        # the project's own errors (env contract checks) name what is wrong; a user's also where it raised
        message = f"{type(exc).__name__}: {exc}" if isinstance(exc, ConcertoError) else describe_exception(exc)
        with contextlib.suppress(BrokenPipeError, OSError):
            conn.send(("error", message))
