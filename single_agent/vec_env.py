"""gymnasium vector envs for the single-agent learners, with explicit same-step auto-reset.

`TransitionVecEnv` wraps `gymnasium.make_vec` in `AutoresetMode.SAME_STEP`: when an env's episode ends, the
returned observation is already the first of its next episode and gymnasium hands over the true final
observation in `infos["final_obs"]`. `step` puts that final observation back into `next_obs`, so every
transition is (obs, action, reward, next_obs, terminated, truncated) exactly as the MDP produced it: a
truncated transition bootstraps from its real final observation, a terminated one does not bootstrap.

Each env copy is wrapped in `Snapshot`, which saves and restores its plain state (arrays, numbers, random
generators of every wrapper layer: classic-control envs are saved whole), ignores Ctrl-C inside worker
processes (the parent stops them) and names its index in errors. With `vec="subproc"` a worker that does not
answer within `worker_timeout_s` stops the run.
"""
from __future__ import annotations

import multiprocessing as mp
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import EnvSpec
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from gymnasium.vector.async_vector_env import AsyncState

from core import signals
from core.episode_stats import EpisodeStats
from core.errors import (
    EnvWorkerError,
    Interrupted,
    MissingDependencyError,
    NonFiniteError,
    UnknownNameError,
    UserError,
    describe_exception,
)
from core.paths import install_hint

VECTORIZATION = {"sync": "sync", "subproc": "async"}
PLAIN = (bool, int, float, str, type(None), np.ndarray, np.generic)
IGNORED = (gym.Space, EnvSpec, dict, tuple)  # spaces, specs, saved constructor kwargs, the env checker's cache
POLL_S = 0.25


class Snapshot(gym.Wrapper):
    """Saves/restores the wrapped env's plain state (`snapshot` / `restore`); see module docstring."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.index = -1  # set by the vector env (`set_attr`), for error messages
        self.pending: list[dict[str, Any]] | None = None  # a snapshot to restore (`set_attr`, then `apply`)
        if mp.parent_process() is not None:  # a worker: the parent handles signals and closes us
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def step(self, action: Any) -> Any:
        try:
            return self.env.step(action)
        except Exception as exc:  # one line with the user's file and line, whichever process we run in
            raise RuntimeError(f"env {self.index} raised {describe_exception(exc)} while stepping") from None

    def snapshot(self) -> list[dict[str, Any]] | None:
        """The plain attributes of each layer below this one, or None if a layer holds state of another kind."""
        layers: list[dict[str, Any]] = []
        env: gym.Env | None = self.env
        while env is not None:
            state: dict[str, Any] = {}
            for name, value in vars(env).items():
                if name == "env" or isinstance(value, IGNORED) or callable(value):
                    continue
                if isinstance(value, np.random.Generator):
                    state[name] = {"generator": value.bit_generator.state}
                elif isinstance(value, PLAIN):
                    state[name] = value.copy() if isinstance(value, np.ndarray) else value
                else:
                    return None
            layers.append(state)
            env = getattr(env, "env", None)
        return layers

    def apply(self) -> None:
        """Restore `pending`, a `snapshot()` of the same env."""
        env: gym.Env | None = self.env
        layers, self.pending = self.pending or [], None
        for state in layers:
            assert env is not None, "a snapshot of an env with more layers"
            for name, value in state.items():
                if isinstance(value, dict):
                    getattr(env, name).bit_generator.state = value["generator"]
                else:
                    setattr(env, name, value.copy() if isinstance(value, np.ndarray) else value)
            env = getattr(env, "env", None)


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

    def __init__(self, env_id: str, n_envs: int, vec: str = "sync", worker_timeout_s: float = 60.0,
                 wrappers: Sequence[Callable[[gym.Env], gym.Wrapper]] = (), **env_kwargs: Any) -> None:
        """`wrappers` go around each env copy's `Snapshot` (a recorder's frames, say)."""
        try:
            env = gym.make_vec(env_id, num_envs=n_envs, vectorization_mode=VECTORIZATION[vec],
                               vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
                               wrappers=[Snapshot, *wrappers], **env_kwargs)
        except gym.error.DependencyNotInstalled as exc:
            raise MissingDependencyError(f"env {env_id!r} needs an optional dependency ({str(exc).splitlines()[0]}); "
                                         f"for Box2D envs: {install_hint('box2d')}") from None
        except (gym.error.NameNotFound, gym.error.NamespaceNotFound, gym.error.VersionNotFound) as exc:
            raise UnknownNameError(f"unknown gymnasium env {env_id!r}: {str(exc).splitlines()[0]}") from None
        except (gym.error.Error, ModuleNotFoundError) as exc:
            raise UserError(f"cannot make gymnasium env {env_id!r}: {str(exc).splitlines()[0]}") from None
        except (KeyboardInterrupt, Interrupted):
            raise
        except BaseException as exc:  # the env's own constructor or module failed (sys.exit too)
            raise UserError(f"cannot make gymnasium env {env_id!r}: {describe_exception(exc)}") from None
        assert isinstance(env, (SyncVectorEnv, AsyncVectorEnv)), "the sync and async modes make these"
        self.env: SyncVectorEnv | AsyncVectorEnv = env
        self.n_envs = n_envs
        self.worker_timeout_s = worker_timeout_s
        self.observation_space = self.env.single_observation_space
        self.action_space = self.env.single_action_space
        self._returns = np.zeros(n_envs)
        self._lengths = np.zeros(n_envs, np.int64)
        self._obs: Any = None
        self.env.set_attr("index", list(range(n_envs)))
        self.exact_resume = all(s is not None for s in self.env.call("snapshot"))

    @property
    def obs(self) -> Any:
        """The current observations (the first of new episodes where one just ended)."""
        return self._obs

    def reset(self, seed: int | None = None) -> Any:
        self._obs, _ = self._run(lambda: self.env.reset(seed=seed), "resetting")
        self._returns[:] = 0
        self._lengths[:] = 0
        return self._obs

    def step(self, actions: np.ndarray) -> Transition:
        obs, reward, terminated, truncated, infos = self._run(lambda: self._step(actions), "stepping")
        reward = np.asarray(reward, np.float32)
        if not np.isfinite(reward).all():
            i = int(np.flatnonzero(~np.isfinite(reward))[0])
            raise NonFiniteError(f"env {i} returned a non-finite reward ({reward[i]})")
        _check_obs(obs)
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

    def _step(self, actions: np.ndarray) -> Any:
        if not isinstance(self.env, AsyncVectorEnv):
            return self.env.step(actions)
        self.env.step_async(actions)
        pipes, deadline = list(self.env.parent_pipes), time.monotonic() + self.worker_timeout_s
        while pipes:  # wait in slices, so that a hung worker is noticed and a stop request is not held up
            pipes = [p for p in pipes if p not in wait(pipes, timeout=POLL_S)]
            if pipes and (time.monotonic() > deadline or signals.overdue()):
                late = ", ".join(str(self.env.parent_pipes.index(p)) for p in pipes)
                self.close(terminate=True)
                if signals.overdue():
                    raise Interrupted(signals.pending() or signal.SIGINT, f"while env {late} did not answer (stepping)")
                raise EnvWorkerError(f"env {late} did not answer within train.worker_timeout_s="
                                     f"{self.worker_timeout_s:g} s while stepping")
        dead = [(i, p.exitcode) for i, p in enumerate(self.env.processes) if not p.is_alive()]
        if dead:
            self.close(terminate=True)
            raise EnvWorkerError(f"env {dead[0][0]}: worker process died (exit code {dead[0][1]}) while stepping")
        return self.env.step_wait()

    def _run(self, call: Any, doing: str) -> Any:
        """`call()`, with a worker's error as one EnvWorkerError line (gymnasium's own error log silenced)."""
        level, gym.logger.min_level = gym.logger.min_level, gym.logger.ERROR + 1
        try:
            return call()
        except (EnvWorkerError, Interrupted, NonFiniteError, UserError):  # UserError: a recorder's missing renderer
            raise
        except Exception as exc:
            if isinstance(self.env, AsyncVectorEnv):  # its workers are in an unknown state: end them now
                self.close(terminate=True)
            raise EnvWorkerError(str(exc) if isinstance(exc, RuntimeError) and str(exc).startswith("env ")
                                 else f"env raised {describe_exception(exc)} while {doing}") from None
        finally:
            gym.logger.min_level = level

    def state_dict(self) -> dict[str, Any]:
        """Every env's plain state, the current observations and the running episode returns and lengths."""
        if not self.exact_resume:
            return {"exact": False}
        return {"exact": True, "envs": list(self.env.call("snapshot")), "obs": _copy(self._obs),
                "returns": self._returns.copy(), "lengths": self._lengths.copy()}

    def load_state_dict(self, state: dict[str, Any], reset_seed: int | None = None) -> bool:
        """Continue where `state` was saved (True), or from new episodes when it is not exact (False)."""
        if not (state["exact"] and self.exact_resume):
            self.reset(seed=reset_seed)
            return False
        self.env.set_attr("pending", state["envs"])
        self.env.call("apply")
        self._obs, self._returns[...], self._lengths[...] = _copy(state["obs"]), state["returns"], state["lengths"]
        return True

    def close(self, terminate: bool = False) -> None:
        """Close the envs; `terminate` kills the workers first (they ignore SIGTERM, and may be hung)."""
        try:
            if terminate and isinstance(self.env, AsyncVectorEnv):
                for process in self.env.processes:
                    process.kill()
                self.env._state = AsyncState.DEFAULT  # else close() first waits for the step the dead never answer
                self.env.close(terminate=True)
            else:
                self.env.close()
        except Exception:  # a broken worker must not hide the error being reported
            pass


def _check_obs(obs: Any) -> None:
    for key, value in (obs.items() if isinstance(obs, dict) else [("", obs)]):
        if isinstance(value, dict):
            _check_obs(value)
        elif np.issubdtype(np.asarray(value).dtype, np.floating) and not np.isfinite(value).all():
            i = int(np.argwhere(~np.isfinite(np.asarray(value)))[0][0])
            raise NonFiniteError(f"env {i} returned a non-finite observation{f' ({key})' if key else ''}")


def _copy(obs: Any) -> Any:
    return {k: _copy(v) for k, v in obs.items()} if isinstance(obs, dict) else np.array(obs, copy=True)


def _with_final_obs(obs: Any, finals: list[Any], rows: np.ndarray) -> Any:
    """A copy of `obs` whose `rows` hold `finals` (the final observations gymnasium returns per env)."""
    if isinstance(obs, dict):
        return {key: _with_final_obs(value, [f[key] for f in finals], rows) for key, value in obs.items()}
    out = np.array(obs, copy=True)
    out[rows] = np.stack(finals)
    return out
