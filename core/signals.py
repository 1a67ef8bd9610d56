"""SIGINT/SIGTERM handling for training runs.

Outside training (setup, summaries) a signal raises `Interrupted` at once: nothing is half-done that a
checkpoint could keep. While `deferred()` is active a signal is only recorded: the training loop sees it at
the next consistent point (an iteration boundary), writes a checkpoint there and exits 130 / 143. Code that
blocks on other processes (vector-env workers) polls `overdue()` so that a hung worker cannot hold a stop
request for long; a signal repeated more than STOP_GRACE_S after the first raises at once, which is what
stops an env hung inside this process.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from core.errors import Interrupted

SIGNALS = (signal.SIGINT, signal.SIGTERM)
STOP_GRACE_S = 2.0  # how long a blocked wait may delay a stop request before giving up on it


class _State:
    deferred = False
    signum: int | None = None
    since = 0.0


_state = _State()


def _handler(signum: int, frame: Any) -> None:
    if not _state.deferred:
        raise Interrupted(signum)
    if _state.signum is None:
        _state.signum, _state.since = signum, time.monotonic()
    elif overdue():  # asked again while still busy (an env stepping in this process that hangs): stop now
        raise Interrupted(signum, f"again {time.monotonic() - _state.since:.0f} s after the first request, "
                                  "so at once, without a new checkpoint")


def exit_on_signal_at_startup() -> None:
    """Until `handled()` takes over: SIGINT/SIGTERM exit at once with one line and status 130/143 (the seconds
    spent importing torch and the envs would otherwise end in a KeyboardInterrupt traceback or a silent death).
    Nothing has been written yet, so leaving without Python's clean-up loses nothing."""
    for s in SIGNALS:
        signal.signal(s, _exit_at_startup)


def _exit_at_startup(signum: int, frame: Any) -> None:
    os.write(2, f"interrupted by {name(signum)} before training started; nothing was saved\n".encode())
    os._exit(128 + signum)


@contextmanager
def handled() -> Iterator[None]:
    """SIGINT and SIGTERM raise `Interrupted` inside the block (installed only in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextmanager
def deferred() -> Iterator[None]:
    """Inside the block a signal is only recorded (see `pending`); the caller acts on it."""
    outer = _state.deferred
    _state.deferred = True
    try:
        yield
    finally:
        _state.deferred = outer


def pending() -> int | None:
    """The first signal received since `clear()`, if any."""
    return _state.signum


def overdue() -> bool:
    """True once a recorded stop request has waited longer than STOP_GRACE_S (a blocked wait should give up)."""
    return _state.signum is not None and time.monotonic() - _state.since > STOP_GRACE_S


def clear() -> None:
    _state.signum = None


def name(signum: int) -> str:
    return signal.Signals(signum).name
