"""MAPPO (centralised critic on the global state) and IPPO (critic on the agent's own observation).

The two differ only by `critic_input`. MAPPO's critic sees the agent's own observation beside the global
state (`agent_specific_state`, the agent-specific global state of Yu et al. 2022). Clipped surrogate, GAE,
value normalisation and clipping, Huber value loss, entropy bonus, advantage normalisation, per-network
gradient clipping, action masks in sampling/log-probs/entropy, dead agents excluded from the policy loss (the
critic still learns their slots' values, which the returns of agents that die bootstrap from), parameter
sharing with agent-id one-hot or per-agent weights, MLP or GRU networks (trained on chunks of `chunk_len`
steps), Discrete and Box actions.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Literal

import numpy as np
import torch
from torch import nn

from core.config import NonNegativeFloat, PositiveFloat, PositiveInt, Probability, Width, Widths
from core.nn import Activation, set_lr
from core.normalizers import EMANormalizer, RunningNormalizer
from core.run_state import RunState
from envs.spec import AgentGroup, EnvSpec
from marl.agent import GroupAction, Hidden, zero_hidden
from marl.distributions import DiagGaussian, MaskedCategorical
from marl.exploration import linear_schedule
from marl.networks import AgentInput, AgentNet, ModuleMap
from marl.onpolicy import RolloutBatch


@dataclass
class MAPPOConfig:
    """Hyperparameters of MAPPO/IPPO. Step counts are per env (a rollout is rollout_steps x n_envs env steps)."""

    rollout_steps: PositiveInt = 100
    ppo_epochs: PositiveInt = 10
    num_minibatches: PositiveInt = 1
    lr: PositiveFloat = 7e-4
    critic_lr: PositiveFloat = 7e-4
    lr_anneal: bool = False  # both learning rates decay linearly to 0 over train.schedule_steps
    gamma: Probability = 0.99
    gae_lambda: Probability = 0.95
    bootstrap_truncated: bool = True  # false: an episode cut by the time limit ends as a terminated one (no bootstrap)
    clip: PositiveFloat = 0.2  # the surrogate loss clips the probability ratio to 1 +- clip
    value_clip: NonNegativeFloat = 0.2  # 0: no value clipping
    entropy_coef: NonNegativeFloat = 0.01
    entropy_final: NonNegativeFloat | None = None  # if set, entropy_coef moves linearly to this over the run
    value_coef: NonNegativeFloat = 1.0
    max_grad_norm: PositiveFloat = 10.0
    huber_delta: NonNegativeFloat = 10.0  # 0: squared error
    value_norm: bool = True
    # value_norm's statistics. running: mean and variance of every return so far, updated once per rollout;
    # ema: the MAPPO code's ValueNorm, debiased moving averages (beta 0.99999) of the returns' mean and mean
    value_normalizer: Literal["running", "ema"] = "running"  # square, updated on each minibatch of each epoch
    advantage_norm: bool = True
    share_params: bool = True
    agent_id: bool = True
    policy: Literal["mlp", "gru"] = "mlp"
    hidden_sizes: Widths = (64, 64)
    rnn_hidden: Width = 64
    chunk_len: PositiveInt = 10
    activation: Activation = "relu"
    input_norm: bool = True
    layer_norm: bool = False  # LayerNorm after each hidden layer's activation and on the GRU's output (MAPPO code's)
    critic_input: Literal["state", "obs"] = "state"  # global state (MAPPO) or the agent's own observation (IPPO)
    agent_specific_state: bool = True  # state critic: the agent's own observation beside the state (Yu et al. 2022)
    log_std_init: float = -0.5

    def budget_schedules(self) -> tuple[str, ...]:
        """The keys switched on whose values move over the run (core.trainer.BudgetScheduled)."""
        switches = (("lr_anneal", self.lr_anneal), ("entropy_final", self.entropy_final is not None))
        return tuple(key for key, on in switches if on)

    def __post_init__(self) -> None:
        if self.policy == "gru" and self.rollout_steps % self.chunk_len:
            raise ValueError(f"rollout_steps ({self.rollout_steps}) must be a multiple of chunk_len ({self.chunk_len})")


class GroupActorCritic(nn.Module):
    """Actor and critic for one agent group (shared or per-agent weights)."""

    def __init__(self, group: AgentGroup, state_shape: tuple[int, ...], cfg: MAPPOConfig) -> None:
        super().__init__()
        self.group = group
        heads = 1 if cfg.share_params else group.n_agents
        self.inputs = AgentInput(group.n_agents, group.obs_shape,
                                 use_id=cfg.share_params and cfg.agent_id and group.n_agents > 1)
        id_dim = self.inputs.id_dim()
        self.critic_on_state = cfg.critic_input == "state"
        self.critic_on_obs = cfg.critic_input == "obs" or cfg.agent_specific_state
        critic_dim = (int(np.prod(state_shape)) if self.critic_on_state else 0) + \
            (self.inputs.obs_dim if self.critic_on_obs else 0)
        net = partial(AgentNet, heads, hidden_sizes=cfg.hidden_sizes, activation=cfg.activation,
                      recurrent=cfg.policy == "gru", rnn_hidden=cfg.rnn_hidden, input_norm=cfg.input_norm,
                      layer_norm=cfg.layer_norm)
        self.actor = net(self.inputs.obs_dim + id_dim, group.n_actions, out_gain=0.01)
        self.critic = net(critic_dim + id_dim, 1, out_gain=1.0)
        self.log_std = None if group.discrete else nn.Parameter(torch.full((heads, group.n_actions), cfg.log_std_init))

    def actor_input(self, obs: torch.Tensor) -> torch.Tensor:
        """obs [..., G, *obs_shape] -> [..., G, features]."""
        return self.inputs(obs)

    def critic_input(self, obs: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """Global state (broadcast to every agent), own obs, or both (in that order), plus agent id."""
        lead = obs.shape[:obs.dim() - len(self.group.obs_shape) - 1]
        parts = []
        if self.critic_on_state:
            flat = state.reshape(*lead, 1, -1)
            parts.append(flat.expand(*lead, self.group.n_agents, flat.shape[-1]))
        if self.critic_on_obs:
            parts.append(obs.reshape(*lead, self.group.n_agents, self.inputs.obs_dim))
        return self.inputs.with_id(torch.cat(parts, dim=-1) if len(parts) > 1 else parts[0])

    def distribution(self, out: torch.Tensor, avail: torch.Tensor | None) -> MaskedCategorical | DiagGaussian:
        if self.log_std is None:  # discrete actions
            return MaskedCategorical(out, avail)
        return DiagGaussian(out, self.log_std)


class MAPPO:
    """On-policy actor-critic for every agent group of an env (see module docstring)."""

    def __init__(self, spec: EnvSpec, cfg: MAPPOConfig, device: str | torch.device = "cpu",
                 run: RunState | None = None) -> None:
        self.spec = spec
        self.run = run or RunState()  # a training run passes its own (clock, seeded streams)
        self.cfg = cfg
        self.device = torch.device(device)
        nets = {g.name: GroupActorCritic(g, spec.state_shape, cfg) for g in spec.groups}
        self.nets = ModuleMap(nets).to(self.device)
        normalizer = EMANormalizer if cfg.value_normalizer == "ema" else RunningNormalizer
        self.value_norm = ModuleMap({g.name: normalizer() for g in spec.groups}).to(self.device)
        self.norm_per_minibatch = cfg.value_norm and cfg.value_normalizer == "ema"  # else once per rollout
        actor_params = [p for net in self.nets.values() for p in net.actor.parameters()]
        actor_params += [net.log_std for net in self.nets.values() if net.log_std is not None]
        critic_params = [p for net in self.nets.values() for p in net.critic.parameters()]
        self.actor_params, self.critic_params = actor_params, critic_params
        self.entropy_coef = cfg.entropy_coef  # this update's (entropy_final moves it over the run)
        self.optimizer = torch.optim.Adam([{"params": actor_params, "lr": cfg.lr},
                                           {"params": critic_params, "lr": cfg.critic_lr}], eps=1e-5)

    # -- acting -----------------------------------------------------------------------------------------
    @property
    def recurrent(self) -> bool:
        return self.cfg.policy == "gru"

    def initial_hidden(self, n_envs: int) -> dict[str, Hidden]:
        return zero_hidden(self.spec, n_envs, self.cfg.rnn_hidden if self.recurrent else 0, self.device)

    def _tensor(self, array: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(array, device=self.device)

    @torch.no_grad()
    def act(self, obs: Mapping[str, np.ndarray], avail: Mapping[str, np.ndarray | None], state: np.ndarray,
            hidden: Mapping[str, Hidden], starts: np.ndarray, deterministic: bool = False,
            with_value: bool = True) -> dict[str, GroupAction]:
        """One step for every group, with log-probabilities and (unless `with_value` is False) values."""
        starts_t = self._tensor(starts)[None]
        state_t = self._tensor(state)
        result = {}
        for name, net in self.nets.items():
            obs_t = self._tensor(obs[name])
            h_actor, h_critic = hidden[name]
            out, h_actor = net.actor(net.actor_input(obs_t)[None], h_actor, starts_t)
            group_avail = avail[name]
            avail_t = None if group_avail is None else self._tensor(group_avail)
            dist = net.distribution(out[0], avail_t)
            actions = dist.mode() if deterministic else dist.sample()
            value = None
            if with_value:
                value, h_critic = net.critic(net.critic_input(obs_t, state_t)[None], h_critic, starts_t)
                value = value[0, ..., 0]
            result[name] = GroupAction(actions, (h_actor, h_critic), dist.log_prob(actions), value)
        return result

    @torch.no_grad()
    def value(self, group: str, obs: np.ndarray, state: np.ndarray, h_critic: torch.Tensor, starts: np.ndarray
              ) -> torch.Tensor:
        """Normalised-space value [n, n_agents] of (obs, state) continuing from critic state `h_critic`."""
        net = self.nets[group]
        x = net.critic_input(self._tensor(obs), self._tensor(state))[None]
        out, _ = net.critic(x, h_critic, self._tensor(starts)[None])
        return out[0, ..., 0]

    @property
    def critic_on_state(self) -> bool:
        return self.cfg.critic_input == "state"

    def denormalize(self, group: str, values: torch.Tensor) -> torch.Tensor:
        return self.value_norm[group].denormalize(values) if self.cfg.value_norm else values

    # -- learning ---------------------------------------------------------------------------------------
    def update(self, batch: RolloutBatch) -> dict[str, float]:
        """PPO epochs over the rollout; returns loss/... metrics."""
        cfg = self.cfg
        progress = self.run.clock.progress
        if cfg.lr_anneal:
            set_lr(self.optimizer, cfg.lr * (1.0 - progress), cfg.critic_lr * (1.0 - progress))
        self.entropy_coef = linear_schedule(cfg.entropy_coef, cfg.entropy_final, progress)
        data, state, starts = self._prepare(batch)
        stats: dict[str, list[float]] = {}
        for _ in range(cfg.ppo_epochs):
            for idx in torch.randperm(starts.shape[1], device=self.device).chunk(cfg.num_minibatches):
                minibatch = {g: _select_sequences(d, idx) for g, d in data.items()}
                if self.norm_per_minibatch:
                    for g, d in minibatch.items():
                        d["returns"] = self._normalized_returns(g, d["returns"])
                losses = self._minibatch_loss(minibatch, state[:, idx], starts[:, idx])
                self.optimizer.zero_grad(set_to_none=True)
                losses["total"].backward()
                stats.setdefault("loss/grad_norm_actor", []).append(
                    float(nn.utils.clip_grad_norm_(self.actor_params, cfg.max_grad_norm)))
                stats.setdefault("loss/grad_norm_critic", []).append(
                    float(nn.utils.clip_grad_norm_(self.critic_params, cfg.max_grad_norm)))
                self.optimizer.step()
                for key, value in losses.items():
                    if key != "total":
                        stats.setdefault(f"loss/{key}", []).append(float(value))
        return {**{k: float(np.mean(v)) for k, v in stats.items()}, "schedule/entropy_coef": self.entropy_coef}

    def _prepare(self, batch: RolloutBatch) -> tuple[dict[str, dict], torch.Tensor, torch.Tensor]:
        """Normalise targets (unless the normaliser moves per minibatch) and advantages, then cut the rollout into
        training sequences: per group a dict of step tensors [L, N, ...] and initial hidden states [N, ...],
        plus state [L, N, ...] and starts [L, N]. L = chunk_len for GRUs, 1 for MLPs."""
        cfg = self.cfg
        length = cfg.chunk_len if self.recurrent else 1
        data = {}
        for g in self.spec.groups:
            gb = batch.groups[g.name]
            returns, adv, mask = gb.returns, gb.advantages, gb.alive
            if cfg.value_norm and not self.norm_per_minibatch:
                returns = self._normalized_returns(g.name, returns)
            if cfg.advantage_norm:
                valid = adv[mask]
                if valid.numel() > 1:
                    adv = (adv - valid.mean()) / (valid.std() + 1e-8)
            steps = {"obs": gb.obs, "avail": gb.avail, "actions": gb.actions, "logp": gb.logp, "values": gb.values,
                     "returns": returns.float(), "adv": adv.float(), "mask": mask}
            data[g.name] = {k: None if v is None else _chunks(v, length) for k, v in steps.items()}
            data[g.name]["h_actor"] = _chunk_starts(gb.h_actor, length)
            data[g.name]["h_critic"] = _chunk_starts(gb.h_critic, length)
        return data, _chunks(batch.state, length), _chunks(batch.starts, length)

    def _normalized_returns(self, group: str, returns: torch.Tensor) -> torch.Tensor:
        """Update the group's value normaliser with `returns`, then normalise them."""
        self.value_norm[group].update(returns)  # every slot: dead agents' values are learnt too
        return self.value_norm[group].normalize(returns)

    def _minibatch_loss(self, data: dict, state: torch.Tensor, starts: torch.Tensor) -> dict[str, torch.Tensor]:
        cfg = self.cfg
        totals = {"policy": 0.0, "value": 0.0, "entropy": 0.0, "approx_kl": 0.0, "clip_fraction": 0.0}
        total_loss = torch.zeros((), device=self.device)
        for name, net in self.nets.items():
            d = data[name]
            mask = d["mask"].float()
            count = mask.sum().clamp(min=1.0)
            out, _ = net.actor(net.actor_input(d["obs"]), d["h_actor"], starts)
            dist = net.distribution(out, d["avail"])
            logp = dist.log_prob(d["actions"])
            log_ratio = logp - d["logp"]
            ratio = log_ratio.exp()
            adv = d["adv"]
            surrogate = torch.min(ratio * adv, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * adv)
            policy_loss = -(surrogate * mask).sum() / count
            entropy = (dist.entropy() * mask).sum() / count
            values, _ = net.critic(net.critic_input(d["obs"], state), d["h_critic"], starts)
            values = values[..., 0]
            value_err = values - d["returns"]
            value_loss = _value_loss(value_err, cfg.huber_delta)
            if cfg.value_clip > 0:
                clipped = d["values"] + (values - d["values"]).clamp(-cfg.value_clip, cfg.value_clip)
                value_loss = torch.max(value_loss, _value_loss(clipped - d["returns"], cfg.huber_delta))
            value_loss = value_loss.mean()  # over every agent slot, dead ones included
            total_loss = total_loss + policy_loss - self.entropy_coef * entropy + cfg.value_coef * value_loss
            with torch.no_grad():
                totals["approx_kl"] += float((((ratio - 1) - log_ratio) * mask).sum() / count)
                totals["clip_fraction"] += float((((ratio - 1).abs() > cfg.clip).float() * mask).sum() / count)
            totals["policy"] += float(policy_loss.detach())
            totals["value"] += float(value_loss.detach())
            totals["entropy"] += float(entropy.detach())
        n = len(self.nets)
        result = {k: torch.tensor(v / n) for k, v in totals.items()}
        result["total"] = total_loss
        return result

    # -- persistence ------------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        return {"nets": self.nets.state_dict(), "value_norm": self.value_norm.state_dict(),
                "optimizer": self.optimizer.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.nets.load_state_dict(state["nets"])
        self.value_norm.load_state_dict(state["value_norm"])
        self.optimizer.load_state_dict(state["optimizer"])
        set_lr(self.optimizer, self.cfg.lr, self.cfg.critic_lr)  # the config's (a resumed run may change them)


def _value_loss(err: torch.Tensor, huber_delta: float) -> torch.Tensor:
    if huber_delta > 0:
        return nn.functional.huber_loss(err, torch.zeros_like(err), reduction="none", delta=huber_delta)
    return 0.5 * err.square()


def _chunks(x: torch.Tensor, length: int) -> torch.Tensor:
    """[T, E, ...] -> [length, (T // length) * E, ...]: sequences of `length` consecutive steps."""
    t, e = x.shape[:2]
    chunks = x.reshape(t // length, length, e, *x.shape[2:]).transpose(0, 1)
    return chunks.reshape(length, (t // length) * e, *x.shape[2:])


def _select_sequences(data: dict, idx: torch.Tensor) -> dict:
    """Sequences `idx` of one group's prepared data (hidden states are [N, ...], the rest [L, N, ...])."""
    return {k: None if v is None else (v[idx] if k.startswith("h_") else v[:, idx]) for k, v in data.items()}


def _chunk_starts(h: torch.Tensor, length: int) -> torch.Tensor:
    """Recurrent states [T, E, ...] at the first step of each chunk -> [(T // length) * E, ...]."""
    first = h[::length]
    return first.reshape(first.shape[0] * first.shape[1], *first.shape[2:])
