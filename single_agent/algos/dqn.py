"""DQN (Mnih et al. 2015) with double-Q (van Hasselt et al. 2016), dueling heads (Wang et al. 2016), Huber
loss, hard or soft target updates, epsilon-greedy annealed by env steps and optional n-step returns."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from core.config import NonNegativeInt, PositiveFloat, PositiveFraction, PositiveInt, Probability, WidthList
from core.run_state import RunState
from single_agent.agent import Agent, OffPolicyConfig, adam, adam_step, soft_update
from single_agent.mlp_backprop import MLPBackprop
from single_agent.networks import QNetwork


@dataclass
class DQNConfig(OffPolicyConfig):
    buffer_size: PositiveInt = 100_000
    batch_size: PositiveInt = 64
    learning_starts: NonNegativeInt = 1000
    lr: PositiveFloat = 1e-4
    tau: PositiveFraction = 1.0                # 1.0: hard copies every target_update_interval updates
    target_update_interval: PositiveInt = 1000  # gradient updates between target updates
    double_q: bool = True
    dueling: bool = False
    n_step: PositiveInt = 1
    epsilon_start: Probability = 1.0
    epsilon_finish: Probability = 0.05
    epsilon_anneal_steps: NonNegativeInt = 10_000  # env steps
    max_grad_norm: PositiveFloat = 10.0
    hidden_sizes: WidthList = field(default_factory=lambda: [64, 64])


class DQN(Agent):
    """Discrete actions only. `train` makes gradient steps on consecutive runs of `batch_size` sampled rows."""

    def __init__(self, observation_space, action_space, cfg: DQNConfig, device="cpu", run: RunState | None = None) -> None:
        super().__init__(observation_space, action_space, cfg, device, run)
        self.q = QNetwork(self.obs_dim, self.act_dim, cfg.hidden_sizes, cfg.dueling).to(self.device)
        self.q_target = copy.deepcopy(self.q).requires_grad_(False)
        self.optimizer = adam(self.q.parameters(), lr=cfg.lr)
        self.modules = {"q": self.q, "q_target": self.q_target, "optimizer": self.optimizer}
        self.params = list(self.q.parameters())
        # plain MLP heads skip autograd (hand-written backward); the dueling head keeps it
        self.backprop = None if cfg.dueling else MLPBackprop(self.q.q)
        self.n_step = cfg.n_step

    @property
    def epsilon(self) -> float:
        cfg = self.cfg
        frac = min(1.0, self.run.clock.env_steps / max(cfg.epsilon_anneal_steps, 1))
        return cfg.epsilon_start + frac * (cfg.epsilon_finish - cfg.epsilon_start)

    def q_values(self, obs: torch.Tensor) -> torch.Tensor:
        """Q(s, .) for a batch of flat observations (call without gradients)."""
        return self.q(obs) if self.backprop is None else self.backprop.forward(obs)[0]

    @torch.no_grad()
    def act(self, obs: Any, explore: bool, rng: np.random.Generator | None = None) -> np.ndarray:
        x = self.obs_tensor(obs)
        if explore:
            explore_mask = rng.random(len(x)) < self.epsilon
            random = rng.integers(0, self.act_dim, len(x))
            if explore_mask.all():  # no greedy action needed
                return random
        greedy = self.q_values(x).argmax(-1).cpu().numpy()
        return np.where(explore_mask, random, greedy) if explore else greedy

    @torch.no_grad()
    def train(self, batch: dict[str, Any], n_updates: int) -> dict[str, torch.Tensor]:
        cfg, size = self.cfg, self.cfg.batch_size
        obs, next_obs = self.obs_tensor(batch["obs"]), self.obs_tensor(batch["next_obs"])
        action, reward = self.tensor(batch["action"])[:, None], self.tensor(batch["reward"])
        discount = self.tensor(batch["discount"])  # 0 where the return ends in a termination
        q_taken, td_error = torch.empty_like(reward), torch.empty_like(reward)
        done = 0
        while done < n_updates:
            # the target net is fixed until its next update: evaluate it for all of those updates in one pass
            chunk = min(n_updates - done, cfg.target_update_interval - self.n_updates % cfg.target_update_interval)
            rows = slice(done * size, (done + chunk) * size)
            chunk_next_q = self.q_target(next_obs[rows])
            chunk_target = None if cfg.double_q else reward[rows] + discount[rows] * chunk_next_q.max(-1).values
            for i in range(chunk):
                rows, in_chunk = slice((done + i) * size, (done + i + 1) * size), slice(i * size, (i + 1) * size)
                if cfg.double_q:
                    greedy = self.q_values(next_obs[rows]).argmax(-1, keepdim=True)
                    target = reward[rows] + discount[rows] * chunk_next_q[in_chunk].gather(-1, greedy).squeeze(-1)
                else:
                    target = chunk_target[in_chunk]
                grads, q_taken[rows] = self._huber_grads(obs[rows], action[rows], target)
                td_error[rows] = q_taken[rows] - target
                adam_step(self.optimizer, grads, cfg.max_grad_norm)
                self.n_updates += 1
                if self.n_updates % cfg.target_update_interval == 0:
                    soft_update(self.q_target, self.q, cfg.tau)
            done += chunk
        loss = nn.functional.smooth_l1_loss(td_error, torch.zeros_like(td_error))
        return {"loss/q": loss, "train/q_mean": q_taken.mean()}

    def _huber_grads(self, obs: torch.Tensor, action: torch.Tensor,
                     target: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
        """Gradients of the batch-mean Huber loss of Q(obs, action) against `target`, and Q(obs, action)."""
        if self.backprop is not None:
            q, inputs = self.backprop.forward(obs)
            q_taken = q.gather(1, action).squeeze(1)
            d_q_taken = (q_taken - target).clamp_(-1.0, 1.0).div_(len(target))  # smooth L1's slope, beta 1
            d_q = torch.zeros_like(q).scatter_(1, action, d_q_taken[:, None])
            return self.backprop.backward(inputs, d_q)[0], q_taken
        with torch.enable_grad():
            q_taken = self.q(obs).gather(1, action).squeeze(1)
            loss = nn.functional.smooth_l1_loss(q_taken, target)
            return list(torch.autograd.grad(loss, self.params)), q_taken.detach()

    def schedules(self) -> dict[str, float]:
        return {"schedule/epsilon": self.epsilon}
