"""The training loop both sides share: callbacks, logging, periodic evaluation, checkpoints and resume.

A subclass builds the side-specific pieces in `_build` (vector envs, agent) and `_make_runner`, and says how
to evaluate. A runner offers `steps_per_iteration`, `iteration(on_step) -> metrics` (calling
`on_step(n_env_steps, finished_episodes | None)` after each vector step) and, off-policy, a `buffer` that is
saved with checkpoints.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterable

import torch

from core.builtin_callbacks import MetricsLogger, PeriodicCheckpoint, PeriodicEvaluation, ProgressBar, StopOnTarget
from core.callbacks import Callback, CallbackList, EpisodeStats
from core.checkpoint import load_checkpoint, save_checkpoint
from core.config import save_yaml, to_dict
from core.errors import UserError
from core.logger import RunLogger
from core.precision import training_float_modes
from core.run_config import TrainConfig
from core.seeding import restore_rng_state, rng_state, seed_everything

EVAL_SEED_OFFSET = 1_000_003


class Trainer:
    """Builds a run from validated configs and runs it; see `train`. Subclasses implement the hooks below."""

    def __init__(self, algo: str, env: str, train: TrainConfig, algo_cfg: Any, env_kwargs: dict[str, Any],
                 run_dir: Path, callbacks: Iterable[Callback] = (), resume: str | Path | None = None) -> None:
        self.algo_name, self.env_name = algo, env
        self.train_cfg, self.algo_cfg, self.env_kwargs = train, algo_cfg, env_kwargs
        self.run_dir = Path(run_dir)
        self.total_steps = train.steps
        self.env_steps = 0
        self.updates = 0
        self.stop_reason: str | None = None
        self.last_eval: dict[str, float] = {}
        self._last_eval_step = -1
        self._last_checkpoint: tuple[int, Path] | None = None
        self.wall_s = 0.0
        torch.set_num_threads(train.torch_threads)
        self.np_rng = seed_everything(train.seed)
        try:
            self._build(device(train.device))
            arrays = self._restore(resume) if resume is not None else {}
            self.runner = self._make_runner(seed=train.seed + self.env_steps)
            if arrays and getattr(self.runner, "buffer", None) is not None:
                self.runner.buffer.load_state(arrays)  # off-policy: the replay buffer resumes intact
                if hasattr(self.runner, "after_buffer_restore"):
                    self.runner.after_buffer_restore()
            per_iteration = self.runner.steps_per_iteration  # the budget is rounded up to whole iterations
            self.total_steps = -(-train.steps // per_iteration) * per_iteration
        except BaseException:
            self.close()
            raise
        self.logger = RunLogger(self.run_dir)
        save_yaml({"algo_name": algo, "env_name": env, "train": to_dict(train), "algo": to_dict(algo_cfg),
                   "env": env_kwargs}, self.run_dir / "config.yaml")
        self.logger.log_hparams({"algo": algo, "env": env, **{f"algo.{k}": v for k, v in to_dict(algo_cfg).items()},
                                 "train.n_envs": train.n_envs, "train.seed": train.seed},
                                {"eval/return_mean": 0.0})
        self.callbacks = CallbackList([MetricsLogger(self.logger), StopOnTarget(train.target_return, train.target_win_rate),
                                       PeriodicCheckpoint(train.checkpoint_interval), *callbacks])
        self.callbacks.append(PeriodicEvaluation(train.eval_interval, self.callbacks))
        if train.progress:
            self.callbacks.append(ProgressBar())

    # -- what a subclass provides --------------------------------------------------------------------------
    def _build(self, device: torch.device) -> None:
        """Create `self.env`, `self.eval_env` and `self.agent` (raise UserError for a bad combination)."""
        raise NotImplementedError

    def _make_runner(self, seed: int) -> Any:
        raise NotImplementedError

    def _evaluate(self, seed: int) -> dict[str, float]:
        """Greedy evaluation over train.eval_episodes episodes: eval/... metrics."""
        raise NotImplementedError

    # -- the Trainer protocol used by callbacks ------------------------------------------------------------
    def request_stop(self, reason: str) -> None:
        self.stop_reason = self.stop_reason or reason

    def evaluate(self) -> dict[str, float]:
        self.last_eval = self._evaluate(self.train_cfg.seed + EVAL_SEED_OFFSET)
        self._last_eval_step = self.env_steps
        return self.last_eval

    def save_checkpoint(self) -> Path:
        if self._last_checkpoint and self._last_checkpoint[0] == self.env_steps:
            return self._last_checkpoint[1]
        tensors = {"agent": self.agent.state_dict(), "torch_rng": torch.get_rng_state()}
        meta = {"algo": self.algo_name, "env": self.env_name, "env_steps": self.env_steps, "updates": self.updates,
                "config": {"train": to_dict(self.train_cfg), "algo": to_dict(self.algo_cfg), "env": self.env_kwargs},
                "rng": rng_state(self.np_rng)}
        buffer = getattr(self.runner, "buffer", None)
        path = save_checkpoint(self.run_dir / "checkpoints" / f"step-{self.env_steps:09d}", tensors, meta,
                               buffer.state() if buffer is not None else None)
        self._last_checkpoint = (self.env_steps, path)
        self.callbacks.on_checkpoint(self, path)
        return path

    # -- running ----------------------------------------------------------------------------------------
    def train(self) -> dict[str, Any]:
        """Train until the step budget or a stop request; always finish with an evaluation and a checkpoint.

        Ctrl-C stops cleanly: a checkpoint is written and logs are flushed before KeyboardInterrupt propagates.
        """
        start = time.perf_counter()
        start_steps = self.env_steps
        self.callbacks.on_train_start(self)
        try:
            with training_float_modes(self.train_cfg.matmul_precision):
                while self.env_steps < self.total_steps and self.stop_reason is None:
                    metrics = self.runner.iteration(self._on_step)
                    self.updates += 1
                    self.callbacks.on_update_end(self, metrics)
        except KeyboardInterrupt:
            self.stop_reason = "interrupted"
            self.save_checkpoint()
            self.callbacks.on_train_end(self)
            raise
        self.wall_s = time.perf_counter() - start
        if self._last_eval_step != self.env_steps:
            self.callbacks.on_eval_end(self, self.evaluate())
        self.save_checkpoint()
        self.callbacks.on_train_end(self)
        steps = self.env_steps - start_steps
        return {
            "env_steps": self.env_steps,
            "wall_s": round(self.wall_s, 3),
            "steps_per_s": round(steps / max(self.wall_s, 1e-9), 1),
            "eval_return_mean": self.last_eval.get("eval/return_mean"),
            "eval_win_rate": self.last_eval.get("eval/win_rate"),
            "run_dir": str(self.run_dir),
            "stop_reason": self.stop_reason,
        }

    def _on_step(self, n_env_steps: int, finished: EpisodeStats | None) -> None:
        self.env_steps += n_env_steps
        self.callbacks.on_step(self, n_env_steps)
        if finished is not None and len(finished):
            self.callbacks.on_episode_end(self, finished)

    def _restore(self, path: str | Path) -> dict:
        """Load agent, counters and RNG states; returns the checkpoint's arrays (replay buffer, if any)."""
        path = latest_checkpoint(Path(path))
        tensors, meta, arrays = load_checkpoint(path)
        if meta.get("algo") != self.algo_name:
            raise UserError(f"checkpoint {path} is for algorithm {meta.get('algo')!r}, not {self.algo_name!r}")
        try:
            self.agent.load_state_dict(tensors["agent"])
        except (RuntimeError, KeyError, ValueError) as exc:
            raise UserError(f"checkpoint {path} does not match this env/config: {str(exc).splitlines()[0]}") from None
        self.env_steps, self.updates = int(meta["env_steps"]), int(meta["updates"])
        restore_rng_state(meta["rng"], self.np_rng, tensors.get("torch_rng"))
        return arrays

    def close(self) -> None:
        for name in ("env", "eval_env"):
            env = getattr(self, name, None)
            if env is not None:
                env.close()
        logger = getattr(self, "logger", None)
        if logger is not None:
            logger.close()


def latest_checkpoint(path: Path) -> Path:
    """A checkpoint directory, or the newest one under a run directory's checkpoints/."""
    if (path / "metadata.json").is_file():
        return path
    candidates = sorted((path / "checkpoints").glob("step-*")) if (path / "checkpoints").is_dir() else []
    if not candidates:
        raise UserError(f"no checkpoint found at {path}")
    return candidates[-1]


def device(name: str) -> torch.device:
    """A torch device, checked to exist (UserError otherwise)."""
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"device {name!r} requested but CUDA is not available; use --device cpu")
    if name == "mps" and not torch.backends.mps.is_available():
        raise UserError("device 'mps' requested but MPS is not available; use --device cpu")
    return torch.device(name)
