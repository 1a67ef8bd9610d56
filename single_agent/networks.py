"""Networks of the single-agent learners: MLPs, Q-networks, deterministic and squashed-Gaussian actors,
and an ensemble of critics evaluated in one batched matmul per layer (TD3/SAC twin critics)."""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import torch
from torch import nn

from core.nn import ACTIVATIONS, Activation, MultiLinear

LOG_STD_MIN, LOG_STD_MAX = -20.0, 2.0


def mlp(in_dim: int, hidden: Sequence[int], out_dim: int, activation: Activation = "relu",
        out_gain: float | None = None) -> nn.Sequential:
    """Linear layers with `activation` between them; `out_gain` orthogonally initialises the last layer."""
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(in_dim, width), ACTIVATIONS[activation]()]
        in_dim = width
    last = nn.Linear(in_dim, out_dim)
    if out_gain is not None:
        nn.init.orthogonal_(last.weight, out_gain)
        nn.init.zeros_(last.bias)
    return nn.Sequential(*layers, last)


class QNetwork(nn.Module):
    """Q(s, .) for Discrete actions; `dueling` splits the head into V(s) + A(s, a) - mean_a A(s, a)."""

    def __init__(self, obs_dim: int, n_actions: int, hidden: Sequence[int], dueling: bool = False) -> None:
        super().__init__()
        self.dueling = dueling
        if dueling and not hidden:
            raise ValueError("a dueling Q-network needs at least one hidden layer")
        if dueling:
            self.trunk = mlp(obs_dim, hidden[:-1], hidden[-1])
            self.value = nn.Linear(hidden[-1], 1)
            self.advantage = nn.Linear(hidden[-1], n_actions)
        else:
            self.q = mlp(obs_dim, hidden, n_actions)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if not self.dueling:
            return self.q(obs)
        h = torch.relu(self.trunk(obs))
        adv = self.advantage(h)
        return self.value(h) + adv - adv.mean(-1, keepdim=True)


class CriticEnsemble(nn.Module):
    """`n` independent Q(s, a) critics for continuous actions; forward returns [B, n]."""

    def __init__(self, n: int, obs_dim: int, act_dim: int, hidden: Sequence[int]) -> None:
        super().__init__()
        self.n = n
        dims = [obs_dim + act_dim, *hidden]
        self.layers = nn.ModuleList(MultiLinear(n, i, o) for i, o in itertools.pairwise(dims))
        self.out = MultiLinear(n, dims[-1], 1, gain=1.0)

    def linear_layers(self) -> list[MultiLinear]:
        """The hidden layers, then the output layer."""
        return [*(m for m in self.layers if isinstance(m, MultiLinear)), self.out]

    def heads_input(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        """[n, B, obs + act]: every critic's input, heads first (an expanded view, no copies)."""
        return torch.cat([obs, action], -1).expand(self.n, -1, -1)

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        *hidden, out = self.linear_layers()
        x = self.heads_input(obs, action)
        for layer in hidden:
            x = layer.forward_heads_first(x).relu_()
        return out.forward_heads_first(x).squeeze(-1).t()


class DeterministicActor(nn.Module):
    """a = tanh(mlp(s)) in [-1, 1] (DDPG/TD3)."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: Sequence[int]) -> None:
        super().__init__()
        self.net = mlp(obs_dim, hidden, act_dim)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.net(obs))


class SquashedGaussianActor(nn.Module):
    """a = tanh(u), u ~ N(mu(s), sigma(s)), from one MLP that outputs [mu, log sigma] (log sigma clamped to
    [LOG_STD_MIN, LOG_STD_MAX])."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: Sequence[int]) -> None:
        super().__init__()
        self.net = mlp(obs_dim, hidden, 2 * act_dim)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """A sampled action and its log-probability (with the tanh correction)."""
        return squashed_sample(self.net(obs))[:2]

    def action(self, obs: torch.Tensor, deterministic: bool = False) -> torch.Tensor:
        """An action alone: sampled, or tanh(mu) when `deterministic` (what acting needs, without log pi)."""
        mu, log_std = self.net(obs).chunk(2, -1)
        return (mu if deterministic else gaussian_sample(mu, log_std)[0]).tanh()


def squashed_sample(out: torch.Tensor, noise: torch.Tensor | None = None,
                    ) -> tuple[torch.Tensor, torch.Tensor, tuple[torch.Tensor, ...]]:
    """a = tanh(u), u = mu + noise * sigma from an actor output [mu, log sigma]; returns a, log pi(a) and, for
    hand-written gradients, (noise, sigma, where log sigma is inside its clamp). `noise` (standard normal, of
    mu's shape) is drawn here unless given.

    log pi(a) = sum over dimensions of log N(u; mu, sigma) - log(1 - tanh(u)^2), the latter in the stable form
    2 (log 2 - u - softplus(-2u)); written as few whole-batch ops, since each costs more than its arithmetic.
    """
    mu, log_std = out.chunk(2, -1)
    u, noise, std, clamped = gaussian_sample(mu, log_std, noise)
    per_dim = noise.square().mul_(-0.5).sub_(clamped).add_(u, alpha=2.0)
    per_dim.add_(nn.functional.softplus(u * -2.0), alpha=2.0)
    log_prob = per_dim.sum(-1).sub_(mu.shape[-1] * (0.5 * math.log(2 * math.pi) + 2 * math.log(2)))
    return u.tanh(), log_prob, (noise, std, log_std == clamped)


def gaussian_sample(mu: torch.Tensor, log_std: torch.Tensor,
                    noise: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """u = mu + noise * sigma with sigma = exp(log sigma clamped to [LOG_STD_MIN, LOG_STD_MAX]); returns u,
    noise, sigma and the clamped log sigma. `noise` is drawn here (standard normal) unless given."""
    clamped = log_std.clamp(LOG_STD_MIN, LOG_STD_MAX)
    noise, std = torch.randn_like(mu) if noise is None else noise, clamped.exp()
    return torch.addcmul(mu, noise, std), noise, std, clamped
