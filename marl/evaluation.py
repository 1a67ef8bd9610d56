"""Greedy evaluation of a multi-agent policy over a fixed number of episodes."""
from __future__ import annotations

from collections.abc import Mapping

import gymnasium as gym
import numpy as np
import torch

from core.evaluation.episodes import EpisodeTally, Evaluation
from envs.spec import EnvSpec
from envs.vec_env import VecEnv
from marl.agent import GroupAction, Hidden, Policy, zero_hidden


def evaluate(agent: Policy, env: VecEnv, n_episodes: int, seed: int | None = None, deterministic: bool = True
             ) -> Evaluation:
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
        step = env.step({name: out[name].actions.cpu().numpy() for name in names})
        done = step.done
        tally.record(done, step.episode_return[done], step.episode_length[done], step.episode_won[done])
        hidden = {name: out[name].hidden for name in names}
        starts = done.copy()
    return tally.result()


class RandomAgent:
    """Uniformly random valid actions (a baseline with the same `act` interface as the learners)."""

    def __init__(self, spec: EnvSpec, seed: int | None = None) -> None:
        self.spec = spec
        self.rng = np.random.default_rng(seed)

    def initial_hidden(self, n_envs: int) -> dict[str, Hidden]:
        return zero_hidden(self.spec, n_envs, 0, torch.device("cpu"))

    def act(self, obs: Mapping[str, np.ndarray], avail: Mapping[str, np.ndarray | None], state: np.ndarray,
            hidden: Mapping[str, Hidden], starts: np.ndarray, deterministic: bool = False,
            with_value: bool = True) -> dict[str, GroupAction]:
        out = {}
        for g in self.spec.groups:
            n_envs = obs[g.name].shape[0]
            group_avail = avail[g.name]
            if group_avail is not None:
                # argmax of uniform noise over available actions = a uniform choice among them
                actions = np.argmax(self.rng.random(group_avail.shape) * group_avail, axis=-1)
            else:
                assert isinstance(g.action_space, gym.spaces.Box), "a discrete group without action masks"
                low, high = g.action_space.low, g.action_space.high
                actions = self.rng.uniform(np.maximum(low, -1.0), np.minimum(high, 1.0),
                                           (n_envs, g.n_agents, *g.action_shape)).astype(np.float32)
            out[g.name] = GroupAction(torch.as_tensor(actions), hidden[g.name])
        return out
