"""Value and observation normalisers: a running mean/variance and the MAPPO code's debiased moving average.

Both keep float64 statistics as buffers (so they travel in `state_dict()` and checkpoints) and share the batch
handling and the (de)normalisation; they differ in how a batch moves the statistics and in the scale's floor.
"""
from __future__ import annotations

import torch
from torch import nn


class _Normalizer(nn.Module):
    """Normalises x [..., *shape] by a mean and scale that subclasses track from batches of samples."""

    def __init__(self, shape: tuple[int, ...], clip: float | None) -> None:
        super().__init__()
        self.shape = shape
        self.clip = clip

    def _rows(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """A batch as float64 rows [n, *shape]: leading dims are batch dims, `mask` (their shape) selects rows."""
        x = x.detach().to(torch.float64).reshape(-1, *self.shape)
        return x if mask is None else x[mask.reshape(-1).bool()]

    def mean_std(self, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        mean, std = self.mean_std(x.dtype)
        out = (x - mean) / std
        return out.clamp(-self.clip, self.clip) if self.clip is not None else out

    def denormalize(self, x: torch.Tensor) -> torch.Tensor:
        mean, std = self.mean_std(x.dtype)
        return x * std + mean


class RunningNormalizer(_Normalizer):
    """Tracks the running mean and variance of a stream of batches (parallel Welford update): every sample so
    far weighs the same."""

    mean: torch.Tensor
    var: torch.Tensor
    count: torch.Tensor

    def __init__(self, shape: tuple[int, ...] = (), eps: float = 1e-5, clip: float | None = None) -> None:
        super().__init__(shape, clip)
        self.register_buffer("mean", torch.zeros(shape, dtype=torch.float64))
        self.register_buffer("var", torch.ones(shape, dtype=torch.float64))
        self.register_buffer("count", torch.tensor(eps, dtype=torch.float64))
        self.eps = eps

    @torch.no_grad()
    def update(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        """Add a batch; leading dims are batch dims. `mask` (same leading shape) selects valid rows."""
        x = self._rows(x, mask)
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

    def mean_std(self, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        return self.mean.to(dtype), torch.sqrt(self.var.to(dtype) + self.eps)


class EMANormalizer(_Normalizer):
    """The MAPPO code's ValueNorm (marlbenchmark/on-policy, onpolicy/utils/valuenorm.py): exponential moving
    averages of the batch mean and mean square with weight `beta` per batch (whatever its size), divided by the
    same average of ones to remove the bias of their zero start; the variance has a floor of `min_var`."""

    ema_mean: torch.Tensor
    ema_mean_sq: torch.Tensor
    debias: torch.Tensor

    def __init__(self, shape: tuple[int, ...] = (), beta: float = 0.99999, eps: float = 1e-5, min_var: float = 1e-2,
                 clip: float | None = None) -> None:
        super().__init__(shape, clip)
        self.register_buffer("ema_mean", torch.zeros(shape, dtype=torch.float64))
        self.register_buffer("ema_mean_sq", torch.zeros(shape, dtype=torch.float64))
        self.register_buffer("debias", torch.tensor(0.0, dtype=torch.float64))
        self.beta, self.eps, self.min_var = beta, eps, min_var

    @torch.no_grad()
    def update(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        """Move the averages towards a batch's mean and mean square; leading dims are batch dims."""
        x = self._rows(x, mask)
        if x.shape[0] == 0:
            return
        for average, batch in ((self.ema_mean, x.mean(0)), (self.ema_mean_sq, x.square().mean(0)),
                               (self.debias, torch.ones((), dtype=torch.float64))):
            average.mul_(self.beta).add_(batch * (1.0 - self.beta))

    def mean_var(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The debiased mean and variance (float64)."""
        debias = self.debias.clamp(min=self.eps)
        mean = self.ema_mean / debias
        return mean, (self.ema_mean_sq / debias - mean.square()).clamp(min=self.min_var)

    def mean_std(self, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        mean, var = self.mean_var()
        return mean.to(dtype), var.sqrt().to(dtype)
