"""DQN (Mnih et al. 2015) with double-Q (van Hasselt et al. 2016), dueling heads (Wang et al. 2016), Huber
loss, hard or soft target updates, epsilon-greedy annealed by env steps and optional n-step returns."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from core.config import NonNegativeInt, PositiveFloat, PositiveFraction, PositiveInt, Probability, WidthList
from core.run_state import RunState
from single_agent.agent import OffPolicyAgent, OffPolicyConfig, adam, adam_step, optimize, soft_update
from single_agent.mlp_backprop import MLPBackprop
from single_agent.networks import QNetwork


@dataclass
class DQNConfig(OffPolicyConfig):
    """Hyperparameters of DQN. Steps count env steps."""

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


class DQN(OffPolicyAgent):
    """Discrete actions only. `train` makes gradient steps on consecutive runs of `batch_size` sampled rows.

    Its fast path (`fast_train`) evaluates the target network once for all the updates of a training phase up to
    its next target update, differentiates the plain MLP's Huber loss by hand and steps Adam by its fused kernel:
    about 1.7x the reference's updates per second at the defaults, 1.3x at the tuned CartPole settings
    (BENCHMARKS.md, "Single-agent fast paths vs reference updates").
    """

    has_fast_path = True

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, cfg: DQNConfig,
                 device: torch.device | str = "cpu", run: RunState | None = None) -> None:
        super().__init__(observation_space, action_space, cfg, device, run)
        self.q = QNetwork(self.obs_dim, self.act_dim, cfg.hidden_sizes, cfg.dueling).to(self.device)
        self.q_target = copy.deepcopy(self.q).requires_grad_(False)
        self.optimizer = adam(self.q.parameters(), lr=cfg.lr)
        self.modules = {"q": self.q, "q_target": self.q_target, "optimizer": self.optimizer}
        self.params = list(self.q.parameters())
        # the fast path differentiates plain MLP heads by hand; the dueling head keeps autograd
        self.backprop = MLPBackprop(self.q.q) if self.fast_path and not cfg.dueling else None
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
            assert rng is not None, "exploring needs a random generator"
            explore_mask = rng.random(len(x)) < self.epsilon
            random = rng.integers(0, self.act_dim, len(x))
            if explore_mask.all():  # no greedy action needed
                return random
        greedy = self.q_values(x).argmax(-1).cpu().numpy()
        return np.where(explore_mask, random, greedy) if explore else greedy

    def update(self, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
        cfg = self.cfg
        obs, next_obs = self.obs_tensor(batch["obs"]), self.obs_tensor(batch["next_obs"])
        action = self.tensor(batch["action"])[:, None]
        with torch.no_grad():
            next_q = self.q_target(next_obs)
            if cfg.double_q:  # the online network picks the next action, the target network values it
                next_value = next_q.gather(-1, self.q(next_obs).argmax(-1, keepdim=True)).squeeze(-1)
            else:
                next_value = next_q.max(-1).values
            target = self.tensor(batch["reward"]) + self.tensor(batch["discount"]) * next_value
        q_taken = self.q(obs).gather(1, action).squeeze(1)
        loss = nn.functional.smooth_l1_loss(q_taken, target)
        optimize(self.optimizer, loss, cfg.max_grad_norm)
        self.n_updates += 1
        if self.n_updates % cfg.target_update_interval == 0:
            soft_update(self.q_target, self.q, cfg.tau)
        return {"loss/q": loss.detach(), "train/q_mean": q_taken.detach().mean()}

    def train(self, batch: dict[str, Any], n_updates: int) -> dict[str, torch.Tensor]:
        return self.fast_train(batch, n_updates) if self.fast_path else super().train(batch, n_updates)

    @torch.no_grad()
    def fast_train(self, batch: dict[str, Any], n_updates: int) -> dict[str, torch.Tensor]:
        """`train` by the fast path: the same updates (and metrics) as `update` makes one at a time."""
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
            for i in range(chunk):
                rows, in_chunk = slice((done + i) * size, (done + i + 1) * size), slice(i * size, (i + 1) * size)
                next_q = chunk_next_q[in_chunk]
                if cfg.double_q:
                    next_value = next_q.gather(-1, self.q_values(next_obs[rows]).argmax(-1, keepdim=True)).squeeze(-1)
                else:
                    next_value = next_q.max(-1).values
                target = reward[rows] + discount[rows] * next_value
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
            return self.backprop.param_grads(inputs, d_q), q_taken
        with torch.enable_grad():
            q_taken = self.q(obs).gather(1, action).squeeze(1)
            loss = nn.functional.smooth_l1_loss(q_taken, target)
            return list(torch.autograd.grad(loss, self.params)), q_taken.detach()

    def schedules(self) -> dict[str, float]:
        return {"schedule/epsilon": self.epsilon}
