"""SAC (Haarnoja et al. 2018): squashed-Gaussian actor, twin critics with clipped double-Q targets and
automatic entropy tuning towards a target entropy of -dim(A)."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from single_agent.agent import Agent, OffPolicyConfig, adam, soft_update, step_on
from single_agent.networks import CriticEnsemble, SquashedGaussianActor


@dataclass
class SACConfig(OffPolicyConfig):
    n_critics: int = 2
    alpha: float = 1.0               # initial entropy coefficient
    auto_alpha: bool = True          # tune alpha towards target_entropy
    target_entropy: float | None = None  # default -dim(A)
    target_update_interval: int = 1  # gradient updates between soft target updates


class SAC(Agent):
    """Continuous (Box) actions only; actions live in [-1, 1] and are rescaled to the env's bounds."""

    def __init__(self, observation_space, action_space, cfg: SACConfig, device="cpu", total_steps: int = 0) -> None:
        super().__init__(observation_space, action_space, cfg, device, total_steps)
        self.actor = SquashedGaussianActor(self.obs_dim, self.act_dim, cfg.hidden_sizes).to(self.device)
        self.critic = CriticEnsemble(cfg.n_critics, self.obs_dim, self.act_dim, cfg.hidden_sizes).to(self.device)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.log_alpha = torch.tensor(float(np.log(cfg.alpha)), device=self.device, requires_grad=cfg.auto_alpha)
        self.target_entropy = -float(self.act_dim) if cfg.target_entropy is None else cfg.target_entropy
        self.actor_optimizer = adam(self.actor.parameters(), lr=cfg.lr)
        self.critic_optimizer = adam(self.critic.parameters(), lr=cfg.lr)
        self.alpha_optimizer = adam([self.log_alpha], lr=cfg.lr)
        self.actor_params = list(self.actor.parameters())
        self.modules = {"actor": self.actor, "critic": self.critic, "critic_target": self.critic_target,
                        "actor_optimizer": self.actor_optimizer, "critic_optimizer": self.critic_optimizer,
                        "alpha_optimizer": self.alpha_optimizer}

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "log_alpha": self.log_alpha.detach().clone()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        with torch.no_grad():
            self.log_alpha.copy_(state["log_alpha"])

    @torch.no_grad()
    def act(self, obs: Any, explore: bool, rng: np.random.Generator | None = None) -> np.ndarray:
        return self.actor(self.obs_tensor(obs), deterministic=not explore)[0].cpu().numpy()

    def update(self, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
        cfg = self.cfg
        obs, next_obs = self.obs_tensor(batch["obs"]), self.obs_tensor(batch["next_obs"])
        action = self.tensor(batch["action"])
        alpha = self.log_alpha.detach().exp()
        with torch.no_grad():
            next_action, next_logp = self.actor(next_obs)
            next_q = self.critic_target(next_obs, next_action).min(-1).values - alpha * next_logp
            not_term = 1.0 - self.tensor(batch["terminated"]).float()
            target = self.tensor(batch["reward"]) + self.tensor(batch["discount"]) * not_term * next_q
        q = self.critic(obs, action)
        critic_loss = 0.5 * (q - target[:, None]).pow(2).mean(0).sum()
        self.critic_optimizer.zero_grad(set_to_none=True)
        critic_loss.backward()
        self.critic_optimizer.step()

        new_action, logp = self.actor(obs)
        actor_loss = (alpha * logp - self.critic(obs, new_action).min(-1).values).mean()
        step_on(self.actor_optimizer, actor_loss, self.actor_params)  # no gradient work for the critic
        metrics = {"loss/critic": critic_loss.detach(), "loss/actor": actor_loss.detach(),
                   "train/entropy": -logp.detach().mean()}
        if cfg.auto_alpha:
            alpha_loss = -(self.log_alpha * (logp.detach() + self.target_entropy)).mean()
            self.alpha_optimizer.zero_grad(set_to_none=True)
            alpha_loss.backward()
            self.alpha_optimizer.step()
            metrics["loss/alpha"] = alpha_loss.detach()
        self.n_updates += 1
        if self.n_updates % cfg.target_update_interval == 0:
            soft_update(self.critic_target, self.critic, cfg.tau)
        return metrics

    def schedules(self) -> dict[str, float]:
        return {"schedule/alpha": float(self.log_alpha.detach().exp())}
