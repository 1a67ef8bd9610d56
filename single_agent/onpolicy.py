"""On-policy collection for PPO: `n_steps` vector steps into the shared core RolloutBuffer, then GAE.

Bootstrapping follows the env contract: within an episode the next value is V(s_{t+1}); a truncated
episode bootstraps from V(true final observation); a terminated one from 0.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from core.buffers import RolloutBuffer, compute_gae
from core.episode_stats import OnStep
from core.run_state import RunState
from single_agent.spaces import flatten_obs
from single_agent.vec_env import TransitionVecEnv


class RolloutRunner:
    def __init__(self, agent, env: TransitionVecEnv, run: RunState) -> None:
        cfg, n = agent.cfg, env.n_envs
        self.agent, self.env, self.cfg = agent, env, cfg
        action: tuple[tuple[int, ...], np.dtype] = (((), np.dtype(np.int64)) if agent.discrete
                                                    else ((agent.act_dim,), np.dtype(np.float32)))
        f32: tuple[tuple[int, ...], np.dtype] = ((), np.dtype(np.float32))
        self.rollout = RolloutBuffer(cfg.n_steps, n, {
            "obs": ((agent.obs_dim,), np.dtype(np.float32)), "action": action, "logp": f32, "value": f32, "reward": f32,
            "final_value": f32, "continues": f32})
        self.run = run
        env.reset(seed=run.seed)

    @property
    def steps_per_iteration(self) -> int:
        return self.cfg.n_steps * self.env.n_envs

    @property
    def exact_resume(self) -> bool:
        return self.env.exact_resume

    def state_dict(self) -> dict[str, Any]:
        return {"env": self.env.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.env.load_state_dict(state["env"], reset_seed=self.run.seed + self.run.clock.env_steps)

    def iteration(self, on_step: OnStep) -> dict[str, float]:
        agent, env, cfg, buf = self.agent, self.env, self.cfg, self.rollout
        n = env.n_envs
        buf.reset()
        for _ in range(cfg.n_steps):
            obs = env.obs
            action, logp, value = agent.act_with_value(obs)
            tr = env.step(agent.env_action(action))
            final_value = np.zeros(n, np.float32)
            if tr.truncated.any():
                rows = np.flatnonzero(tr.truncated & ~tr.terminated)
                if len(rows):
                    final_value[rows] = agent.value(_rows(tr.next_obs, rows))
            buf.add(obs=flatten_obs(env.observation_space, obs), action=action, logp=logp, value=value,
                    reward=tr.reward, final_value=final_value, continues=~(tr.terminated | tr.truncated))
            on_step(n, tr.finished)
        values, continues = buf["value"], buf["continues"]
        next_values = np.concatenate([values[1:], agent.value(env.obs)[None]])
        next_values = np.where(continues > 0, next_values, buf["final_value"])
        advantage, returns = compute_gae(buf["reward"], values, next_values, continues, cfg.gamma, cfg.gae_lambda)
        flat = {key: buf[key].reshape(-1, *buf[key].shape[2:]) for key in ("obs", "action", "logp", "value")}
        return agent.update({**flat, "advantage": advantage.reshape(-1), "return": returns.reshape(-1)})


def _rows(obs, rows: np.ndarray):
    return {key: _rows(value, rows) for key, value in obs.items()} if isinstance(obs, dict) else obs[rows]
