"""gymnasium vector envs for the single-agent learners, with explicit same-step auto-reset.

`TransitionVecEnv` wraps `gymnasium.make_vec` in `AutoresetMode.SAME_STEP`: when an env's episode ends, the
returned observation is already the first of its next episode and gymnasium hands over the true final
observation in `infos["final_obs"]`. `step` puts that final observation back into `next_obs`, so every
transition is (obs, action, reward, next_obs, terminated, truncated) exactly as the MDP produced it: a
truncated transition bootstraps from its real final observation, a terminated one does not bootstrap.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from core.callbacks import EpisodeStats
from core.errors import MissingDependencyError, UnknownNameError, UserError

VECTORIZATION = {"sync": "sync", "subproc": "async"}


@dataclass
class Transition:
    """One vector step: arrays with a leading n_envs axis; `obs` continues the next step."""

    obs: Any
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    next_obs: Any  # the true next observation (the final one where an episode ended)
    finished: EpisodeStats | None


class TransitionVecEnv:
    """n_envs copies of a gymnasium env (`env_id`, or `module:EnvId` to import a module that registers it)."""

    def __init__(self, env_id: str, n_envs: int, vec: str = "sync", **env_kwargs: Any) -> None:
        try:
            self.env = gym.make_vec(env_id, num_envs=n_envs, vectorization_mode=VECTORIZATION[vec],
                                    vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP}, **env_kwargs)
        except gym.error.DependencyNotInstalled as exc:
            raise MissingDependencyError(f"env {env_id!r} needs an optional dependency ({str(exc).splitlines()[0]}); "
                                         "for Box2D envs: pip install -e '.[box2d]'") from None
        except (gym.error.NameNotFound, gym.error.NamespaceNotFound, gym.error.VersionNotFound) as exc:
            raise UnknownNameError(f"unknown gymnasium env {env_id!r}: {str(exc).splitlines()[0]}") from None
        except (gym.error.Error, ModuleNotFoundError, TypeError) as exc:
            raise UserError(f"cannot make gymnasium env {env_id!r}: {str(exc).splitlines()[0]}") from None
        self.n_envs = n_envs
        self.observation_space = self.env.single_observation_space
        self.action_space = self.env.single_action_space
        self._returns = np.zeros(n_envs)
        self._lengths = np.zeros(n_envs, np.int64)
        self._obs: Any = None

    @property
    def obs(self) -> Any:
        """The current observations (the first of new episodes where one just ended)."""
        return self._obs

    def reset(self, seed: int | None = None) -> Any:
        self._obs, _ = self.env.reset(seed=seed)
        self._returns[:] = 0
        self._lengths[:] = 0
        return self._obs

    def step(self, actions: np.ndarray) -> Transition:
        obs, reward, terminated, truncated, infos = self.env.step(actions)
        reward = np.asarray(reward, np.float32)
        self._returns += reward
        self._lengths += 1
        done = terminated | truncated
        next_obs, finished = obs, None
        if done.any():
            rows = np.flatnonzero(done)
            next_obs = _with_final_obs(obs, [infos["final_obs"][i] for i in rows], rows)
            finished = EpisodeStats(self._returns[done].copy(), self._lengths[done].copy(),
                                    np.full(int(done.sum()), np.nan))
            self._returns[done] = 0
            self._lengths[done] = 0
        prev, self._obs = self._obs, obs
        return Transition(prev, reward, terminated, truncated, next_obs, finished)

    def close(self) -> None:
        self.env.close()


def _with_final_obs(obs: Any, finals: list[Any], rows: np.ndarray) -> Any:
    """A copy of `obs` whose `rows` hold `finals` (the final observations gymnasium returns per env)."""
    if isinstance(obs, dict):
        return {key: _with_final_obs(value, [f[key] for f in finals], rows) for key, value in obs.items()}
    out = np.array(obs, copy=True)
    out[rows] = np.stack(finals)
    return out
