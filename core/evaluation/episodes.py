"""Bookkeeping for evaluations that run exactly N episodes over n parallel envs."""
from __future__ import annotations

import numpy as np


class Evaluation(dict[str, float]):
    """An evaluation's eval/... metrics (a plain dict to callbacks and loggers) and, in `episodes`, the values
    of every episode behind them: {"return": [...], "length": [...], "win": [...] where the env reports wins}."""

    def __init__(self, metrics: dict[str, float], episodes: dict[str, list[float]]) -> None:
        super().__init__(metrics)
        self.episodes = episodes


class EpisodeTally:
    """Counts finished episodes per env against a quota (N split evenly over the envs, so short episodes are
    not over-represented) and turns the counted ones into eval/... metrics."""

    def __init__(self, n_envs: int, n_episodes: int) -> None:
        self.quota = np.full(n_envs, n_episodes // n_envs)
        self.quota[: n_episodes % n_envs] += 1
        self.counts = np.zeros(n_envs, dtype=np.int64)
        self.returns: list[np.ndarray] = []
        self.lengths: list[np.ndarray] = []
        self.wins: list[np.ndarray] = []

    @property
    def running(self) -> bool:
        return bool((self.counts < self.quota).any())

    def record(self, done: np.ndarray, returns: np.ndarray, lengths: np.ndarray, wins: np.ndarray) -> None:
        """`done` [n_envs]; the other arrays hold a value for every env that is done (indexed like `done`)."""
        take = done & (self.counts < self.quota)
        if take.any():
            keep = take[done]
            self.returns.append(returns[keep])
            self.lengths.append(lengths[keep])
            self.wins.append(wins[keep])
        self.counts += done

    def result(self) -> Evaluation:
        """eval/return_mean, return_std, episode_length, episodes, and win_rate for envs that report wins."""
        returns, lengths, wins = np.concatenate(self.returns), np.concatenate(self.lengths), np.concatenate(self.wins)
        out = {"eval/return_mean": float(returns.mean()), "eval/return_std": float(returns.std()),
               "eval/episode_length": float(lengths.mean()), "eval/episodes": float(len(returns))}
        episodes = {"return": returns.astype(float).tolist(), "length": lengths.astype(float).tolist()}
        if not np.isnan(wins).all():
            out["eval/win_rate"] = float(np.nanmean(wins))
            episodes["win"] = wins.astype(float).tolist()
        return Evaluation(out, episodes)
