"""DQN (Mnih et al. 2015) with double-Q (van Hasselt et al. 2016), dueling heads (Wang et al. 2016), Huber
loss, hard or soft target updates, epsilon-greedy annealed by env steps and optional n-step returns."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from core.config import require_at_least_one
from single_agent.agent import Agent, OffPolicyConfig, adam, soft_update
from single_agent.networks import QNetwork


@dataclass
class DQNConfig(OffPolicyConfig):
    buffer_size: int = 100_000
    batch_size: int = 64
    learning_starts: int = 1000
    lr: float = 1e-4
    tau: float = 1.0                   # 1.0: hard copies every target_update_interval updates
    target_update_interval: int = 1000  # gradient updates between target updates
    double_q: bool = True
    dueling: bool = False
    n_step: int = 1
    epsilon_start: float = 1.0
    epsilon_finish: float = 0.05
    epsilon_anneal_steps: int = 10_000  # env steps
    max_grad_norm: float = 10.0
    hidden_sizes: list[int] = field(default_factory=lambda: [64, 64])

    def __post_init__(self) -> None:
        super().__post_init__()
        require_at_least_one(self, "n_step", "target_update_interval")


class DQN(Agent):
    """Discrete actions only. `update` makes one gradient step on a sampled batch."""

    def __init__(self, observation_space, action_space, cfg: DQNConfig, device="cpu", total_steps: int = 0) -> None:
        super().__init__(observation_space, action_space, cfg, device, total_steps)
        self.q = QNetwork(self.obs_dim, self.act_dim, cfg.hidden_sizes, cfg.dueling).to(self.device)
        self.q_target = copy.deepcopy(self.q).requires_grad_(False)
        self.optimizer = adam(self.q.parameters(), lr=cfg.lr)
        self.modules = {"q": self.q, "q_target": self.q_target, "optimizer": self.optimizer}
        self.n_step = cfg.n_step

    @property
    def epsilon(self) -> float:
        cfg = self.cfg
        frac = min(1.0, self.env_steps / max(cfg.epsilon_anneal_steps, 1))
        return cfg.epsilon_start + frac * (cfg.epsilon_finish - cfg.epsilon_start)

    @torch.no_grad()
    def act(self, obs: Any, explore: bool, rng: np.random.Generator | None = None) -> np.ndarray:
        greedy = self.q(self.obs_tensor(obs)).argmax(-1).cpu().numpy()
        if not explore:
            return greedy
        n = len(greedy)
        explore_mask = rng.random(n) < self.epsilon
        return np.where(explore_mask, rng.integers(0, self.act_dim, n), greedy)

    def update(self, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
        cfg = self.cfg
        obs, next_obs = self.obs_tensor(batch["obs"]), self.obs_tensor(batch["next_obs"])
        action = self.tensor(batch["action"])
        with torch.no_grad():
            next_q = self.q_target(next_obs)
            if cfg.double_q:
                next_value = next_q.gather(-1, self.q(next_obs).argmax(-1, keepdim=True)).squeeze(-1)
            else:
                next_value = next_q.max(-1).values
            not_term = 1.0 - self.tensor(batch["terminated"]).float()
            target = self.tensor(batch["reward"]) + self.tensor(batch["discount"]) * not_term * next_value
        q = self.q(obs).gather(-1, action[:, None]).squeeze(-1)
        loss = nn.functional.smooth_l1_loss(q, target)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.q.parameters(), cfg.max_grad_norm)
        self.optimizer.step()
        self.n_updates += 1
        if self.n_updates % cfg.target_update_interval == 0:
            soft_update(self.q_target, self.q, cfg.tau)
        return {"loss/q": loss.detach(), "train/q_mean": q.detach().mean()}

    def schedules(self) -> dict[str, float]:
        return {"schedule/epsilon": self.epsilon}
