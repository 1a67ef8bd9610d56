"""Built-in callbacks: progress bar, metrics logging (metrics.csv and train.loggers), early stop, videos. (The
training loop itself evaluates and checkpoints every train.eval_interval / train.checkpoint_interval env steps.)"""
from __future__ import annotations

import math
import time
from collections.abc import Mapping
from contextlib import ExitStack, closing
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
from tqdm import tqdm

from core import signals
from core.callbacks import Callback, EpisodeStats, Trainer
from core.evaluation.episodes import Evaluation
from core.evaluation.recording import FrameLog, quiet_sdl, video_kind, write_video
from core.logger import RunLogger
from core.precision import cpu_threads

VIDEO_TAG = "video/greedy_episode"


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


class RecordableEnv(Protocol):
    def reset(self, seed: int | None = None) -> Any: ...

    def close(self) -> None: ...


EnvT = TypeVar("EnvT", bound=RecordableEnv)


class EpisodeRecorder(Protocol[EnvT]):
    """How a side records its agent (core.evaluation.play.Side's recording half: marl.saved_policy.MarlSide,
    single_agent.saved_policy.SingleAgentSide)."""

    def recording_env(self, name: str, log: FrameLog, options: dict[str, Any]) -> EnvT: ...

    def evaluate(self, agent: Any, env: EnvT, n_episodes: int, seed: int, deterministic: bool) -> Evaluation: ...


class VideoRecorder(Callback, Generic[EnvT]):
    """Every `interval` env steps, and once more at the end of a run that finished (not one that failed or was
    stopped by a signal), plays one greedy episode in a separate one-env copy of the env and writes it as
    videos/step-N.gif in the run directory and through the run's loggers under VIDEO_TAG (an animated image in
    TensorBoard, a video in W&B). An env that cannot render is refused at the start of training, not at the
    first video."""

    order = 20

    def __init__(self, recorder: EpisodeRecorder[EnvT], agent: Any, env_name: str, env_kwargs: dict[str, Any],
                 interval: int, seed: int, logger: RunLogger, torch_threads: int = 1) -> None:
        self.recorder, self.agent = recorder, agent
        self.env_name, self.env_kwargs = env_name, env_kwargs
        self.interval, self.seed, self.logger, self.threads = interval, seed, logger, torch_threads
        self.log = FrameLog(env_name)
        self.env: EnvT | None = None
        self._open = ExitStack()  # the recording env and SDL's settings for it, from train start to end
        self._next = interval  # env steps at which the next periodic video is due
        self._recorded_at = self._evaluated_at = -1

    def on_train_start(self, trainer: Trainer) -> None:
        video_kind(trainer.run_dir / "videos", "gif")  # Pillow, or one line saying what to install
        self._open.enter_context(quiet_sdl())
        self.env = self._open.enter_context(closing(self.recorder.recording_env(self.env_name, self.log,
                                                                                 self.env_kwargs)))
        self.env.reset(seed=self.seed)  # renders the first frame: an env that cannot render fails here
        self._next = (trainer.env_steps // self.interval + 1) * self.interval

    def on_update_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None:
        if trainer.env_steps >= self._next:
            self._record(trainer)
            self._next = (trainer.env_steps // self.interval + 1) * self.interval

    def on_eval_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None:
        self._evaluated_at = trainer.env_steps

    def on_train_end(self, trainer: Trainer) -> None:
        try:  # a run that finished ends with an evaluation at its last step (none after a failure or a signal)
            if (self._evaluated_at == trainer.env_steps != self._recorded_at and signals.pending() is None
                    and self.env is not None):
                self._record(trainer)
        finally:
            self.env = None
            self._open.close()

    def _record(self, trainer: Trainer) -> None:
        assert self.env is not None, "a video before on_train_start"
        self.log.episodes.clear()
        with cpu_threads(self.threads):
            self.recorder.evaluate(self.agent, self.env, 1, self.seed, True)
        frames = self.log.episodes[0]
        path = trainer.run_dir / "videos" / f"step-{trainer.env_steps:09d}.gif"
        path.parent.mkdir(exist_ok=True)
        write_video(frames, path, self.log.fps, "gif")
        height, width = frames[0].shape[:2]
        self.logger.log_animation(VIDEO_TAG, path, height, width, trainer.env_steps)
        self._recorded_at = trainer.env_steps


__all__ = ["MetricsLogger", "ProgressBar", "StopOnTarget", "VideoRecorder"]
