"""Greedy evaluation of a multi-agent policy over a fixed number of episodes."""
from __future__ import annotations

import numpy as np
import torch

from core.evaluation import EpisodeTally
from envs.vec_env import VecEnv


def evaluate(agent, env: VecEnv, n_episodes: int, seed: int | None = None, deterministic: bool = True
             ) -> dict[str, float]:
    """Run exactly `n_episodes` episodes (split evenly over the env's copies, so short episodes are not
    over-represented) and return eval/... metrics. eval/win_rate is present only for envs that report wins."""
    n = env.n_envs
    tally = EpisodeTally(n, n_episodes)
    step = env.reset(seed=seed)
    hidden = agent.initial_hidden(n)
    starts = np.ones(n, dtype=bool)
    names = [g.name for g in env.spec.groups]
    while tally.running:
        out = agent.act(step.group_obs, step.group_avail, step.state, hidden, starts,
                        deterministic=deterministic, with_value=False)
        step = env.step({name: out[name][0].cpu().numpy() for name in names})
        done = step.done
        tally.record(done, step.episode_return[done], step.episode_length[done], step.episode_won[done])
        hidden = {name: out[name][3] for name in names}
        starts = done.copy()
    return tally.metrics()


class RandomAgent:
    """Uniformly random valid actions (a baseline with the same `act` interface as the learners)."""

    def __init__(self, spec, seed: int | None = None) -> None:
        self.spec = spec
        self.rng = np.random.default_rng(seed)

    def initial_hidden(self, n_envs: int) -> dict:
        return {g.name: (None, None) for g in self.spec.groups}

    def act(self, obs, avail, state, hidden, starts, deterministic: bool = False, with_value: bool = True) -> dict:
        out = {}
        for g in self.spec.groups:
            n_envs = obs[g.name].shape[0]
            if g.discrete:
                # argmax of uniform noise over available actions = a uniform choice among them
                actions = np.argmax(self.rng.random(avail[g.name].shape) * avail[g.name], axis=-1)
            else:
                low, high = g.action_space.low, g.action_space.high
                actions = self.rng.uniform(np.maximum(low, -1.0), np.minimum(high, 1.0),
                                           (n_envs, g.n_agents, *g.action_shape)).astype(np.float32)
            out[g.name] = (torch.as_tensor(actions), None, None, (None, None))
        return out
