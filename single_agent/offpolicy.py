"""Off-policy collection and training for DQN, DDPG, TD3 and SAC on the shared core ReplayBuffer.

One iteration = `iteration_steps` env steps. Each vector step writes its n_envs transitions into the buffer in
one vectorised write; every `train_freq` vector steps (once `learning_starts` env steps are collected) the
agent makes `gradient_steps` updates on uniformly sampled batches.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from core.buffers import ReplayBuffer
from core.episode_stats import OnStep
from core.run_state import RunState
from single_agent.agent import MetricMeans
from single_agent.spaces import obs_layout
from single_agent.vec_env import TransitionVecEnv


class OffPolicyRunner:
    def __init__(self, agent, env: TransitionVecEnv, run: RunState) -> None:
        cfg = agent.cfg
        self.agent, self.env, self.cfg = agent, env, cfg
        obs = obs_layout(env.observation_space)
        action = ((), np.dtype(np.int64)) if agent.discrete else ((agent.act_dim,), np.dtype(np.float32))
        self.buffer = ReplayBuffer(cfg.buffer_size, {
            "obs": obs, "next_obs": obs, "action": action, "reward": ((), np.dtype(np.float32)),
            "terminated": ((), np.dtype(bool)), "done": ((), np.dtype(bool))})
        self.run = run
        env.reset(seed=run.seed)
        self.vector_steps_per_iteration = max(1, cfg.iteration_steps // env.n_envs)

    @property
    def exact_resume(self) -> bool:
        return self.env.exact_resume

    def state_dict(self) -> dict[str, Any]:
        return {"env": self.env.state_dict(), "buffer": self.buffer.state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.buffer.load_state(state["buffer"])
        if not self.env.load_state_dict(state["env"], reset_seed=self.run.seed + self.run.clock.env_steps):
            # the envs restarted, so the newest stored transitions end their trajectories: mark them done so that
            # n-step sums never join them to the new episodes (their `terminated` flags stay as they were)
            newest = (self.buffer.pos - 1 - np.arange(min(self.env.n_envs, self.buffer.size))) % self.buffer.capacity
            self.buffer.data["done"][newest] = True

    @property
    def steps_per_iteration(self) -> int:
        return self.vector_steps_per_iteration * self.env.n_envs

    def iteration(self, on_step: OnStep) -> dict[str, float]:
        agent, env, cfg, n, clock = self.agent, self.env, self.cfg, self.env.n_envs, self.run.clock
        explore, sample = self.run.rng("explore"), self.run.rng("sample")
        means = MetricMeans()  # over the iteration's training phases
        for _ in range(self.vector_steps_per_iteration):
            if clock.env_steps < cfg.learning_starts:
                action = agent.random_actions(n, explore)
            else:
                action = agent.act(env.obs, explore=True, rng=explore)
            tr = env.step(agent.env_action(action))
            self.buffer.add({"obs": tr.obs, "next_obs": tr.next_obs, "action": action, "reward": tr.reward,
                             "terminated": tr.terminated, "done": tr.terminated | tr.truncated}, n)
            on_step(n, tr.finished)  # advances the clock
            if clock.env_steps >= cfg.learning_starts and clock.vector_steps % cfg.train_freq == 0:
                # the buffer is fixed during a training phase, so its batches are drawn in one go
                batch = sample_transitions(self.buffer, cfg.batch_size * cfg.gradient_steps, sample, n, cfg.gamma,
                                           agent.n_step)
                means.add(agent.train(batch, cfg.gradient_steps))
        metrics = {key: float(value) for key, value in means.means().items()}
        metrics["train/updates"] = float(agent.n_updates)
        return {**metrics, **agent.schedules()}


def sample_transitions(buffer: ReplayBuffer, batch_size: int, rng: np.random.Generator, n_envs: int,
                       gamma: float, n_step: int = 1) -> dict[str, Any]:
    """A uniform batch with a `discount` per transition, the factor on its bootstrapped value: gamma^m for an
    m-step return, 0 where the return ends in a termination; n_step > 1 gives n-step returns.

    An env's consecutive transitions sit n_envs slots apart (each vector step writes n_envs contiguous
    slots), so step k after slot i is slot i + k * n_envs. The sum stops at an episode end (terminated or
    truncated) and at the newest transition; it then bootstraps from that step's next_obs with gamma^m.
    """
    idx = buffer.sample_indices(batch_size, rng)
    batch = buffer.get(idx)
    discount = np.full(batch_size, gamma, np.float32)
    if n_step > 1:
        data, cap = buffer.data, buffer.capacity
        ahead = (buffer.pos - 1 - idx) % cap  # transitions written after each sampled one
        reward, last = batch["reward"].copy(), idx.copy()
        active = ~batch["done"]
        for k in range(1, n_step):
            active &= k * n_envs <= ahead
            if not active.any():
                break
            j = (idx + k * n_envs) % cap
            reward[active] += gamma ** k * data["reward"][j[active]]
            discount[active] *= gamma
            last[active] = j[active]
            active &= ~data["done"][j]
        batch["reward"], batch["terminated"] = reward, data["terminated"][last]
        batch["next_obs"] = buffer.get(last, ["next_obs"])["next_obs"]
    batch["discount"] = discount * ~batch["terminated"]
    return batch
