"""On-policy rollout collection for actor-critic agents (MAPPO, IPPO): step-based rollouts with GAE.

Bootstrapping follows the env contract: an episode that terminated contributes no value after its last
step; one that was truncated bootstraps from the value of its true final observation/state, unless
`bootstrap_truncated` is False, which treats a truncation as a termination (as the MAPPO code does with
`use_proper_time_limits` False). An agent's death does not end its return: the rewards its slot still
receives (the team reward, on SMAC) and the critic's value of its slot keep counting, so the objective is the
team's return, not the part an agent lives to see. Recurrent states are reset at episode starts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

from core.buffers import RolloutBuffer, compute_gae
from core.episode_stats import OnStep
from core.run_state import RunState
from envs.vec_env import VecEnv, VecStep
from marl.agent import Agent


class ActorCriticAgent(Agent, Protocol):
    """What OnPolicyRunner needs beyond acting: values of given inputs (bootstrapping truncated episodes) and the
    update on a rollout (MAPPO, IPPO)."""

    def value(self, group: str, obs: np.ndarray, state: np.ndarray, h_critic: torch.Tensor, starts: np.ndarray
              ) -> torch.Tensor: ...

    def denormalize(self, group: str, values: torch.Tensor) -> torch.Tensor: ...

    @property
    def critic_on_state(self) -> bool:
        """Whether the critic sees the global state (MAPPO), not only each agent's own observation (IPPO)."""
        ...

    def update(self, batch: RolloutBatch) -> dict[str, float]: ...


@dataclass
class GroupBatch:
    """One group's rollout as tensors shaped [T, n_envs, n_agents, ...]."""

    obs: torch.Tensor
    avail: torch.Tensor | None
    actions: torch.Tensor
    logp: torch.Tensor
    values: torch.Tensor  # critic outputs at collection time (normalised space)
    returns: torch.Tensor
    advantages: torch.Tensor
    alive: torch.Tensor
    h_actor: torch.Tensor
    h_critic: torch.Tensor


@dataclass
class RolloutBatch:
    groups: dict[str, GroupBatch]
    state: torch.Tensor  # [T, n_envs, *state_shape]
    starts: torch.Tensor  # [T, n_envs] bool: the obs at t begins an episode


class OnPolicyCollector:
    """Runs an agent in a vector env for `n_steps` vector steps at a time and computes GAE."""

    def __init__(self, agent: ActorCriticAgent, env: VecEnv, n_steps: int, gamma: float, gae_lambda: float,
                 run: RunState, lambda_after_death: float | None = None, bootstrap_truncated: bool = True) -> None:
        """`lambda_after_death` (default: gae_lambda) is lambda from an agent's last step alive on: 1 makes a dead
        agent's return run on through the rewards its slot still gets, with no dead slot's value as a target.
        `bootstrap_truncated` False ends a truncated episode's return at its last reward, as a terminated one's."""
        self.agent, self.env = agent, env
        self.bootstrap_truncated = bootstrap_truncated
        self.n_steps, self.gamma, self.gae_lambda = n_steps, gamma, gae_lambda
        self.lambda_after_death = gae_lambda if lambda_after_death is None else lambda_after_death
        spec, n = env.spec, env.n_envs
        self.common = RolloutBuffer(n_steps, n, {
            "state": (spec.state_shape, np.float32), "starts": ((), bool),
            "terminated": ((), bool), "truncated": ((), bool)})
        self.buffers: dict[str, RolloutBuffer] = {}
        for g in spec.groups:
            m = g.n_agents
            hidden = agent.initial_hidden(1)[g.name][0].shape[-1]
            fields = {
                "obs": ((m, *g.obs_shape), np.float32), "alive": ((m,), bool),
                "actions": ((m, *g.action_shape), g.action_dtype), "logp": ((m,), np.float32),
                "values": ((m,), np.float32), "rewards": ((m,), np.float32), "final_values": ((m,), np.float32),
                "h_actor": ((m, hidden), np.float32), "h_critic": ((m, hidden), np.float32),
            }
            if g.discrete:
                fields["avail"] = ((m, g.n_actions), bool)
            self.buffers[g.name] = RolloutBuffer(n_steps, n, fields)
        self.run = run
        self._start(env.reset(seed=run.seed))

    def _start(self, step: VecStep) -> None:
        """Begin collecting from `step`, the first observations of new episodes."""
        self.step = step
        self.hidden = self.agent.initial_hidden(self.env.n_envs)
        self.starts = np.ones(self.env.n_envs, dtype=bool)

    def state_dict(self) -> dict[str, Any]:
        """Between rollouts: the envs, the recurrent states and which envs start an episode next."""
        return {"env": self.env.state_dict(), "starts": self.starts.copy(),
                "hidden": {name: list(h) for name, h in self.hidden.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        step, exact = self.env.load_state_dict(state["env"], reset_seed=self.run.seed + self.run.clock.env_steps)
        if not exact:
            self._start(step)
            return
        self.step, self.starts = step, state["starts"].copy()
        self.hidden = {name: tuple(h.to(self.agent.device) for h in hs) for name, hs in state["hidden"].items()}

    def collect(self, on_step: OnStep) -> RolloutBatch:
        """Collect one rollout; `on_step(n_env_steps, finished)` is called after every vector step."""
        agent, env = self.agent, self.env
        names = [g.name for g in env.spec.groups]
        for _ in range(self.n_steps):
            step = self.step
            out = agent.act(step.group_obs, step.group_avail, step.state, self.hidden, self.starts)
            for name in names:
                buf, act = self.buffers[name], out[name]
                if act.logp is None or act.value is None:
                    raise TypeError(f"{type(agent).__name__}.act must return log-probabilities and values")
                h_actor, h_critic = self.hidden[name]
                fields = dict(obs=step.group_obs[name], alive=step.group_alive[name], actions=_np(act.actions),
                              logp=_np(act.logp), values=_np(act.value), h_actor=_np(h_actor), h_critic=_np(h_critic))
                avail = step.group_avail[name]
                if avail is not None:
                    fields["avail"] = avail
                buf.add(**fields)
            self.common.add(state=step.state, starts=self.starts)
            step = env.step({name: _np(out[name].actions) for name in names})
            done = step.done
            t = self.common.t - 1
            self.common["terminated"][t] = step.terminated
            self.common["truncated"][t] = step.truncated
            truncated = np.flatnonzero(step.truncated & self.bootstrap_truncated)  # those that bootstrap
            for name in names:
                buf = self.buffers[name]
                buf["rewards"][t] = step.group_rewards[name]
                if truncated.size:
                    h_critic = out[name].hidden[1]
                    buf["final_values"][t, truncated] = _np(agent.value(
                        name, step.final_group_obs[name][truncated], step.final_state[truncated],
                        h_critic[truncated], np.zeros(truncated.size, dtype=bool)))
            self.hidden = {name: out[name].hidden for name in names}
            self.starts = done.copy()
            self.step = step
            on_step(env.n_envs, step.finished())
        return self._finish()

    def _finish(self) -> RolloutBatch:
        agent, step = self.agent, self.step
        done = self.common["terminated"] | self.common["truncated"]
        bootstrapped = self.common["truncated"] & self.bootstrap_truncated  # else a truncation is a termination
        continues = (~done[..., None]).astype(np.float32)  # the same for every agent: deaths do not cut returns
        groups = {}
        for name, buf in self.buffers.items():
            last = agent.value(name, step.group_obs[name], step.state, self.hidden[name][1], self.starts)
            values = _np(agent.denormalize(name, torch.as_tensor(buf["values"], device=agent.device)))
            final_values = _np(agent.denormalize(name, torch.as_tensor(buf["final_values"], device=agent.device)))
            last_values = _np(agent.denormalize(name, last))
            next_values = np.concatenate([values[1:], last_values[None]])
            next_values = np.where(done[..., None], np.where(bootstrapped[..., None], final_values, 0.0), next_values)
            alive_next = np.concatenate([buf["alive"][1:], step.group_alive[name][None]])
            lam = np.where(alive_next, self.gae_lambda, self.lambda_after_death)
            adv, returns = compute_gae(buf["rewards"], values, next_values, continues, self.gamma, lam)
            groups[name] = GroupBatch(
                obs=self._t(buf["obs"]), avail=self._t(buf["avail"]) if "avail" in buf.data else None,
                actions=self._t(buf["actions"]),
                logp=self._t(buf["logp"]), values=self._t(buf["values"]), returns=self._t(returns),
                advantages=self._t(adv), alive=self._t(buf["alive"]), h_actor=self._t(buf["h_actor"]),
                h_critic=self._t(buf["h_critic"]))
            buf.reset()
        batch = RolloutBatch(groups, self._t(self.common["state"]), self._t(self.common["starts"]))
        self.common.reset()
        return batch

    def _t(self, array: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(array.copy(), device=self.agent.device)


def _np(x: torch.Tensor) -> np.ndarray:
    return x.detach().cpu().numpy()


class OnPolicyRunner:
    """One training iteration = collect `rollout_steps` vector steps, then update the agent on them."""

    def __init__(self, agent: ActorCriticAgent, env: VecEnv, run: RunState) -> None:
        cfg = agent.cfg
        self.agent = agent
        # a critic on each agent's own observation cannot value a dead agent's slot (its observation is all zeros):
        # its returns run on past deaths with lambda 1 instead (BENCHMARKS.md, IPPO)
        self.collector = OnPolicyCollector(agent, env, cfg.rollout_steps, cfg.gamma, cfg.gae_lambda, run,
                                           lambda_after_death=None if agent.critic_on_state else 1.0,
                                           bootstrap_truncated=cfg.bootstrap_truncated)

    @property
    def exact_resume(self) -> bool:
        return self.collector.env.exact_resume

    def state_dict(self) -> dict[str, Any]:
        return self.collector.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.collector.load_state_dict(state)

    @property
    def steps_per_iteration(self) -> int:
        """Env steps one iteration takes (rollout_steps x n_envs)."""
        return self.collector.n_steps * self.collector.env.n_envs

    def iteration(self, on_step: OnStep) -> dict[str, float]:
        return self.agent.update(self.collector.collect(on_step))
