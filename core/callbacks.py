"""Callbacks: one base class for multi-agent and single-agent training, a list to fan out, plugin loading.

Every hook receives the trainer (see `Trainer` below for what it offers). A hook stops training by calling
`trainer.request_stop(reason)`.

Plugins are named `package.module:ClassName` on the command line (`--callback`), or by an entry point name
in the `concerto.callbacks` group of an installed package's metadata.
"""
from __future__ import annotations

import importlib
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol

import numpy as np

from core.errors import UnknownNameError, UserError

ENTRY_POINT_GROUP = "concerto.callbacks"


class Trainer(Protocol):
    """What a callback may use from the object driving training."""

    env_steps: int
    total_steps: int
    updates: int
    run_dir: Path

    def request_stop(self, reason: str) -> None: ...

    def evaluate(self) -> dict[str, float]: ...

    def save_checkpoint(self) -> Path: ...


class EpisodeStats:
    """Episodes that finished during one vector step: arrays of equal length."""

    __slots__ = ("returns", "lengths", "wins")

    def __init__(self, returns: np.ndarray, lengths: np.ndarray, wins: np.ndarray) -> None:
        self.returns = returns
        self.lengths = lengths
        self.wins = wins  # float: 1.0 won, 0.0 not won, NaN where the env has no notion of winning

    def __len__(self) -> int:
        return len(self.returns)


OnStep = Callable[[int, "EpisodeStats | None"], None]
"""What a runner calls after each vector step: (env steps taken, the episodes that ended, if any)."""


class Callback:
    """Base class: override the hooks you need. `order` sorts callbacks (lower runs first)."""

    order: int = 50

    def on_train_start(self, trainer: Trainer) -> None: ...

    def on_step(self, trainer: Trainer, n_env_steps: int) -> None:
        """After each vector step; `n_env_steps` env steps were taken (one per env)."""

    def on_episode_end(self, trainer: Trainer, episodes: EpisodeStats) -> None: ...

    def on_update_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None: ...

    def on_eval_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None: ...

    def on_checkpoint(self, trainer: Trainer, path: Path) -> None: ...

    def on_train_end(self, trainer: Trainer) -> None: ...


class CallbackList(Callback):
    """Calls each hook on every callback, in `order`."""

    def __init__(self, callbacks: Iterable[Callback] = ()) -> None:
        self.callbacks: list[Callback] = sorted(callbacks, key=lambda c: c.order)

    def append(self, callback: Callback) -> None:
        self.callbacks.append(callback)
        self.callbacks.sort(key=lambda c: c.order)

    def on_train_start(self, trainer: Trainer) -> None:
        for cb in self.callbacks:
            cb.on_train_start(trainer)

    def on_step(self, trainer: Trainer, n_env_steps: int) -> None:
        for cb in self.callbacks:
            cb.on_step(trainer, n_env_steps)

    def on_episode_end(self, trainer: Trainer, episodes: EpisodeStats) -> None:
        for cb in self.callbacks:
            cb.on_episode_end(trainer, episodes)

    def on_update_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None:
        for cb in self.callbacks:
            cb.on_update_end(trainer, metrics)

    def on_eval_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None:
        for cb in self.callbacks:
            cb.on_eval_end(trainer, metrics)

    def on_checkpoint(self, trainer: Trainer, path: Path) -> None:
        for cb in self.callbacks:
            cb.on_checkpoint(trainer, path)

    def on_train_end(self, trainer: Trainer) -> None:
        for cb in self.callbacks:
            cb.on_train_end(trainer)


def import_object(spec: str, what: str) -> Any:
    """Import `package.module:attribute`; failures raise UserError naming `spec`.

    The current working directory is searched too, so a user's own file (examples/my_env.py) is found
    with `examples.my_env:thing` when running from the project or their own directory.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UserError(f"{what} {spec!r} must look like package.module:name")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any import-time failure in user code is bad input here
        raise UserError(f"{what} {spec!r}: cannot import {module_name}: {type(exc).__name__}: {exc}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise UserError(f"{what} {spec!r}: module {module_name} has no attribute {attr!r}") from None


def load_callback(spec: str) -> Callback:
    """Instantiate a callback plugin from `module:ClassName` or an entry-point name (no arguments)."""
    if ":" in spec:
        cls = import_object(spec, "callback")
    else:
        points = {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}
        if spec not in points:
            valid = ", ".join(sorted(points)) or "none installed"
            raise UnknownNameError(
                f"unknown callback {spec!r}: use package.module:ClassName or an entry point ({valid})"
            )
        cls = points[spec].load()
    if not (isinstance(cls, type) and issubclass(cls, Callback)):
        raise UserError(f"callback {spec!r} is not a subclass of core.callbacks.Callback")
    try:
        return cls()
    except TypeError as exc:
        raise UserError(f"callback {spec!r} could not be created without arguments: {exc}") from None
