"""What every single-agent learner shares: spaces, device, step counters, tensors, target updates, state."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from core.config import require_at_least_one
from single_agent.spaces import ActionScaler, flatten_obs, obs_dim


@dataclass
class OffPolicyConfig:
    """Settings every off-policy learner has (budgets in env steps)."""

    buffer_size: int = 1_000_000     # transitions
    batch_size: int = 256
    learning_starts: int = 100       # env steps of uniformly random actions before learning starts
    train_freq: int = 1              # vector steps between training phases
    gradient_steps: int = 1          # updates per training phase
    gamma: float = 0.99
    lr: float = 3e-4
    tau: float = 0.005               # target-network update rate (1.0: hard copy)
    hidden_sizes: list[int] = field(default_factory=lambda: [256, 256])
    iteration_steps: int = 1000      # env steps per logged iteration

    def __post_init__(self) -> None:
        require_at_least_one(self, "buffer_size", "batch_size", "train_freq", "iteration_steps")
        if not 0.0 < self.tau <= 1.0:
            raise ValueError(f"tau must be in (0, 1], got {self.tau}")


class Agent:
    """Base of the learners: obs flattening, [-1, 1] <-> env action mapping, counters and checkpoint state.

    Subclasses list their networks and optimisers in `modules` (name -> object with state_dict), so
    `state_dict` / `load_state_dict` cover them all.
    """

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, cfg: Any,
                 device: torch.device | str = "cpu", total_steps: int = 0) -> None:
        self.cfg = cfg
        self.device = torch.device(device)
        self.observation_space, self.action_space = observation_space, action_space
        self.obs_dim = obs_dim(observation_space)
        self.discrete = isinstance(action_space, spaces.Discrete)
        self.act_dim = int(action_space.n) if self.discrete else int(np.prod(action_space.shape))
        self.scaler = None if self.discrete else ActionScaler(action_space)
        self.total_steps = total_steps
        self.env_steps = 0
        self.n_updates = 0
        self.n_step = 1  # transitions per TD target (DQN's n-step option)
        self.modules: dict[str, Any] = {}

    def obs_tensor(self, obs: Any) -> torch.Tensor:
        return torch.from_numpy(flatten_obs(self.observation_space, obs)).to(self.device)

    def tensor(self, x: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.asarray(x)).to(self.device)

    def env_action(self, action: np.ndarray) -> np.ndarray:
        """Learner action -> env action (rescaled to the Box bounds; Discrete unchanged)."""
        return action if self.scaler is None else self.scaler.to_env(action)

    def random_actions(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Uniform actions in the learner's action space (warm-up before learning starts)."""
        if self.discrete:
            return rng.integers(0, self.act_dim, n)
        return rng.uniform(-1.0, 1.0, (n, self.act_dim)).astype(np.float32)

    def schedules(self) -> dict[str, float]:
        """Current values of annealed or learned coefficients (logged as schedule/...)."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        return {**{name: m.state_dict() for name, m in self.modules.items()},
                "counters": torch.tensor([self.env_steps, self.n_updates])}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for name, m in self.modules.items():
            m.load_state_dict(state[name])
        self.env_steps, self.n_updates = (int(v) for v in state["counters"])


def adam(params, lr: float, **kwargs: Any) -> torch.optim.Adam:
    """Adam, fused into one kernel per step where this torch build supports it (much faster for small nets)."""
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, fused=True, **kwargs)
    except (RuntimeError, TypeError):
        return torch.optim.Adam(params, lr=lr, **kwargs)


@torch.no_grad()
def soft_update(target: nn.Module, source: nn.Module, tau: float) -> None:
    """target <- (1 - tau) target + tau source, over all parameters in one fused call (tau 1: copy)."""
    torch._foreach_lerp_(list(target.parameters()), list(source.parameters()), tau)


def step_on(optimizer: torch.optim.Optimizer, loss: torch.Tensor, params: list[torch.Tensor]) -> None:
    """One optimiser step on the gradient of `loss` w.r.t. `params` only (autograd skips other weights)."""
    for p, g in zip(params, torch.autograd.grad(loss, params)):
        p.grad = g
    optimizer.step()
