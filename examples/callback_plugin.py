"""A callback plugin, loaded with --callback examples.callback_plugin:BestReturnTracker.

It tracks the best training episode return, prints it at the end of training and writes it to
best_return.txt in the run directory. Plugins subclass core.callbacks.Callback and override any hooks.
"""
from __future__ import annotations

from core.callbacks import Callback, EpisodeStats, Trainer


class BestReturnTracker(Callback):
    def __init__(self) -> None:
        self.best = float("-inf")
        self.episodes = 0

    def on_episode_end(self, trainer: Trainer, episodes: EpisodeStats) -> None:
        self.episodes += len(episodes)
        self.best = max(self.best, float(episodes.returns.max()))

    def on_train_end(self, trainer: Trainer) -> None:
        (trainer.run_dir / "best_return.txt").write_text(f"{self.best}\n")
        print(f"[BestReturnTracker] best training return {self.best:.3f} over {self.episodes} episodes")
