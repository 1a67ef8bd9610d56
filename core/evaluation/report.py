"""What an evaluation of a saved policy reports: mean return and win rate with 95% confidence intervals, episode
lengths, as a JSON-ready summary and as one printed line per statistic."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from core.evaluation.play import EvalRequest, Played
from core.evaluation.saved_run import SavedRun

Z95 = 1.959964  # the standard normal's 97.5% quantile


def wilson_interval(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a success rate: unlike the normal approximation, it stays inside [0, 1] and is
    not empty at 0 or n wins."""
    if n <= 0:
        return (0.0, 1.0)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (0.0 if wins == 0 else centre - half, 1.0 if wins == n else centre + half)  # exact at the ends


def mean_interval(values: list[float], z: float = Z95) -> tuple[float, float] | None:
    """mean +- z * sd / sqrt(n) with the sample standard deviation; None for fewer than two values."""
    if len(values) < 2:
        return None
    x = np.asarray(values, dtype=float)
    half = z * float(x.std(ddof=1)) / math.sqrt(len(x))
    return (float(x.mean()) - half, float(x.mean()) + half)


def summarize(saved: SavedRun, request: EvalRequest, played: Played, video: str | None) -> dict[str, Any]:
    """The evaluation's statistics and every episode's values (the --summary-json file)."""
    episodes = played.evaluation.episodes
    returns, lengths, wins = episodes["return"], episodes["length"], episodes.get("win")
    n_wins = int(sum(wins)) if wins is not None else 0
    summary: dict[str, Any] = {
        "algo": saved.algo, "env": request.env, "trained_env": saved.env, "env_options": request.env_kwargs,
        "checkpoint": str(saved.checkpoint), "trained_env_steps": saved.clock.env_steps,
        "episodes": len(returns), "seed": request.seed,
        "policy": "greedy" if request.deterministic else "stochastic",
        "return_mean": float(np.mean(returns)), "return_std": float(np.std(returns, ddof=1)) if len(returns) > 1
        else None, "return_ci95": mean_interval(returns),
        "win_rate": n_wins / len(wins) if wins is not None else None, "wins": n_wins if wins is not None else None,
        "win_rate_ci95": wilson_interval(n_wins, len(wins)) if wins is not None else None,
        "episode_length_mean": float(np.mean(lengths)), "episode_length_min": int(min(lengths)),
        "episode_length_max": int(max(lengths)),
        "per_episode": {**episodes, "length": [int(x) for x in lengths]}, "video": None,
    }
    if played.recording is not None and video is not None:
        rec = played.recording
        summary["video"] = {"path": video, "episodes": len(rec.episodes), "lengths": rec.lengths,
                            "frames": sum(len(e) for e in rec.episodes), "fps": rec.fps}
    return summary


def report_lines(summary: dict[str, Any]) -> list[str]:
    """A heading, then one line per statistic (the win rate only where the env reports wins), then the video."""
    n = summary["episodes"]
    on = summary["env"] if summary["env"] == summary["trained_env"] else \
        f"{summary['env']} (trained on {summary['trained_env']})"
    lines = [f"{summary['algo']} on {on}, checkpoint {summary['checkpoint']} ({summary['trained_env_steps']:,} env "
             f"steps): {n} episode{'s' if n != 1 else ''}, {summary['policy']}, seed {summary['seed']}"]
    ci = summary["return_ci95"]
    mean = summary["return_mean"]
    lines.append(f"return: {mean:.3f} ± {mean - ci[0]:.3f} (95% CI {ci[0]:.3f} to {ci[1]:.3f})" if ci is not None
                 else f"return: {mean:.3f} (one episode: no confidence interval)")
    if summary["win_rate"] is not None:
        lo, hi = summary["win_rate_ci95"]
        lines.append(f"win rate: {summary['win_rate']:.1%} ({summary['wins']} of {n}; 95% Wilson CI {lo:.1%} to "
                     f"{hi:.1%})")
    lines.append(f"episode length: {summary['episode_length_mean']:.1f} steps (min {summary['episode_length_min']}, "
                 f"max {summary['episode_length_max']})")
    video = summary["video"]
    if video is not None:
        k = video["episodes"]
        lines.append(f"video: {video['path']} ({k} episode{'s' if k != 1 else ''}, {video['frames']} frames at "
                     f"{video['fps']:g} fps, lengths {', '.join(str(n) for n in video['lengths'])})")
    return lines
