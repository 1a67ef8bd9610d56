"""TD(lambda) targets over time-major episode batches, shared by COMA's critic and the value-based learners."""
from __future__ import annotations

import torch


def td_lambda_returns(rewards: torch.Tensor, continues: torch.Tensor, next_values: torch.Tensor, gamma: float,
                      lam: float, last: torch.Tensor | None = None) -> torch.Tensor:
    """TD(lambda) returns over [T, ...]: G_t = r_t + gamma c_t ((1 - lam) next_values[t] + lam G_{t+1}).

    next_values[t] is the target value of step t + 1; c_t is 0 where the episode terminates at step t, and on
    padding, so that nothing bootstraps across an episode boundary. Where `last[t]` is 1 (an episode's last
    recorded step, e.g. a truncated one), G_{t+1} is next_values[t] itself: the return bootstraps from the
    final observation's value. lam = 0 gives the one-step targets r_t + gamma c_t next_values[t].
    """
    if lam == 0:
        return rewards + gamma * continues * next_values
    out = torch.zeros_like(next_values)
    running = torch.zeros_like(next_values[0])
    for t in range(next_values.shape[0] - 1, -1, -1):
        follow = running if last is None else torch.where(last[t] > 0, next_values[t], running)
        running = rewards[t] + gamma * continues[t] * ((1 - lam) * next_values[t] + lam * follow)
        out[t] = running
    return out


def next_recorded(mask: torch.Tensor) -> torch.Tensor:
    """[T, ...] 1 where step t + 1 of a time-major padded batch is recorded (mask: 1 on recorded steps)."""
    return torch.cat([mask[1:], torch.zeros_like(mask[:1])])
