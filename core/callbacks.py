"""Callbacks: one base class for multi-agent and single-agent training, a list to fan out, plugin loading.

Every hook receives the trainer (see `Trainer` below for what it offers). A hook stops training by calling
`trainer.request_stop(reason)`.

Plugins are named `package.module:ClassName` on the command line (`--callback`), or by an entry point name
in the `concerto.callbacks` group of an installed package's metadata.
"""
from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import numpy as np

from core.errors import ConcertoError, Interrupted, RunError, UnknownNameError, UserError, describe_exception

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

    __slots__ = ("lengths", "returns", "wins")

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
    """Calls each hook on every callback, in `order`. A hook that raises becomes a RunError naming the callback,
    the hook and the user's file and line (the trainer reports it as bad input before training starts)."""

    def __init__(self, callbacks: Iterable[Callback] = ()) -> None:
        self.callbacks: list[Callback] = sorted(callbacks, key=lambda c: c.order)

    def append(self, callback: Callback) -> None:
        self.callbacks.append(callback)
        self.callbacks.sort(key=lambda c: c.order)

    def _each(self, hook: str, *args: Any) -> None:
        for cb in self.callbacks:
            try:
                getattr(cb, hook)(*args)
            except ConcertoError:
                raise
            except Exception as exc:
                raise RunError(f"callback {type(cb).__name__}.{hook} raised {describe_exception(exc)}") from None

    def on_train_start(self, trainer: Trainer) -> None:
        self._each("on_train_start", trainer)

    def on_step(self, trainer: Trainer, n_env_steps: int) -> None:
        self._each("on_step", trainer, n_env_steps)

    def on_episode_end(self, trainer: Trainer, episodes: EpisodeStats) -> None:
        self._each("on_episode_end", trainer, episodes)

    def on_update_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None:
        self._each("on_update_end", trainer, metrics)

    def on_eval_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None:
        self._each("on_eval_end", trainer, metrics)

    def on_checkpoint(self, trainer: Trainer, path: Path) -> None:
        self._each("on_checkpoint", trainer, path)

    def on_train_end(self, trainer: Trainer) -> None:
        self._each("on_train_end", trainer)


@contextmanager
def user_code(what: str) -> Iterator[None]:
    """Report any failure of the user's code inside the block (an exception, `sys.exit()`) as one UserError line:
    `what`, then the exception and the user's file and line. Ctrl-C, signals and this project's errors pass."""
    try:
        yield
    except (KeyboardInterrupt, Interrupted, ConcertoError):
        raise
    except BaseException as exc:
        raise UserError(f"{what}: {describe_exception(exc)}") from None


@contextmanager
def cwd_on_path() -> Iterator[None]:
    """Modules in the current directory are importable inside the block (a run: spawned env workers import a
    user's env module by name too); afterwards sys.path is as it was."""
    added = _add_cwd_to_path()
    try:
        yield
    finally:
        if added is not None and added in sys.path:
            sys.path.remove(added)


def _add_cwd_to_path() -> str | None:
    """Put the current directory first on sys.path unless it is there already; returns the entry added."""
    cwd = str(Path.cwd())
    if "" in sys.path or cwd in sys.path:
        return None
    sys.path.insert(0, cwd)
    return cwd


def import_user_module(module_name: str, what: str, spec: str) -> ModuleType:
    """Import a user's module, the current directory searched too (and left on sys.path: spawned env workers
    import the module by name; run inside `cwd_on_path` to restore sys.path afterwards); any failure,
    `sys.exit()` included, is a UserError naming `spec`."""
    if not all(part.isidentifier() for part in module_name.split(".")):
        raise UserError(f"{what} {spec!r}: {module_name!r} is not a module name (package.module)")
    _add_cwd_to_path()
    with user_code(f"{what} {spec!r}: importing {module_name} failed"):
        try:
            return importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if not exc.name or not f"{module_name}.".startswith(f"{exc.name}."):
                raise  # the module itself imports something missing: reported with its file and line
            raise UserError(f"{what} {spec!r}: cannot import {module_name}: no module named {exc.name!r} "
                            "(searched the current directory and sys.path)") from None


def import_object(spec: str, what: str) -> Any:
    """Import `package.module:attribute`; failures raise UserError naming `spec`.

    The current working directory is searched too, so a user's own file (examples/my_env.py) is found
    with `examples.my_env:thing` when running from the project or their own directory.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr.isidentifier():
        raise UserError(f"{what} {spec!r} must look like package.module:name")
    module = import_user_module(module_name, what, spec)
    with user_code(f"{what} {spec!r}: reading {attr} from {module_name} failed"):
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
        with user_code(f"callback {spec!r}: loading its entry point failed"):
            cls = points[spec].load()
    if not (isinstance(cls, type) and issubclass(cls, Callback)):
        raise UserError(f"callback {spec!r} is not a subclass of core.callbacks.Callback")
    try:
        inspect.signature(cls).bind()
    except TypeError as exc:
        raise UserError(f"callback {spec!r} could not be created without arguments: {exc}") from None
    except ValueError:  # no signature to inspect: just try
        pass
    with user_code(f"callback {spec!r}: its constructor failed"):
        return cls()
