"""Action distributions for agent groups: masked categorical (Discrete) and diagonal Gaussian (Box)."""
from __future__ import annotations

import torch
from torch.distributions import Categorical, Normal

MASKED_LOGIT = -1e10


class MaskedCategorical:
    """Categorical over logits with unavailable actions masked out of sampling, log-probs and entropy."""

    def __init__(self, logits: torch.Tensor, avail: torch.Tensor | None) -> None:
        if avail is not None:
            logits = logits.masked_fill(~avail, MASKED_LOGIT)
        self.dist = Categorical(logits=logits, validate_args=False)

    def sample(self) -> torch.Tensor:
        return self.dist.sample()

    def mode(self) -> torch.Tensor:
        return self.dist.logits.argmax(-1)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.dist.log_prob(actions)

    def entropy(self) -> torch.Tensor:
        return self.dist.entropy()


class DiagGaussian:
    """Independent Gaussians per action dimension; log-probs and entropy are summed over dimensions."""

    def __init__(self, mean: torch.Tensor, log_std: torch.Tensor) -> None:
        self.dist = Normal(mean, log_std.exp().expand_as(mean), validate_args=False)

    def sample(self) -> torch.Tensor:
        return self.dist.sample()

    def mode(self) -> torch.Tensor:
        return self.dist.mean

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.dist.log_prob(actions).sum(-1)

    def entropy(self) -> torch.Tensor:
        return self.dist.entropy().sum(-1)
