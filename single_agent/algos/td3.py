"""TD3 (Fujimoto et al. 2018): twin critics, target policy smoothing, delayed actor and target updates.
DDPG (Lillicrap et al. 2016) is the same learner with one critic, no smoothing and no delay."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch
from gymnasium import spaces

from core.config import EnsembleSize, NonNegativeFloat, PositiveFloat, PositiveInt, WidthList
from core.run_state import RunState
from single_agent.agent import OffPolicyAgent, OffPolicyConfig, adam, optimize, soft_update
from single_agent.networks import CriticEnsemble, DeterministicActor


@dataclass
class TD3Config(OffPolicyConfig):
    """Hyperparameters of TD3 and DDPG (the --algo name sets the variant). Steps count env steps."""

    n_critics: EnsembleSize = 2
    policy_delay: PositiveInt = 2  # critic updates per actor (and target) update
    target_noise: NonNegativeFloat = 0.2  # std of the smoothing noise on target actions (in [-1, 1] units)
    target_noise_clip: NonNegativeFloat = 0.5
    action_noise: NonNegativeFloat = 0.1  # std (scale) of the exploration noise (in [-1, 1] units)
    noise_type: Literal["gaussian", "ou"] = "gaussian"  # gaussian (independent each step) or ou (Ornstein-Uhlenbeck)
    ou_theta: NonNegativeFloat = 0.15  # OU mean reversion per unit time; correlated over ~1/(theta*dt) steps
    ou_dt: PositiveFloat = 0.01
    lr: PositiveFloat = 1e-3
    hidden_sizes: WidthList = field(default_factory=lambda: [400, 300])


class TD3(OffPolicyAgent):
    """Continuous (Box) actions only; actions live in [-1, 1] and are rescaled to the env's bounds.

    It has no fast path (`cfg.fast_path` changes nothing): differentiating each loss for its own network only and
    calling the fused Adam kernel directly made its updates only about 1.1x faster (BENCHMARKS.md, "Single-agent
    fast paths vs reference updates").
    """

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, cfg: TD3Config,
                 device: torch.device | str = "cpu", run: RunState | None = None) -> None:
        super().__init__(observation_space, action_space, cfg, device, run)
        self.actor = DeterministicActor(self.obs_dim, self.act_dim, cfg.hidden_sizes).to(self.device)
        self.critic = CriticEnsemble(cfg.n_critics, self.obs_dim, self.act_dim, cfg.hidden_sizes).to(self.device)
        self.actor_target = copy.deepcopy(self.actor).requires_grad_(False)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.actor_optimizer = adam(self.actor.parameters(), lr=cfg.lr)
        self.critic_optimizer = adam(self.critic.parameters(), lr=cfg.lr)
        self.modules = {"actor": self.actor, "critic": self.critic, "actor_target": self.actor_target,
                        "critic_target": self.critic_target, "actor_optimizer": self.actor_optimizer,
                        "critic_optimizer": self.critic_optimizer}
        self.ou_state: np.ndarray | None = None  # per env and action dim; runs on across episodes

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        if self.ou_state is not None:  # so a resumed run's exploration noise continues where it stopped
            state["ou_state"] = torch.from_numpy(self.ou_state.copy())
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.ou_state = state["ou_state"].numpy().copy() if "ou_state" in state else None

    @torch.no_grad()
    def act(self, obs: Any, explore: bool, rng: np.random.Generator | None = None) -> np.ndarray:
        action = self.actor(self.obs_tensor(obs)).cpu().numpy()
        if explore:
            assert rng is not None, "exploring needs a random generator"
            action = np.clip(action + self._exploration_noise(action.shape, rng), -1.0, 1.0)
        return action.astype(np.float32)

    def _exploration_noise(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        cfg = self.cfg
        if cfg.noise_type == "gaussian":
            return rng.normal(0.0, cfg.action_noise, shape)
        if self.ou_state is None or self.ou_state.shape != shape:
            self.ou_state = np.zeros(shape)
        # Ornstein-Uhlenbeck: dx = -theta x dt + sigma sqrt(dt) dW, so pushes persist over many steps
        self.ou_state += -cfg.ou_theta * self.ou_state * cfg.ou_dt \
            + cfg.action_noise * np.sqrt(cfg.ou_dt) * rng.standard_normal(shape)
        return self.ou_state

    def update(self, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
        """One critic update and, every `policy_delay`-th, one actor update and the target updates."""
        cfg = self.cfg
        obs, next_obs = self.obs_tensor(batch["obs"]), self.obs_tensor(batch["next_obs"])
        action = self.tensor(batch["action"])
        with torch.no_grad():
            next_action = self.actor_target(next_obs)
            if cfg.target_noise > 0:
                noise = (torch.randn_like(next_action) * cfg.target_noise).clamp(-cfg.target_noise_clip,
                                                                                 cfg.target_noise_clip)
                next_action = (next_action + noise).clamp(-1.0, 1.0)
            next_q = self.critic_target(next_obs, next_action).min(-1).values
            target = self.tensor(batch["reward"]) + self.tensor(batch["discount"]) * next_q
        q = self.critic(obs, action)
        critic_loss = (q - target[:, None]).pow(2).mean(0).sum()
        optimize(self.critic_optimizer, critic_loss)
        self.n_updates += 1
        metrics = {"loss/critic": critic_loss.detach(), "train/q_mean": q.detach().mean()}
        if self.n_updates % cfg.policy_delay == 0:
            actor_loss = -self.critic(obs, self.actor(obs))[:, 0].mean()
            optimize(self.actor_optimizer, actor_loss)
            soft_update(self.critic_target, self.critic, cfg.tau)
            soft_update(self.actor_target, self.actor, cfg.tau)
            metrics["loss/actor"] = actor_loss.detach()
        return metrics
