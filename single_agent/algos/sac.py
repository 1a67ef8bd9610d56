"""SAC (Haarnoja et al. 2018): squashed-Gaussian actor, twin critics with clipped double-Q targets and
automatic entropy tuning towards a target entropy of -dim(A)."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from core.config import EnsembleSize, PositiveFloat, PositiveInt
from core.run_state import RunState
from single_agent.agent import OffPolicyAgent, OffPolicyConfig, adam, adam_step, optimize, soft_update
from single_agent.mlp_backprop import EnsembleBackprop, MLPBackprop
from single_agent.networks import CriticEnsemble, SquashedGaussianActor, squashed_sample


@dataclass
class SACConfig(OffPolicyConfig):
    """Hyperparameters of SAC. Steps count env steps."""

    n_critics: EnsembleSize = 2
    alpha: PositiveFloat = 1.0       # initial entropy coefficient
    auto_alpha: bool = True          # tune alpha towards target_entropy
    target_entropy: float | None = None  # default -dim(A)
    target_update_interval: PositiveInt = 1  # gradient updates between soft target updates


class SAC(OffPolicyAgent):
    """Continuous (Box) actions only; actions live in [-1, 1] and are rescaled to the env's bounds.

    Its fast path (`fast_update`) differentiates the whole update by hand and steps Adam by its fused kernel:
    about 1.3-1.4x the reference's updates per second at the defaults (BENCHMARKS.md, "Single-agent fast paths
    vs reference updates").
    """

    has_fast_path = True

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, cfg: SACConfig,
                 device: torch.device | str = "cpu", run: RunState | None = None) -> None:
        super().__init__(observation_space, action_space, cfg, device, run)
        self.actor = SquashedGaussianActor(self.obs_dim, self.act_dim, cfg.hidden_sizes).to(self.device)
        self.critic = CriticEnsemble(cfg.n_critics, self.obs_dim, self.act_dim, cfg.hidden_sizes).to(self.device)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.log_alpha = torch.tensor(float(np.log(cfg.alpha)), device=self.device, requires_grad=cfg.auto_alpha)
        self.target_entropy = -float(self.act_dim) if cfg.target_entropy is None else cfg.target_entropy
        self.actor_optimizer = adam(self.actor.parameters(), lr=cfg.lr)
        self.critic_optimizer = adam(self.critic.parameters(), lr=cfg.lr)
        self.alpha_optimizer = adam([self.log_alpha], lr=cfg.lr)
        if self.fast_path:
            self.actor_bp = MLPBackprop(self.actor.net)
            self.critic_bp, self.critic_target_bp = EnsembleBackprop(self.critic), EnsembleBackprop(self.critic_target)
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
        return self.actor.action(self.obs_tensor(obs), deterministic=not explore).cpu().numpy()

    def update(self, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
        cfg = self.cfg
        obs, next_obs = self.obs_tensor(batch["obs"]), self.obs_tensor(batch["next_obs"])
        alpha = self.log_alpha.detach().exp()
        with torch.no_grad():
            next_action, next_logp = self.actor(next_obs)
            next_q = self.critic_target(next_obs, next_action).min(-1).values
            target = self.tensor(batch["reward"]) + self.tensor(batch["discount"]) * (next_q - alpha * next_logp)
        # critics: 0.5 * sum over critics of the mean squared TD error
        q = self.critic(obs, self.tensor(batch["action"]))
        critic_loss = 0.5 * (q - target[:, None]).pow(2).mean(0).sum()
        optimize(self.critic_optimizer, critic_loss)
        # actor: through the updated critics, the smaller of their values
        action, logp = self.actor(obs)
        actor_loss = (alpha * logp - self.critic(obs, action).min(-1).values).mean()
        optimize(self.actor_optimizer, actor_loss)
        metrics = {"loss/critic": critic_loss.detach(), "loss/actor": actor_loss.detach(),
                   "train/entropy": -logp.detach().mean()}
        if cfg.auto_alpha:
            alpha_loss = -(self.log_alpha * (logp.detach() + self.target_entropy)).mean()
            optimize(self.alpha_optimizer, alpha_loss)
            metrics["loss/alpha"] = alpha_loss.detach()
        self.n_updates += 1
        if self.n_updates % cfg.target_update_interval == 0:
            soft_update(self.critic_target, self.critic, cfg.tau)
        return metrics

    @torch.no_grad()
    def fast_update(self, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
        """`update`, differentiated by hand (see single_agent.mlp_backprop)."""
        cfg = self.cfg
        obs, next_obs = self.obs_tensor(batch["obs"]), self.obs_tensor(batch["next_obs"])
        alpha, size = float(self.log_alpha.exp()), len(obs)  # a Python float: scalar operands cost no extra ops
        # the actor is not updated before its own loss, so one pass samples the next actions and the new ones;
        # their noise is drawn as `update` draws it (next actions', then new actions'), for the same numbers
        noise = torch.cat([torch.randn(size, self.act_dim, device=self.device) for _ in range(2)])
        out, actor_inputs = self.actor_bp.forward(torch.cat([next_obs, obs]))
        actions, logps, (noise, std, in_range) = squashed_sample(out, noise)
        next_action, next_logp, action, logp = actions[:size], logps[:size], actions[size:], logps[size:]
        next_q = self.critic_target_bp.forward(self.critic.heads_input(next_obs, next_action))[0]
        next_value = next_q.squeeze(-1).min(0).values.sub_(next_logp, alpha=alpha)
        target = torch.addcmul(self.tensor(batch["reward"]), self.tensor(batch["discount"]), next_value)

        # critics: 0.5 * sum over critics of the mean squared TD error
        q, inputs = self.critic_bp.forward(self.critic.heads_input(obs, self.tensor(batch["action"])))
        td_error = q.squeeze(-1) - target
        adam_step(self.critic_optimizer, self.critic_bp.param_grads(inputs, td_error.unsqueeze(-1) / size))

        # actor: mean(alpha * log pi(a|s) - min_i Q_i(s, a)), a = tanh(mu + noise * sigma), through the new critics
        q, inputs = self.critic_bp.forward(self.critic.heads_input(obs, action))
        min_q, argmin = q.squeeze(-1).min(0)
        d_q = torch.zeros_like(q).scatter_(0, argmin[None, :, None], -1.0 / size)
        d_action = self.critic_bp.input_grad(inputs, d_q).sum(0)[:, self.obs_dim:]
        # d/du of the loss, with d log pi / du = 2 tanh(u) (the tanh correction; the Gaussian part does not move)
        d_u = torch.addcmul(action * (alpha * 2.0 / size), d_action, action.square().neg_().add_(1.0))
        # the clamp passes no gradient outside its range
        d_log_std = torch.mul(d_u, noise[size:]).mul_(std[size:]).sub_(alpha / size).mul_(in_range[size:])
        actor_inputs = [x[size:] for x in actor_inputs]
        adam_step(self.actor_optimizer, self.actor_bp.param_grads(actor_inputs, torch.cat([d_u, d_log_std], -1)))

        mean_logp = logp.mean()
        metrics = {"loss/critic": td_error.square().sum().mul_(0.5 / size),
                   "loss/actor": mean_logp * alpha - min_q.mean(), "train/entropy": -mean_logp}
        if cfg.auto_alpha:
            # alpha loss -log_alpha * mean(logp + target entropy), with its gradient in closed form
            entropy_gap = mean_logp + self.target_entropy
            metrics["loss/alpha"] = -self.log_alpha * entropy_gap
            adam_step(self.alpha_optimizer, [-entropy_gap])
        self.n_updates += 1
        if self.n_updates % cfg.target_update_interval == 0:
            soft_update(self.critic_target, self.critic, cfg.tau)
        return metrics

    def schedules(self) -> dict[str, float]:
        return {"schedule/alpha": float(self.log_alpha.detach().exp())}
