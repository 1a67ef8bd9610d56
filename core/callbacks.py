"""Callbacks: one base class for multi-agent and single-agent training, a list to fan out, plugin loading.

Every hook receives the trainer (see `Trainer` below for what it offers). A hook stops training by calling
`trainer.request_stop(reason)`.

Plugins are named `package.module:ClassName` on the command line (`--callback`), or by an entry point name
in the `concerto.callbacks` group of an installed package's metadata.
"""
from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from core.episode_stats import EpisodeStats
from core.errors import ConcertoError, RunError, UnknownNameError, UserError, describe_exception
from core.user_code import import_object, user_code

ENTRY_POINT_GROUP = "concerto.callbacks"


class Trainer(Protocol):
    """What a callback may use from the object driving training."""

    run_dir: Path
    """The run's directory (config.yaml, logs, checkpoints/, evaluations.jsonl); a callback may write its own
    files there."""

    @property
    def env_steps(self) -> int:
        """Env steps taken so far (one step of one env copy), a resumed run's earlier ones included."""

    @property
    def total_steps(self) -> int:
        """The run's budget in env steps, rounded up to whole training iterations."""

    @property
    def updates(self) -> int:
        """Training iterations done (each one a collection, then an update)."""

    def request_stop(self, reason: str) -> None:
        """Stop training at the end of the current iteration; the final evaluation and checkpoint still follow,
        and the first request's `reason` is the summary's `stop_reason`."""

    def evaluate(self) -> dict[str, float]:
        """Evaluate now and return the eval/... metrics (the episodes go to evaluations.jsonl; on_eval_end is
        not called)."""

    def save_checkpoint(self) -> Path:
        """Write a checkpoint now and return its directory (asked during an iteration, as from on_step, it is
        written at the iteration's end)."""


class Callback:
    """Base class: override the hooks you need. `order` sorts callbacks (lower runs first)."""

    order: int = 50

    def on_train_start(self, trainer: Trainer) -> None:
        """Once, before the first training iteration (of a resumed run: after its checkpoint is loaded)."""

    def on_step(self, trainer: Trainer, n_env_steps: int) -> None:
        """After each vector step; `n_env_steps` env steps were taken (one per env), already in
        `trainer.env_steps`."""

    def on_episode_end(self, trainer: Trainer, episodes: EpisodeStats) -> None:
        """After a vector step in which training episodes ended (after its on_step): their `returns`, `lengths`
        and `wins` (1.0, 0.0, NaN where the env reports no wins), arrays of one value per episode."""

    def on_update_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None:
        """After each training iteration: its losses and diagnostics, which depend on the algorithm (`loss/policy`,
        `loss/value`, `loss/entropy`, `schedule/entropy_coef` for MAPPO; `loss/q`, `schedule/epsilon` for DQN)."""

    def on_eval_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None:
        """After each greedy evaluation (every train.eval_interval env steps and at the end): `eval/return_mean`,
        `eval/return_std`, `eval/episode_length`, `eval/episodes`, and `eval/win_rate` where the env reports
        wins."""

    def on_checkpoint(self, trainer: Trainer, path: Path) -> None:
        """After a checkpoint is written; `path` is its directory (RUN_DIR/checkpoints/step-000100000)."""

    def on_train_end(self, trainer: Trainer) -> None:
        """Once, when training ends: at the budget or a stop request after the final evaluation and checkpoint;
        after a signal or a failure too."""


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
