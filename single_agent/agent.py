"""What every single-agent learner shares: spaces, device, step counters, tensors, target updates, state."""
from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn
from torch.optim.adam import adam as functional_adam

from core.config import NonNegativeInt, PositiveFloat, PositiveFraction, PositiveInt, Probability, WidthList
from core.nn import set_lr
from core.run_state import RunState
from single_agent.spaces import ActionScaler, flatten_obs, obs_dim


@dataclass
class OffPolicyConfig:
    """Settings every off-policy learner has (budgets in env steps)."""

    buffer_size: PositiveInt = 1_000_000     # transitions
    batch_size: PositiveInt = 256
    learning_starts: NonNegativeInt = 100    # env steps of uniformly random actions before learning starts
    train_freq: PositiveInt = 1              # vector steps between training phases
    gradient_steps: PositiveInt = 1          # updates per training phase
    gamma: Probability = 0.99
    lr: PositiveFloat = 3e-4
    tau: PositiveFraction = 0.005            # target-network update rate (1.0: hard copy)
    hidden_sizes: WidthList = field(default_factory=lambda: [256, 256])
    iteration_steps: PositiveInt = 1000      # env steps per logged iteration
    # true: the learner's fast update (DQN, SAC: hand-written gradients, torch's fused Adam kernel called directly)
    # where this torch build has the private calls it needs, else (with a one-line warning) the reference; false:
    # the reference update (autograd, optimizer.step()). Both compute the same update, as the tests check; the
    # speed-ups are in BENCHMARKS.md. TD3/DDPG have only the reference (their fast path gained about 1.1x)
    fast_path: bool = True

    def __post_init__(self) -> None:
        if self.batch_size > self.buffer_size:
            raise ValueError(f"batch_size ({self.batch_size}) must not exceed buffer_size ({self.buffer_size})")


class Agent:
    """Base of the learners: obs flattening, [-1, 1] <-> env action mapping, counters and checkpoint state.

    Subclasses list their networks and optimisers in `modules` (name -> object with state_dict), so
    `state_dict` / `load_state_dict` cover them all.
    """

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, cfg: Any,
                 device: torch.device | str = "cpu", run: RunState | None = None) -> None:
        self.cfg = cfg
        self.device = torch.device(device)
        self.observation_space, self.action_space = observation_space, action_space
        self.obs_dim = obs_dim(observation_space)
        self.discrete = isinstance(action_space, spaces.Discrete)
        self.scaler: ActionScaler | None = None
        if isinstance(action_space, spaces.Discrete):
            self.act_dim = int(action_space.n)
        elif isinstance(action_space, spaces.Box):
            self.act_dim, self.scaler = int(np.prod(action_space.shape)), ActionScaler(action_space)
        else:
            raise TypeError(f"single-agent learners take Discrete or Box action spaces, got {action_space}")
        self.run = run or RunState()  # a training run passes its own (clock, seeded streams)
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
                "n_updates": self.n_updates}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for name, m in self.modules.items():
            m.load_state_dict(state[name])
        self.n_updates = int(state["n_updates"])
        for optimizer in (m for m in self.modules.values() if isinstance(m, torch.optim.Optimizer)):
            set_lr(optimizer, self.cfg.lr)  # the config's (a resumed run may change it)


class OffPolicyAgent(Agent):
    """A learner trained on sampled batches of transitions. `update` is its reference update (autograd, plain
    optimizer steps); one with a fast path sets `has_fast_path` and implements `fast_update` (or overrides
    `train`), the same update computed faster, which runs when `cfg.fast_path` asks for it and this torch build
    supports it."""

    has_fast_path = False

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, cfg: OffPolicyConfig,
                 device: torch.device | str = "cpu", run: RunState | None = None) -> None:
        super().__init__(observation_space, action_space, cfg, device, run)
        self.fast_path = self.has_fast_path and cfg.fast_path and fast_path_supported()

    def update(self, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
        """One gradient step on a batch of transitions, by autograd (the reference)."""
        raise NotImplementedError

    def fast_update(self, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
        """`update`, computed faster (learners with a fast path)."""
        raise NotImplementedError

    def train(self, batch: dict[str, Any], n_updates: int) -> dict[str, torch.Tensor]:
        """`n_updates` gradient steps, the i-th on the i-th run of `batch_size` rows of `batch`; returns each
        metric's mean over the updates that report it. Learners override this to share work across updates."""
        size, step = self.cfg.batch_size, self.fast_update if self.fast_path else self.update
        means = MetricMeans()
        for i in range(n_updates):
            means.add(step(batch_rows(batch, slice(i * size, (i + 1) * size))))
        return means.means()


class MetricMeans:
    """Sums of metric tensors over updates; `means()` divides each by the number of updates that reported it."""

    def __init__(self) -> None:
        self.totals: dict[str, torch.Tensor] = {}
        self.counts: dict[str, int] = {}

    def add(self, metrics: dict[str, torch.Tensor]) -> None:
        for key, value in metrics.items():
            self.totals[key] = self.totals[key] + value if key in self.totals else value
            self.counts[key] = self.counts.get(key, 0) + 1

    def means(self) -> dict[str, torch.Tensor]:
        return {key: value / self.counts[key] if self.counts[key] > 1 else value for key, value in self.totals.items()}


def batch_rows(batch: dict[str, Any], rows: slice) -> dict[str, Any]:
    """The `rows` of every array in a (possibly nested) batch."""
    return {key: batch_rows(value, rows) if isinstance(value, dict) else value[rows] for key, value in batch.items()}


@functools.cache
def missing_private_calls() -> tuple[str, ...]:
    """The private torch calls of the fast paths (`adam_step`, single_agent.mlp_backprop) this torch build lacks;
    looked up once."""
    missing = [] if hasattr(torch, "_fused_adam_") else ["torch._fused_adam_"]
    try:  # an op namespace raises (AttributeError or RuntimeError, by version) for an operator it does not have
        torch.ops.aten.threshold_backward  # noqa: B018
    except (AttributeError, RuntimeError):
        missing.append("torch.ops.aten.threshold_backward")
    return tuple(missing)


@functools.cache
def fast_path_supported() -> bool:
    """Whether this torch build has what the fast paths need; warns (once) when it has not."""
    missing = missing_private_calls()
    if missing:
        warnings.warn(f"fast_path: torch {torch.__version__} lacks {', '.join(missing)}; the off-policy learners "
                      "run their reference (autograd) updates instead", RuntimeWarning, stacklevel=2)
    return not missing


def adam(params: Iterable[torch.Tensor], lr: float, **kwargs: Any) -> torch.optim.Adam:
    """Adam, fused into one kernel per step where this torch build supports it (much faster for small nets)."""
    params = list(params)
    if "torch._fused_adam_" not in missing_private_calls():
        try:
            return torch.optim.Adam(params, lr=lr, fused=True, **kwargs)
        except (RuntimeError, TypeError):
            pass
    return torch.optim.Adam(params, lr=lr, **kwargs)


def optimize(optimizer: torch.optim.Optimizer, loss: torch.Tensor, max_grad_norm: float | None = None) -> None:
    """The reference step: gradients of `loss` by autograd, clipped to a total norm of `max_grad_norm` (if given)
    over the optimizer's parameters, then `optimizer.step()`."""
    optimizer.zero_grad()
    loss.backward()
    if max_grad_norm is not None:
        nn.utils.clip_grad_norm_(optimizer.param_groups[0]["params"], max_grad_norm)
    optimizer.step()


@torch.no_grad()
def soft_update(target: nn.Module, source: nn.Module, tau: float) -> None:
    """target <- (1 - tau) target + tau source, over all parameters in one fused call (tau 1: copy)."""
    torch._foreach_lerp_(list(target.parameters()), list(source.parameters()), tau)


@torch.no_grad()
def adam_step(optimizer: torch.optim.Optimizer, grads: Sequence[torch.Tensor],
              max_grad_norm: float | None = None) -> None:
    """One step of `optimizer` (Adam, one parameter group) with explicit `grads`, first clipped to a total norm
    of `max_grad_norm` like `clip_grad_norm_`.

    Runs torch's fused Adam kernel (its functional Adam for an unfused optimizer) on the optimizer's own state, so
    checkpoints and `optimizer.step()` see the same state; it skips `.grad` bookkeeping, `zero_grad` and per-step
    regrouping, which cost more than the maths for small networks. Part of the fast paths: it needs
    `torch._fused_adam_` for a fused optimizer (see `fast_path_supported`).
    """
    grads = list(grads)
    if max_grad_norm is not None:
        total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
        torch._foreach_mul_(grads, (max_grad_norm / (total + 1e-6)).clamp_(max=1.0))
    group = optimizer.param_groups[0]
    states = [optimizer.state[p] for p in group["params"]]
    if not states[0]:
        for p, state in zip(group["params"], states, strict=True):
            state["step"] = torch.zeros((), dtype=torch.float32, device=p.device) if group["fused"] \
                else torch.tensor(0.0)
            state["exp_avg"] = torch.zeros_like(p)
            state["exp_avg_sq"] = torch.zeros_like(p)
    steps, exp_avgs, exp_avg_sqs = ([s[key] for s in states] for key in ("step", "exp_avg", "exp_avg_sq"))
    beta1, beta2 = group["betas"]
    hyper = dict(amsgrad=False, lr=group["lr"], beta1=beta1, beta2=beta2, weight_decay=group["weight_decay"],
                 eps=group["eps"], maximize=False)
    if group["fused"]:  # what the functional form does for one device and dtype, less its regrouping
        torch._foreach_add_(steps, 1)
        torch._fused_adam_(group["params"], grads, exp_avgs, exp_avg_sqs, [], steps, **hyper)
    else:
        functional_adam(group["params"], grads, exp_avgs, exp_avg_sqs, [], steps, fused=False, **hyper)
