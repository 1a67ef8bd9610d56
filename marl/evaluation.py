"""Greedy evaluation of a multi-agent policy over a fixed number of episodes."""
from __future__ import annotations

import numpy as np

from envs.vec_env import VecEnv


def evaluate(agent, env: VecEnv, n_episodes: int, seed: int | None = None, deterministic: bool = True
             ) -> dict[str, float]:
    """Run exactly `n_episodes` episodes (split evenly over the env's copies, so short episodes are not
    over-represented) and return eval/... metrics. eval/win_rate is present only for envs that report wins."""
    n = env.n_envs
    quota = np.full(n, n_episodes // n)
    quota[: n_episodes % n] += 1
    counts = np.zeros(n, dtype=np.int64)
    returns, lengths, wins = [], [], []
    step = env.reset(seed=seed)
    hidden = agent.initial_hidden(n)
    starts = np.ones(n, dtype=bool)
    names = [g.name for g in env.spec.groups]
    while (counts < quota).any():
        out = agent.act(step.group_obs, step.group_avail, step.state, hidden, starts,
                        deterministic=deterministic, with_value=False)
        step = env.step({name: out[name][0].cpu().numpy() for name in names})
        done = step.done
        take = done & (counts < quota)
        if take.any():
            returns.append(step.episode_return[take].copy())
            lengths.append(step.episode_length[take].copy())
            wins.append(step.episode_won[take].copy())
        counts += done
        hidden = {name: out[name][3] for name in names}
        starts = done.copy()
    returns_a, wins_a = np.concatenate(returns), np.concatenate(wins)
    metrics = {
        "eval/return_mean": float(returns_a.mean()),
        "eval/return_std": float(returns_a.std()),
        "eval/episode_length": float(np.concatenate(lengths).mean()),
        "eval/episodes": float(len(returns_a)),
    }
    if not np.isnan(wins_a).all():
        metrics["eval/win_rate"] = float(np.nanmean(wins_a))
    return metrics
