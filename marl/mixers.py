"""Value-decomposition mixers: agent utilities [..., n_agents] -> team value [...]."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class VDNMixer(nn.Module):
    """Q_tot = sum of agent utilities (Sunehag et al. 2018)."""

    def forward(self, qs: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        return qs.sum(-1)


class QMixer(nn.Module):
    """Monotonic mixing network whose weights come from hypernetworks on the global state (Rashid et al. 2018).

    Absolute values of the hypernetwork outputs keep dQ_tot/dQ_a >= 0.
    """

    def __init__(self, n_agents: int, state_dim: int, embed: int = 32, hyper_embed: int = 64) -> None:
        super().__init__()
        self.n_agents, self.embed = n_agents, embed
        self.hyper_w1 = nn.Sequential(
            nn.Linear(state_dim, hyper_embed), nn.ReLU(), nn.Linear(hyper_embed, n_agents * embed)
        )
        self.hyper_b1 = nn.Linear(state_dim, embed)
        self.hyper_w2 = nn.Sequential(nn.Linear(state_dim, hyper_embed), nn.ReLU(), nn.Linear(hyper_embed, embed))
        self.hyper_b2 = nn.Sequential(nn.Linear(state_dim, embed), nn.ReLU(), nn.Linear(embed, 1))

    def forward(self, qs: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        lead = qs.shape[:-1]
        qs = qs.reshape(-1, 1, self.n_agents)
        state = state.reshape(-1, state.shape[-1])
        w1 = self.hyper_w1(state).abs().view(-1, self.n_agents, self.embed)
        hidden = F.elu(torch.bmm(qs, w1) + self.hyper_b1(state).unsqueeze(1))
        w2 = self.hyper_w2(state).abs().view(-1, self.embed, 1)
        return (torch.bmm(hidden, w2).squeeze(-1) + self.hyper_b2(state)).view(*lead)
