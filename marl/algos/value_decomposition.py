"""IQL, VDN and QMIX: recurrent agent Q-networks trained from an episode replay buffer.

The three differ only by the mixer: none (independent Q-learning per agent), a sum (VDN) or a monotonic
hypernetwork on the global state (QMIX). Double-Q TD(lambda) targets, hard target-network updates,
epsilon-greedy exploration over available actions annealed by env steps. The defaults follow pymarl2's recipe
(Hu et al. 2021): few large updates (128 episodes after every 256 env steps on 16 envs), Adam at 1e-3,
lambda 0.6. A dead agent adds nothing to VDN/QMIX's team value;
under IQL its slot keeps learning the team's value-to-go (its only action is the no-op), so a unit's return does
not end at its death: a marine that dies before its team wins still gets the win.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
from torch import nn

from core.config import NonNegativeInt, PositiveFloat, PositiveInt, Probability, Width, Widths
from core.nn import set_lr
from core.run_state import RunState
from envs.spec import EnvSpec
from marl.agent import EpisodeAgent, GroupAction, Hidden
from marl.episode_batch import EpisodeBatch
from marl.exploration import epsilon_greedy
from marl.mixers import QMixer, VDNMixer
from marl.networks import GroupActionNet, ModuleMap
from marl.returns import next_recorded, td_lambda_returns


@dataclass
class ValueDecompositionConfig:
    """Hyperparameters of IQL/VDN/QMIX (the --algo name sets `mixer`). Steps count env steps."""

    mixer: Literal["none", "vdn", "qmix"] = "qmix"
    rollout_steps: PositiveInt = 16  # vector steps collected per iteration
    updates_per_iteration: PositiveInt = 1
    batch_size: PositiveInt = 128  # episodes per update
    buffer_size: PositiveInt = 5000  # episodes
    learning_starts: NonNegativeInt = 128  # episodes in the buffer before updates start
    lr: PositiveFloat = 1e-3
    gamma: Probability = 0.99
    td_lambda: Probability = 0.6  # 0: one-step targets
    double_q: bool = True
    target_update_interval: PositiveInt = 25  # updates between hard target-network copies
    epsilon_start: Probability = 1.0
    epsilon_finish: Probability = 0.05
    epsilon_anneal_steps: NonNegativeInt = 50_000
    policy: Literal["mlp", "gru"] = "gru"
    hidden_sizes: Widths = (64,)
    rnn_hidden: Width = 64
    share_params: bool = True
    agent_id: bool = True
    input_norm: bool = False
    mixing_embed: Width = 32
    hypernet_embed: Width = 64
    max_grad_norm: PositiveFloat = 10.0
    max_episode_len: NonNegativeInt = 0  # 0: the env's own episode limit

    def __post_init__(self) -> None:
        if self.epsilon_finish > self.epsilon_start:
            raise ValueError(f"epsilon_finish ({self.epsilon_finish}) must not exceed epsilon_start "
                             f"({self.epsilon_start})")
        for key in ("batch_size", "learning_starts"):  # the buffer never holds more than buffer_size episodes
            if getattr(self, key) > self.buffer_size:
                raise ValueError(f"{key} ({getattr(self, key)}) must not exceed buffer_size ({self.buffer_size})")


class ValueDecomposition(EpisodeAgent[ValueDecompositionConfig]):
    """IQL / VDN / QMIX agent over every (discrete) group of an env."""

    def __init__(self, spec: EnvSpec, cfg: ValueDecompositionConfig, device: str | torch.device = "cpu",
                 run: RunState | None = None) -> None:
        self.spec, self.cfg, self.device = spec, cfg, torch.device(device)
        self.run = run or RunState()  # a training run passes its own (clock, seeded streams)
        self.nets = ModuleMap({g.name: GroupActionNet(g, cfg) for g in spec.groups}).to(self.device)
        n_agents = sum(g.n_agents for g in spec.groups)
        state_dim = int(np.prod(spec.state_shape))
        mixer = {"none": None, "vdn": VDNMixer(),
                 "qmix": QMixer(n_agents, state_dim, cfg.mixing_embed, cfg.hypernet_embed)}[cfg.mixer]
        self.mixer = mixer.to(self.device) if mixer is not None else None
        self.target_nets = copy.deepcopy(self.nets)
        self.target_mixer = copy.deepcopy(self.mixer)
        params = list(self.nets.parameters()) + (list(self.mixer.parameters()) if self.mixer is not None else [])
        self.params = params
        self.optimizer = torch.optim.Adam(params, lr=cfg.lr)
        self.updates = 0

    @torch.no_grad()
    def act(self, obs: Mapping[str, np.ndarray], avail: Mapping[str, np.ndarray | None], state: np.ndarray,
            hidden: Mapping[str, Hidden], starts: np.ndarray, deterministic: bool = False,
            with_value: bool = True) -> dict[str, GroupAction]:
        """Greedy (deterministic) or epsilon-greedy actions over available actions, per group."""
        starts_t = torch.as_tensor(starts, device=self.device)[None]
        out = {}
        for name, net in self.nets.items():
            q, h = net(torch.as_tensor(obs[name], device=self.device)[None], hidden[name][0], starts_t)
            avail_np = _avail(avail, name)
            mask = torch.as_tensor(avail_np, device=self.device)
            actions = q[0].masked_fill(~mask, -torch.inf).argmax(-1).cpu().numpy()
            if not deterministic:
                actions = epsilon_greedy(actions, avail_np, self.epsilon, self.run.rng("explore"))
            out[name] = GroupAction(torch.as_tensor(actions), (h, h))
        return out

    # -- learning ---------------------------------------------------------------------------------------
    def update(self, batch: EpisodeBatch) -> dict[str, float]:
        """One gradient step on sampled episodes."""
        cfg = self.cfg
        reward, terminated, mask_t, state = batch.reward, batch.terminated, batch.mask, batch.state
        observed = batch.lengths + 1  # each episode's observations: its steps + 1
        chosen, best_next, alive_rows, alive_next_rows = [], [], [], []
        for name, net in self.nets.items():
            group = batch.groups[name]
            obs, avail, actions, alive = group.obs, group.avail, group.actions, group.alive
            q = net.forward_episodes(obs, observed)  # padding steps are not computed (zero)
            with torch.no_grad():
                tq = self.target_nets[name].forward_episodes(obs, observed)
                online_next = q[1:].detach().masked_fill(~avail[1:], -torch.inf)
                if cfg.double_q:
                    best = tq[1:].gather(-1, online_next.argmax(-1, keepdim=True)).squeeze(-1)
                else:
                    best = tq[1:].masked_fill(~avail[1:], -torch.inf).max(-1).values
                best = torch.where(avail[1:].any(-1), best, torch.zeros_like(best))  # padding: no actions
            chosen.append(q[:-1].gather(-1, actions.unsqueeze(-1)).squeeze(-1))
            best_next.append(best)
            alive_rows.append(alive[:-1])
            alive_next_rows.append(alive[1:])
        chosen_q, next_q = torch.cat(chosen, -1), torch.cat(best_next, -1)  # [T, B, N]
        alive_now, alive_next = torch.cat(alive_rows, -1), torch.cat(alive_next_rows, -1)
        last = mask_t * (1.0 - next_recorded(mask_t))  # episodes' last steps
        if self.mixer is None or self.target_mixer is None:  # IQL: each slot's own TD error, through deaths
            per_slot = [x.unsqueeze(-1).expand_as(next_q) for x in (reward, terminated, last)]
            target = td_lambda_returns(per_slot[0], 1.0 - per_slot[1], next_q, cfg.gamma, cfg.td_lambda, per_slot[2])
            weight = mask_t.unsqueeze(-1).expand_as(chosen_q)
            td = (chosen_q - target) * weight
            q_taken = chosen_q
        else:  # dead agents add nothing to the team value
            q_tot = self.mixer(chosen_q * alive_now, state[:-1])
            with torch.no_grad():
                next_tot = self.target_mixer(next_q * alive_next, state[1:])
                target = td_lambda_returns(reward, 1.0 - terminated, next_tot, cfg.gamma, cfg.td_lambda, last)
            weight = mask_t
            td = (q_tot - target) * weight
            q_taken = q_tot
        loss = td.square().sum() / weight.sum().clamp(min=1.0)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = float(nn.utils.clip_grad_norm_(self.params, cfg.max_grad_norm))
        self.optimizer.step()
        self.updates += 1
        if self.updates % cfg.target_update_interval == 0:
            self.target_nets.load_state_dict(self.nets.state_dict())
            if self.mixer is not None and self.target_mixer is not None:
                self.target_mixer.load_state_dict(self.mixer.state_dict())
        with torch.no_grad():
            q_mean = float((q_taken * weight).sum() / weight.sum().clamp(min=1.0))
        return {"loss/td": float(loss.detach()), "loss/grad_norm": grad_norm, "train/q_taken_mean": q_mean}

    # -- persistence ------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        state = {"nets": self.nets.state_dict(), "target_nets": self.target_nets.state_dict(),
                 "optimizer": self.optimizer.state_dict(), "updates": self.updates}
        if self.mixer is not None and self.target_mixer is not None:
            state.update(mixer=self.mixer.state_dict(), target_mixer=self.target_mixer.state_dict())
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.nets.load_state_dict(state["nets"])
        self.target_nets.load_state_dict(state["target_nets"])
        self.optimizer.load_state_dict(state["optimizer"])
        set_lr(self.optimizer, self.cfg.lr)  # the config's (a resumed run may change it)
        self.updates = int(state["updates"])
        if self.mixer is not None and self.target_mixer is not None:
            self.mixer.load_state_dict(state["mixer"])
            self.target_mixer.load_state_dict(state["target_mixer"])


def _avail(avail: Mapping[str, np.ndarray | None], group: str) -> np.ndarray:
    """A discrete group's action mask (every discrete group has one)."""
    mask = avail[group]
    if mask is None:
        raise ValueError(f"group {group} has no action mask: value-based agents need Discrete actions")
    return mask
