"""Running mean/variance normalisers (value normalisation, observation normalisation)."""
from __future__ import annotations

import torch
from torch import nn


class RunningNormalizer(nn.Module):
    """Tracks the running mean and variance of a stream of batches (parallel Welford update).

    Statistics are buffers, so they travel in `state_dict()` and checkpoints.
    """

    mean: torch.Tensor
    var: torch.Tensor
    count: torch.Tensor

    def __init__(self, shape: tuple[int, ...] = (), eps: float = 1e-5, clip: float | None = None) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(shape, dtype=torch.float64))
        self.register_buffer("var", torch.ones(shape, dtype=torch.float64))
        self.register_buffer("count", torch.tensor(eps, dtype=torch.float64))
        self.eps = eps
        self.clip = clip

    @torch.no_grad()
    def update(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        """Add a batch; leading dims are batch dims. `mask` (same leading shape) selects valid rows."""
        x = x.detach().to(torch.float64).reshape(-1, *self.mean.shape)
        if mask is not None:
            x = x[mask.reshape(-1).bool()]
        n = x.shape[0]
        if n == 0:
            return
        batch_mean = x.mean(0)
        batch_var = x.var(0, unbiased=False)
        delta = batch_mean - self.mean
        total = self.count + n
        self.mean += delta * n / total
        self.var.copy_((self.var * self.count + batch_var * n + delta.square() * self.count * n / total) / total)
        self.count.copy_(total)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        out = (x - self.mean.to(x.dtype)) / torch.sqrt(self.var.to(x.dtype) + self.eps)
        return out.clamp(-self.clip, self.clip) if self.clip is not None else out

    def denormalize(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sqrt(self.var.to(x.dtype) + self.eps) + self.mean.to(x.dtype)
