"""Whole-episode collection for recurrent agents: replayed (IQL, VDN, QMIX) or trained on once, fresh (COMA).

Each env's running episode is staged in pre-allocated arrays ([n_envs, max_len + 1, ...], one vectorised
write per field and step); when episodes end (same-step auto-reset in the vector env), their rows move to the
episode replay buffer together with the true final observation, so truncated episodes bootstrap correctly.
The team reward is the mean of the agents' rewards (SMAC gives every agent the team reward).
"""
from __future__ import annotations

from typing import Any, Protocol, cast

import numpy as np

from core.buffers import EpisodeReplayBuffer
from core.episode_stats import OnStep
from core.errors import UserError
from core.run_state import RunState
from envs.vec_env import VecEnv, VecStep
from marl.agent import EpisodeAgent, EpisodeAgentConfig
from marl.episode_batch import EpisodeBatch, episode_batch, episode_fields


class ReplayConfig(EpisodeAgentConfig, Protocol):
    buffer_size: int
    batch_size: int
    learning_starts: int
    updates_per_iteration: int


class FreshEpisodesConfig(EpisodeAgentConfig, Protocol):
    batch_episodes: int


class EpisodeRunner:
    """One iteration = `rollout_steps` vector steps of exploratory acting, the episodes that end stored whole in
    a buffer of `capacity` episodes, then `_train` (what the subclasses differ by)."""

    def __init__(self, agent: EpisodeAgent, env: VecEnv, run: RunState, capacity: int) -> None:
        cfg, spec = agent.cfg, env.spec
        self.agent, self.env = agent, env
        max_len = cfg.max_episode_len or spec.episode_limit
        if not max_len:
            raise UserError(f"env {spec.name} does not report an episode limit; set algo.max_episode_len")
        if spec.episode_limit and spec.episode_limit > max_len:
            raise UserError(f"algo.max_episode_len={max_len} is shorter than the env's episode limit "
                            f"({spec.episode_limit})")
        self.max_len = max_len
        fields = episode_fields(spec)
        self.buffer = EpisodeReplayBuffer(capacity, max_len, fields)
        n_envs = env.n_envs
        self.staging = {name: np.zeros((n_envs, max_len + int(per_state), *shape), dtype)
                        for name, (shape, dtype, per_state) in fields.items()}
        self.run = run
        self.rows = np.arange(n_envs)
        self._start(env.reset(seed=run.seed))

    def _start(self, step: VecStep) -> None:
        """Begin new episodes in every env from `step`, their first observations."""
        n_envs = self.env.n_envs
        for v in self.staging.values():
            v[...] = 0
        self.t = np.zeros(n_envs, np.int64)
        self.step = step
        self.hidden = self.agent.initial_hidden(n_envs)
        self.starts = np.ones(n_envs, bool)
        self._stage_observation(step, final=np.zeros(n_envs, bool))

    @property
    def steps_per_iteration(self) -> int:
        return self.agent.cfg.rollout_steps * self.env.n_envs

    @property
    def exact_resume(self) -> bool:
        return self.env.exact_resume

    def state_dict(self) -> dict[str, Any]:
        """Between iterations: the envs, the episodes in progress, recurrent states and the replay buffer."""
        return {"env": self.env.state_dict(), "buffer": self.buffer.state(), "t": self.t.copy(),
                "starts": self.starts.copy(), "staging": {k: v.copy() for k, v in self.staging.items()},
                "hidden": {name: list(h) for name, h in self.hidden.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.buffer.load_state(state["buffer"])
        step, exact = self.env.load_state_dict(state["env"], reset_seed=self.run.seed + self.run.clock.env_steps)
        if not exact:
            self._start(step)  # the episodes in progress are lost with the envs' state
            return
        for key, value in state["staging"].items():
            self.staging[key][...] = value
        self.t[...] = state["t"]
        self.step, self.starts = step, state["starts"].copy()
        self.hidden = {name: tuple(h.to(self.agent.device) for h in hs) for name, hs in state["hidden"].items()}

    def _stage_observation(self, step: VecStep, final: np.ndarray, rows: np.ndarray | None = None) -> None:
        """Write what envs `rows` (default: all) observe at their current step index (the final obs where
        `final`)."""
        rows = self.rows if rows is None else rows
        t, final = self.t[rows], final[rows]

        def pick(last: np.ndarray, current: np.ndarray) -> np.ndarray:
            return np.where(final.reshape(-1, *[1] * (current.ndim - 1)), last[rows], current[rows])

        self.staging["state"][rows, t] = pick(step.final_state, step.state)
        for name in (g.name for g in self.env.spec.groups):
            self.staging[f"obs/{name}"][rows, t] = pick(step.final_group_obs[name], step.group_obs[name])
            self.staging[f"alive/{name}"][rows, t] = pick(step.final_group_alive[name], step.group_alive[name])
            last_avail, avail = step.final_group_avail[name], step.group_avail[name]
            assert last_avail is not None and avail is not None, "episode agents take discrete groups only"
            self.staging[f"avail/{name}"][rows, t] = pick(last_avail, avail)

    def iteration(self, on_step: OnStep) -> dict[str, float]:
        self._act(on_step)
        return {**self._train(), "schedule/epsilon": self.agent.epsilon}

    def _act(self, on_step: OnStep) -> None:
        """`rollout_steps` vector steps of exploratory acting; the episodes that end go to the buffer."""
        agent, env = self.agent, self.env
        names = [g.name for g in env.spec.groups]
        for _ in range(agent.cfg.rollout_steps):
            step = self.step
            out = agent.act(step.group_obs, step.group_avail, step.state, self.hidden, self.starts)
            actions = {name: out[name].actions.numpy() for name in names}
            for name in names:
                self.staging[f"actions/{name}"][self.rows, self.t] = actions[name]
            step = env.step(actions)
            rewards = np.concatenate([step.group_rewards[name] for name in names], axis=1).mean(1)
            self.staging["reward"][self.rows, self.t] = rewards
            self.staging["terminated"][self.rows, self.t] = step.terminated
            done = step.done
            self.t += 1
            if (self.t >= self.max_len).any() and not done[self.t >= self.max_len].all():
                raise UserError(f"an episode of {env.spec.name} ran past algo.max_episode_len={self.max_len}")
            self._stage_observation(step, final=done)
            if done.any():
                ended = np.flatnonzero(done)
                self.buffer.add({k: v[ended] for k, v in self.staging.items()}, self.t[ended])
                for v in self.staging.values():
                    v[ended] = 0
                self.t[ended] = 0
                self._stage_observation(step, np.zeros_like(done), ended)  # new episodes' first obs at t=0
            self.hidden = {name: out[name].hidden for name in names}
            self.starts = done.copy()
            self.step = step
            on_step(env.n_envs, step.finished())

    def _train(self) -> dict[str, float]:
        """Train the agent on the buffer's episodes; its metrics ({} if it did not train)."""
        raise NotImplementedError

    def _batch(self, sampled: tuple[dict[str, np.ndarray], np.ndarray]) -> EpisodeBatch:
        """What the buffer returned (fields, step mask), typed for the agent."""
        return episode_batch(*sampled, (g.name for g in self.env.spec.groups), self.agent.device)


class ReplayEpisodeRunner(EpisodeRunner):
    """Off-policy (IQL, VDN, QMIX): a replay buffer of `buffer_size` episodes; once it holds `learning_starts`,
    each iteration makes `updates_per_iteration` updates on `batch_size` episodes sampled from it."""

    def __init__(self, agent: EpisodeAgent, env: VecEnv, run: RunState) -> None:
        self.cfg = cast(ReplayConfig, agent.cfg)  # the algorithm registry pairs them
        super().__init__(agent, env, run, capacity=self.cfg.buffer_size)

    def _train(self) -> dict[str, float]:
        cfg, metrics = self.cfg, {}
        if self.buffer.size >= cfg.learning_starts:
            for _ in range(cfg.updates_per_iteration):
                metrics = self.agent.update(self.sample(cfg.batch_size, self.run.rng("sample")))
        return metrics

    def sample(self, batch_size: int, rng: np.random.Generator) -> EpisodeBatch:
        """`batch_size` episodes drawn uniformly from the buffer."""
        return self._batch(self.buffer.sample(batch_size, rng))


class OnPolicyEpisodeRunner(EpisodeRunner):
    """On-policy (COMA): one update on exactly the `batch_episodes` freshest episodes as soon as they are
    complete; they are then dropped."""

    def __init__(self, agent: EpisodeAgent, env: VecEnv, run: RunState) -> None:
        self.cfg = cast(FreshEpisodesConfig, agent.cfg)  # the algorithm registry pairs them
        super().__init__(agent, env, run, capacity=max(self.cfg.batch_episodes, env.n_envs))

    def _train(self) -> dict[str, float]:
        if self.buffer.size >= self.cfg.batch_episodes:
            return self.agent.update(self._batch(self.buffer.take_all()))
        return {}

    def next_batch(self, on_step: OnStep) -> EpisodeBatch:
        """Act until `batch_episodes` whole episodes are in hand and take them without training: the batch the
        next update would get (for diagnostics and tests)."""
        while self.buffer.size < self.cfg.batch_episodes:
            self._act(on_step)
        return self._batch(self.buffer.take_all())
