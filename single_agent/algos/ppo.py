"""PPO (Schulman et al. 2017): clipped surrogate, GAE on the shared core RolloutBuffer, separate actor and critic
MLPs; Categorical policies for Discrete actions, diagonal Gaussians (state-independent std) for Box actions."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn
from torch.distributions import Categorical, Normal

from core.config import NonNegativeFloat, PositiveFloat, PositiveInt, Probability, WidthList
from core.nn import Activation
from core.run_state import RunState
from single_agent.agent import Agent, adam
from single_agent.networks import mlp


@dataclass
class PPOConfig:
    """Hyperparameters of PPO."""

    n_steps: PositiveInt = 2048  # vector steps per rollout (x n_envs env steps)
    batch_size: PositiveInt = 64  # minibatch size in transitions
    n_epochs: PositiveInt = 10
    lr: PositiveFloat = 3e-4
    anneal: bool = False         # decay lr and clip range linearly to 0 over train.schedule_steps
    gamma: Probability = 0.99
    gae_lambda: Probability = 0.95
    clip_range: PositiveFloat = 0.2  # the surrogate loss clips the probability ratio to 1 +- clip_range
    ent_coef: NonNegativeFloat = 0.0
    vf_coef: NonNegativeFloat = 0.5
    max_grad_norm: PositiveFloat = 0.5
    normalize_advantage: bool = True
    hidden_sizes: WidthList = field(default_factory=lambda: [64, 64])
    activation: Activation = "tanh"
    log_std_init: float = 0.0

    def budget_schedules(self) -> tuple[str, ...]:
        """The keys switched on whose values move over the run (core.trainer.BudgetScheduled)."""
        return ("anneal",) if self.anneal else ()


class PPO(Agent):
    """Discrete or Box actions; Box actions are clipped to the env's bounds on the way out."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, cfg: PPOConfig,
                 device: torch.device | str = "cpu", run: RunState | None = None) -> None:
        super().__init__(observation_space, action_space, cfg, device, run)
        self.bounds = (action_space.low, action_space.high) if isinstance(action_space, spaces.Box) else None
        self.actor = mlp(self.obs_dim, cfg.hidden_sizes, self.act_dim, cfg.activation, out_gain=0.01).to(self.device)
        self.critic = mlp(self.obs_dim, cfg.hidden_sizes, 1, cfg.activation, out_gain=1.0).to(self.device)
        params = [*self.actor.parameters(), *self.critic.parameters()]
        self.log_std = None
        if not self.discrete:
            self.log_std = nn.Parameter(torch.full((self.act_dim,), cfg.log_std_init, device=self.device))
            params.append(self.log_std)
        self.params = params
        self.optimizer = adam(params, lr=cfg.lr, eps=1e-5)
        self.modules = {"actor": self.actor, "critic": self.critic, "optimizer": self.optimizer}

    def state_dict(self) -> dict[str, Any]:
        extra = {} if self.log_std is None else {"log_std": self.log_std.detach().clone()}
        return {**super().state_dict(), **extra}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        if self.log_std is not None:
            with torch.no_grad():
                self.log_std.copy_(state["log_std"])

    def env_action(self, action: np.ndarray) -> np.ndarray:
        return action if self.bounds is None else np.clip(action, *self.bounds)

    def _dist(self, obs: torch.Tensor) -> Categorical | Normal:
        out = self.actor(obs)
        if self.log_std is None:  # Discrete actions
            return Categorical(logits=out)
        return Normal(out, self.log_std.exp().expand_as(out))

    def _log_prob(self, dist: Categorical | Normal, action: torch.Tensor) -> torch.Tensor:
        return dist.log_prob(action) if self.discrete else dist.log_prob(action).sum(-1)

    def _sample(self, dist: Categorical | Normal, explore: bool) -> torch.Tensor:
        if explore:
            return dist.sample()
        return dist.probs.argmax(-1) if isinstance(dist, Categorical) else dist.mean

    @torch.no_grad()
    def act(self, obs: Any, explore: bool, rng: np.random.Generator | None = None) -> np.ndarray:
        return self._sample(self._dist(self.obs_tensor(obs)), explore).cpu().numpy()

    @torch.no_grad()
    def act_with_value(self, obs: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(sampled action, its log-prob, value) for a batch of raw observations."""
        obs_t = self.obs_tensor(obs)
        dist = self._dist(obs_t)
        action = dist.sample()
        return (action.cpu().numpy(), self._log_prob(dist, action).cpu().numpy(),
                self.critic(obs_t).squeeze(-1).cpu().numpy())

    @torch.no_grad()
    def value(self, obs: Any) -> np.ndarray:
        return self.critic(self.obs_tensor(obs)).squeeze(-1).cpu().numpy()

    def _progress_left(self) -> float:
        return 1.0 - self.run.clock.progress if self.cfg.anneal else 1.0

    def update(self, data: dict[str, np.ndarray]) -> dict[str, float]:
        """Clipped PPO epochs over one rollout: obs, action, logp, value, advantage, return ([N, ...] each)."""
        cfg = self.cfg
        left = self._progress_left()
        lr, clip = cfg.lr * left, cfg.clip_range * left
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        obs, action = self.tensor(data["obs"]), self.tensor(data["action"])
        old_logp = self.tensor(data["logp"])
        advantage, returns = self.tensor(data["advantage"]), self.tensor(data["return"])
        n = len(obs)
        sums = torch.zeros(5, device=self.device)
        count = 0
        for _ in range(cfg.n_epochs):
            for mb in torch.randperm(n).split(cfg.batch_size):
                dist = self._dist(obs[mb])
                logp = self._log_prob(dist, action[mb])
                adv = advantage[mb]
                if cfg.normalize_advantage and len(mb) > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                ratio = (logp - old_logp[mb]).exp()
                policy_loss = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
                value_loss = (self.critic(obs[mb]).squeeze(-1) - returns[mb]).pow(2).mean()
                entropy = dist.entropy()
                entropy = (entropy if self.discrete else entropy.sum(-1)).mean()
                loss = policy_loss + cfg.vf_coef * value_loss - cfg.ent_coef * entropy
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(self.params, cfg.max_grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    log_ratio = logp - old_logp[mb]
                    sums += torch.stack([policy_loss, value_loss, entropy, ((ratio - 1) - log_ratio).mean(),
                                         ((ratio - 1).abs() > clip).float().mean()]).detach()
                count += 1
        self.n_updates += 1
        policy, value, entropy, kl, clipped = (sums / count).tolist()
        explained = 1 - float(np.var(data["return"] - data["value"]) / (np.var(data["return"]) + 1e-8))
        return {"loss/policy": policy, "loss/value": value, "loss/entropy": entropy, "train/approx_kl": kl,
                "train/clip_fraction": clipped, "train/explained_variance": explained, "schedule/lr": lr}
