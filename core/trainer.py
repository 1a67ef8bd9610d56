"""The training loop both sides share: run state, callbacks, evaluation, checkpoints, resume, signals, failures.

A subclass builds the side-specific pieces in `_build` (vector envs, agent), `_make_runner` and `_evaluate`.
The loop owns time: a runner's `iteration(on_step)` reports each vector step through `on_step`, and the loop
advances the one clock (core.run_state). Checkpoints are taken only at iteration boundaries, hold the whole
run (agent, runner with its envs, in-progress episodes and buffer, clock and random streams) and never a
non-finite value, so a resumed run continues bit for bit.
"""
from __future__ import annotations

import contextlib
import math
import time
import traceback
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from core import signals
from core.builtin_callbacks import EpisodeRecorder, MetricsLogger, ProgressBar, StopOnTarget, VideoRecorder
from core.callbacks import Callback, CallbackList
from core.checkpoint import (
    PREFIX,
    STATE_MISMATCH,
    load_checkpoint,
    prune,
    remove_stale,
    save_checkpoint,
    state_mismatch,
)
from core.config import save_yaml, to_dict
from core.episode_stats import EpisodeStats, OnStep
from core.errors import Interrupted, NonFiniteError, RunError, UserError, describe_exception
from core.evaluation.episodes import Evaluation
from core.logger import RunLogger, open_backends
from core.precision import cpu_threads, training_float_modes
from core.run_config import TrainConfig
from core.run_dir import claim, latest_checkpoint
from core.run_state import Clock, RunState

EVAL_SEED_OFFSET = 1_000_003
WATCH_REFRESH = 50  # iterations between re-listings of the agent's tensors for the non-finite check


class Stateful(Protocol):
    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class Closeable(Protocol):
    def close(self) -> None: ...


class Runner(Stateful, Protocol):
    """Collects experience and trains the agent, one iteration at a time; its state includes its envs'."""

    @property
    def steps_per_iteration(self) -> int: ...

    def iteration(self, on_step: OnStep) -> dict[str, float]: ...

    @property
    def exact_resume(self) -> bool:
        """Whether its state (its envs' included) is saved whole, so that a resume continues bit for bit."""
        ...


@runtime_checkable
class BudgetScheduled(Protocol):
    """An algorithm config with schedules annealed over the run (Clock.progress)."""

    def budget_schedules(self) -> tuple[str, ...]:
        """The config keys switched on whose values move over the run."""
        ...


class Trainer:
    """Builds a run from validated configs and runs it; see `train`. Subclasses implement the hooks below.
    Callbacks see it as a core.callbacks.Trainer.

    Attributes:
        run_dir: The run's directory (config.yaml, logs, checkpoints/, evaluations.jsonl).
        stop_reason: Why training stopped before its budget (a stop request's reason, `interrupted by SIGTERM`,
            `failed`), or None.
    """

    agent: Stateful  # created by `_build`; a subclass may declare its own agent type

    def __init__(self, algo: str, env: str, train: TrainConfig, algo_cfg: Any, env_kwargs: dict[str, Any],
                 run_dir: Path, callbacks: Iterable[Callback] = (), resume: str | Path | None = None) -> None:
        self.algo_name, self.env_name = algo, env
        self.train_cfg, self.algo_cfg, self.env_kwargs = train, algo_cfg, env_kwargs
        self.run_dir = Path(run_dir)
        self.run = RunState(train.seed, total_steps=train.steps)
        self.stop_reason: str | None = None
        self.last_eval: dict[str, float] = {}
        self.last_checkpoint: Path | None = None
        self.resumed_from: Path | None = None
        self.wall_s = 0.0
        self._eval_step = -1  # env steps at the last evaluation
        self._watched: dict[str, torch.Tensor] | None = None  # the agent's float tensors (see _check_finite)
        self._iteration_end: int | None = None  # env steps at the end of the iteration running now
        self._save_requested = False  # a checkpoint asked for during an iteration, written at its end
        self.env: Closeable | None = None
        self.eval_env: Closeable | None = None
        self.logger: RunLogger | None = None
        with self.run.active():  # the run's own global random streams; the caller's are back after
            try:
                with cpu_threads(train.torch_threads):  # the networks' initialisation as in training, on any machine
                    self._build(device(train.device))
                    self.runner: Runner = self._make_runner()
                    if resume is not None:
                        self._restore(Path(resume))
                per_iteration = self.runner.steps_per_iteration  # budgets are rounded up to whole iterations
                self.clock.total_steps = -(-train.steps // per_iteration) * per_iteration
                if train.schedule_steps is not None or not self.clock.horizon:  # else the resumed run's own
                    self.clock.horizon = -(-(train.schedule_steps or train.steps) // per_iteration) * per_iteration
                if resume is not None:
                    self._note_schedule_horizon()
                try:
                    self.run_id = claim(self.run_dir)
                    remove_stale(self.run_dir)
                    config = {"algo_name": algo, "env_name": env, "train": to_dict(train), "algo": to_dict(algo_cfg),
                              "env": env_kwargs}
                    save_yaml(config, self.run_dir / "config.yaml")
                    self.logger = RunLogger(self.run_dir, open_backends(train.loggers, self.run_dir, self.run_id,
                                                                        train.wandb_project, train.experiment))
                except OSError as exc:
                    where = f" ({exc.filename})" if exc.filename else ""
                    raise UserError(f"cannot write the run directory {self.run_dir}: {exc.strerror or exc}{where}") \
                        from None
            except BaseException:
                self.close()
                raise
        self.logger.log_config(config)
        builtins: list[Callback] = [MetricsLogger(self.logger), StopOnTarget(train.target_return,
                                                                             train.target_win_rate)]
        if train.progress:
            builtins.append(ProgressBar())
        if train.video_interval:
            builtins.append(VideoRecorder(self._recorder(), self.agent, env, env_kwargs, train.video_interval,
                                          train.seed + EVAL_SEED_OFFSET, self.logger, train.torch_threads))
        self.callbacks = CallbackList([*builtins, *callbacks])

    # -- what a subclass provides --------------------------------------------------------------------------
    def _build(self, device: torch.device) -> None:
        """Create `self.env`, `self.eval_env` and `self.agent` (raise UserError for a bad combination)."""
        raise NotImplementedError

    def _make_runner(self) -> Runner:
        raise NotImplementedError

    def _evaluate(self, seed: int) -> Evaluation:
        """Greedy evaluation over train.eval_episodes episodes: eval/... metrics and each episode's values."""
        raise NotImplementedError

    def _recorder(self) -> EpisodeRecorder[Any]:
        """How this side records an episode of its agent (train.video_interval)."""
        raise NotImplementedError

    # -- the Trainer protocol used by callbacks ------------------------------------------------------------
    @property
    def clock(self) -> Clock:
        return self.run.clock

    @property
    def env_steps(self) -> int:
        """Env steps taken so far (one step of one env copy), a resumed run's earlier ones included."""
        return self.run.clock.env_steps

    @property
    def total_steps(self) -> int:
        """The run's budget in env steps, rounded up to whole training iterations."""
        return self.run.clock.total_steps

    @property
    def updates(self) -> int:
        """Training iterations done."""
        return self.run.clock.iterations

    def request_stop(self, reason: str) -> None:
        """Stop training at the end of the current iteration, with the final evaluation and checkpoint; the first
        request's `reason` is the summary's `stop_reason`."""
        self.stop_reason = self.stop_reason or reason

    def evaluate(self) -> dict[str, float]:
        """Evaluate now: the metrics go to the callbacks (the caller's), each episode to evaluations.jsonl."""
        with self.run.active():
            result = self._evaluate(self.train_cfg.seed + EVAL_SEED_OFFSET)
        if self.logger is not None:
            self.logger.log_evaluation(result.episodes, self.env_steps)
        self.last_eval = dict(result)
        self._eval_step = self.env_steps
        return self.last_eval

    def save_checkpoint(self) -> Path:
        """Write the whole run at this point; refuses state holding NaN or inf. Called during an iteration (by a
        callback's on_step), it is written at the iteration's end, the next consistent point: the path returned."""
        if self._iteration_end is not None:
            self._save_requested = True
            return self._checkpoint_path(self._iteration_end)
        path = self._checkpoint_path(self.env_steps)
        if self.last_checkpoint == path:
            return path
        with self.run.active():
            state = {"run": self.run.state_dict(), "agent": self.agent.state_dict(),
                     "runner": self.runner.state_dict()}
        bad = nonfinite_leaf(state)
        if bad is not None:
            raise NonFiniteError(f"non-finite value in {bad} at env step {self.env_steps:,}; not checkpointed")
        evaluated = self._eval_step == self.env_steps
        meta = {"algo": self.algo_name, "env": self.env_name, "run_id": self.run_id, "clock": to_dict(self.clock),
                "exact_resume": self.runner.exact_resume, "eval": self.last_eval if evaluated else {},
                "score": self.last_eval.get("eval/win_rate", self.last_eval.get("eval/return_mean"))
                if evaluated else None,
                "config": {"train": to_dict(self.train_cfg), "algo": to_dict(self.algo_cfg), "env": self.env_kwargs}}
        save_checkpoint(path, state, meta)
        self.last_checkpoint = path
        prune(self.run_dir, self.train_cfg.keep_checkpoints)
        self.callbacks.on_checkpoint(self, path)
        return path

    # -- running ----------------------------------------------------------------------------------------
    def train(self) -> dict[str, Any]:
        """Train until the budget, a stop request or a signal; then evaluate (unless interrupted) and checkpoint.

        The global random generators hold the run's states meanwhile (core.run_state.RunState.active).
        SIGINT/SIGTERM stop at the next iteration boundary with a checkpoint there (the summary's `signal`).
        A failure raises UserError before the first training step and RunError after it, naming the last
        good checkpoint; the full traceback of an unexpected error goes to error.log in the run directory.
        """
        start, start_steps = time.perf_counter(), self.env_steps
        self._eval_step = -1
        signals.clear()
        with self.run.active(), signals.handled(), signals.deferred():
            try:
                self.callbacks.on_train_start(self)
                with cpu_threads(self.train_cfg.torch_threads), training_float_modes(self.train_cfg.matmul_precision):
                    self._loop()
                    self.wall_s = time.perf_counter() - start
                    if signals.pending() is None and self._eval_step != self.env_steps:
                        self.callbacks.on_eval_end(self, self.evaluate())
                    if self.env_steps > start_steps:
                        self.save_checkpoint()
                self._note_signal()  # so that callbacks closing see why training ended
                self._close_callbacks()
                signum = self._note_signal()  # a signal while they close counts too
            except BaseException as exc:
                self.stop_reason = self.stop_reason or "failed"
                failure = self._failure(exc, started=self.env_steps > start_steps)
                with contextlib.suppress(Exception):  # closing must not hide the failure
                    self._close_callbacks()
                raise failure from None
        steps = self.env_steps - start_steps
        return {
            "env_steps": self.env_steps,
            "wall_s": round(self.wall_s, 3),
            "steps_per_s": round(steps / max(self.wall_s, 1e-9), 1),
            "eval_return_mean": self.last_eval.get("eval/return_mean"),
            "eval_win_rate": self.last_eval.get("eval/win_rate"),
            "run_dir": str(self.run_dir),
            "checkpoint": None if self.last_checkpoint is None else str(self.last_checkpoint),
            "stop_reason": self.stop_reason,
            "signal": signum,
        }

    def _checkpoint_path(self, env_steps: int) -> Path:
        return self.run_dir / "checkpoints" / f"{PREFIX}{env_steps:09d}"

    def _note_signal(self) -> int | None:
        signum = signals.pending()
        if signum is not None:
            self.stop_reason = f"interrupted by {signals.name(signum)}"
        return signum

    def _loop(self) -> None:
        train, clock = self.train_cfg, self.clock
        while clock.env_steps < clock.total_steps and self.stop_reason is None and signals.pending() is None:
            self._iteration_end = clock.env_steps + self.runner.steps_per_iteration
            metrics = self.runner.iteration(self._on_step)
            self._iteration_end = None
            clock.iterations += 1
            if not self.run_dir.is_dir():  # deleted under us: logs and checkpoints would go nowhere
                raise RunError(f"the run directory {self.run_dir} was removed at env step {self.env_steps:,}")
            self._check_finite(metrics)
            self.callbacks.on_update_end(self, metrics)
            if _crossed(clock.env_steps, self.runner.steps_per_iteration, train.eval_interval):
                self.callbacks.on_eval_end(self, self.evaluate())
            if self._save_requested or _crossed(clock.env_steps, self.runner.steps_per_iteration,
                                                train.checkpoint_interval):
                self._save_requested = False
                self.save_checkpoint()

    def _on_step(self, n_env_steps: int, finished: EpisodeStats | None) -> None:
        self.clock.advance(n_env_steps, finished)
        self.callbacks.on_step(self, n_env_steps)
        if finished is not None and len(finished):
            self.callbacks.on_episode_end(self, finished)

    def _check_finite(self, metrics: Mapping[str, float]) -> None:
        """NonFiniteError for a non-finite metric (losses, gradient norms) or agent tensor (weights, optimiser
        state). The agent's tensors are listed once every WATCH_REFRESH iterations (optimisers create theirs
        lazily) and checked every iteration in one pass: parameters and moments are updated in place."""
        for key, value in metrics.items():
            if not math.isfinite(value):
                raise NonFiniteError(f"{key} is {value} at env step {self.env_steps:,}")
        if self._watched is None or self.clock.iterations % WATCH_REFRESH == 0:
            self._watched = float_tensors(self.agent.state_dict())
        if not all_finite(self._watched.values()):
            bad = next(path for path, t in self._watched.items() if not bool(t.isfinite().all()))
            raise NonFiniteError(f"non-finite value in {bad} after the update at env step {self.env_steps:,}")

    def _failure(self, exc: BaseException, started: bool) -> BaseException:
        """The one-line error a failure becomes (see `train`)."""
        if isinstance(exc, Interrupted):
            return Interrupted(exc.signum, f"{exc.detail}; {self._checkpoint_note()}")
        if isinstance(exc, (UserError, RunError)):
            message = str(exc)
        else:
            message = f"{describe_exception(exc)} at env step {self.env_steps:,}"
            try:
                (self.run_dir / "error.log").write_text("".join(traceback.format_exception(exc)))
                message += f" (traceback in {self.run_dir / 'error.log'})"
            except OSError:
                pass
        if not started:  # found before the first training step: bad input (exit status 2)
            return UserError(message)
        return RunError(f"{message}; {self._checkpoint_note()}")

    def _checkpoint_note(self) -> str:
        if self.last_checkpoint is not None:
            return f"last good checkpoint: {self.last_checkpoint}"
        if self.resumed_from is not None:
            return f"the checkpoint resumed from is intact: {self.resumed_from}"
        return "no checkpoint was written"

    def _close_callbacks(self) -> None:
        assert self.logger is not None, "the constructor creates the logger"
        try:
            self.callbacks.on_train_end(self)
        finally:
            self.logger.flush()

    def _restore(self, path: Path) -> None:
        """Load the whole run from a checkpoint (a run directory's newest, or a named checkpoint directory)."""
        path = latest_checkpoint(path)
        state, meta = load_checkpoint(path)
        if meta.get("algo") != self.algo_name:
            raise UserError(f"checkpoint {path} is for algorithm {meta.get('algo')!r}, not {self.algo_name!r}")
        try:
            self.run.load_state_dict(state["run"])
            self.agent.load_state_dict(state["agent"])
            self.runner.load_state_dict(state["runner"])
        except STATE_MISMATCH as exc:
            raise state_mismatch(path, exc) from None
        self.resumed_from = self.last_checkpoint = path
        if not self.runner.exact_resume:
            print(f"note: {self.env_name} cannot save its state; the resumed run restarts its episodes "
                  "(not bit-exact)", flush=True)

    def _note_schedule_horizon(self) -> None:
        """At a resume, one line on the schedules annealed over the run when their horizon is not the budget."""
        clock = self.clock
        keys = self.algo_cfg.budget_schedules() if isinstance(self.algo_cfg, BudgetScheduled) else ()
        if not keys or clock.horizon == clock.total_steps:
            return
        what = (f"end at {clock.horizon:,} env steps and hold their final values to the budget of "
                f"{clock.total_steps:,}" if clock.horizon < clock.total_steps else
                f"run to {clock.horizon:,} env steps and stop part-way at the budget of {clock.total_steps:,}")
        print(f"note: the schedules over the run ({', '.join(f'algo.{k}' for k in keys)}) {what}; "
              "train.schedule_steps=N sets their horizon", flush=True)

    def close(self) -> None:
        for env in (self.env, self.eval_env):
            if env is not None:
                with contextlib.suppress(Exception):  # closing after a failure must not hide it
                    env.close()
        if self.logger is not None:
            self.logger.close(failed=self.stop_reason == "failed")


def _crossed(env_steps: int, step: int, interval: int) -> bool:
    """Whether the last iteration (of `step` env steps, ending at `env_steps`) passed a multiple of `interval`."""
    return interval > 0 and env_steps // interval > (env_steps - step) // interval


def leaves(tree: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) of every leaf of a state tree (nested dicts, lists and tuples)."""
    items = tree.items() if isinstance(tree, Mapping) else enumerate(tree) if isinstance(tree, (list, tuple)) else None
    if items is None:
        yield path or "value", tree
        return
    for key, value in items:
        yield from leaves(value, f"{path}.{key}" if path else str(key))


def float_tensors(tree: Any) -> dict[str, torch.Tensor]:
    """The floating-point tensors of a state tree, by path."""
    return {path: v for path, v in leaves(tree) if isinstance(v, torch.Tensor) and v.is_floating_point()}


def all_finite(tensors: Iterable[torch.Tensor]) -> bool:
    """Whether every element is finite: one check per device (on cuda, Adam keeps its step counts on the cpu)."""
    by_device: dict[torch.device, list[torch.Tensor]] = {}
    for t in tensors:
        by_device.setdefault(t.device, []).append(t.reshape(-1))
    return all(bool(torch.cat(flat).isfinite().all()) for flat in by_device.values())


def nonfinite_leaf(tree: Any) -> str | None:
    """The path of the first float (tensor, array or number) in a state tree that is NaN or inf, else None."""
    for path, value in leaves(tree):
        if isinstance(value, torch.Tensor):
            bad = value.is_floating_point() and not bool(torch.isfinite(value).all())
        elif isinstance(value, (np.ndarray, np.generic)):
            bad = np.issubdtype(value.dtype, np.floating) and not np.isfinite(value).all()
        else:
            bad = isinstance(value, float) and not math.isfinite(value)
        if bad:
            return path
    return None


def device(name: str) -> torch.device:
    """A torch device, checked to exist (UserError otherwise)."""
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"device {name!r} requested but CUDA is not available; use --device cpu")
    if name == "mps" and not torch.backends.mps.is_available():
        raise UserError("device 'mps' requested but MPS is not available; use --device cpu")
    return torch.device(name)
