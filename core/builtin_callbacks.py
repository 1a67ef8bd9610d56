"""Built-in callbacks: progress bar, TensorBoard/CSV logging, early stop. (The training loop itself evaluates
and checkpoints every train.eval_interval / train.checkpoint_interval env steps.)"""
from __future__ import annotations

import math
import time
from collections.abc import Mapping

import numpy as np
from tqdm import tqdm

from core.callbacks import Callback, EpisodeStats, Trainer
from core.logger import RunLogger


class ProgressBar(Callback):
    """A tqdm bar over env steps, showing the recent training return/win rate and the last evaluation."""

    order = 90

    def __init__(self, disable: bool | None = None, window: int = 100) -> None:
        self.disable = disable
        self.window = window
        self.bar: tqdm | None = None
        self._returns = np.zeros(0)
        self._wins = np.zeros(0)
        self._postfix: dict[str, str] = {}

    def on_train_start(self, trainer: Trainer) -> None:
        self.bar = tqdm(total=trainer.total_steps, initial=trainer.env_steps, unit="step", unit_scale=True,
                        dynamic_ncols=True, disable=self.disable, desc="train")

    def on_step(self, trainer: Trainer, n_env_steps: int) -> None:
        self._started().update(n_env_steps)

    def on_episode_end(self, trainer: Trainer, episodes: EpisodeStats) -> None:
        self._returns = np.concatenate([self._returns, episodes.returns])[-self.window:]
        self._wins = np.concatenate([self._wins, episodes.wins])[-self.window:]

    def on_update_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None:
        if len(self._returns):
            self._postfix["return"] = f"{self._returns.mean():.3g}"
            if not np.isnan(self._wins).all():
                self._postfix["win"] = f"{np.nanmean(self._wins):.2f}"
        self._started().set_postfix(self._postfix, refresh=False)

    def on_eval_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None:
        for key, label in (("eval/return_mean", "eval_return"), ("eval/win_rate", "eval_win")):
            value = metrics.get(key)
            if value is not None and math.isfinite(value):
                self._postfix[label] = f"{value:.3g}"
        self._started().set_postfix(self._postfix, refresh=False)

    def on_train_end(self, trainer: Trainer) -> None:
        if self.bar is not None:
            self.bar.close()

    def _started(self) -> tqdm:
        """The bar, which on_train_start creates."""
        assert self.bar is not None, "ProgressBar hook called before on_train_start"
        return self.bar


class MetricsLogger(Callback):
    """Logs training episodes, update metrics, throughput and evaluations through a RunLogger."""

    order = 10

    def __init__(self, logger: RunLogger) -> None:
        self.logger = logger
        self._returns: list[np.ndarray] = []
        self._lengths: list[np.ndarray] = []
        self._wins: list[np.ndarray] = []
        self._last_time = time.perf_counter()
        self._last_steps = 0

    def on_train_start(self, trainer: Trainer) -> None:
        self._last_time = time.perf_counter()
        self._last_steps = trainer.env_steps

    def on_episode_end(self, trainer: Trainer, episodes: EpisodeStats) -> None:
        self._returns.append(episodes.returns)
        self._lengths.append(episodes.lengths)
        self._wins.append(episodes.wins)

    def on_update_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None:
        now = time.perf_counter()
        scalars = dict(metrics)
        scalars["perf/steps_per_second"] = (trainer.env_steps - self._last_steps) / max(now - self._last_time, 1e-9)
        self._last_time, self._last_steps = now, trainer.env_steps
        if self._returns:
            wins = np.concatenate(self._wins)
            scalars["train/episode_return"] = float(np.concatenate(self._returns).mean())
            scalars["train/episode_length"] = float(np.concatenate(self._lengths).mean())
            scalars["train/episodes"] = float(len(wins))
            if not np.isnan(wins).all():
                scalars["train/win_rate"] = float(np.nanmean(wins))
            self._returns, self._lengths, self._wins = [], [], []
        self.logger.log_scalars(scalars, trainer.env_steps)

    def on_eval_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None:
        self.logger.log_scalars(metrics, trainer.env_steps)

    def on_train_end(self, trainer: Trainer) -> None:
        self.logger.flush()


class StopOnTarget(Callback):
    """Stops training once an evaluation reaches a target mean return and/or win rate."""

    order = 30

    def __init__(self, target_return: float | None = None, target_win_rate: float | None = None) -> None:
        self.target_return = target_return
        self.target_win_rate = target_win_rate

    def on_eval_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None:
        ret = metrics.get("eval/return_mean")
        win = metrics.get("eval/win_rate")
        if self.target_return is not None and ret is not None and ret >= self.target_return:
            trainer.request_stop(f"eval return {ret:.3f} reached target {self.target_return}")
        if self.target_win_rate is not None and win is not None and win >= self.target_win_rate:
            trainer.request_stop(f"eval win rate {win:.3f} reached target {self.target_win_rate}")


__all__ = ["MetricsLogger", "ProgressBar", "StopOnTarget"]
