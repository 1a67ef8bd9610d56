"""COMA (Foerster et al. 2018): decentralised recurrent actors, a centralised critic Q(s, u^-a, .) and the
counterfactual baseline sum_u' pi(u'|tau_a) Q(s, (u^-a, u')).

The critic sees the global state, the agent's observation, the other agents' current actions, everyone's
previous actions and the agent id, and outputs a value for each of the agent's own actions. Its targets are
TD(lambda) returns from a target critic. Actors use an epsilon-floored softmax over available actions;
masks apply in sampling, baseline and log-probabilities; dead agents are excluded from the actor loss (the
critic learns their no-op value, which the targets of agents dying next step bootstrap from). The actors'
objective is one of three (`policy_gradient`): the COMA paper's counterfactual gradient, its expectation over
actions, or, by default, a fit of the critic's Boltzmann policy softmax(Q / temperature) that turns mode-seeking
over the run (`boltzmann_objective` says why). Training is on-policy: each update uses the freshest
`batch_episodes` whole episodes.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
import torch
from torch import nn

from core.config import NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, Probability, Width, Widths
from core.errors import UserError
from core.nn import MultiLinear, set_lr
from core.run_state import RunState
from envs.spec import EnvSpec
from marl.agent import EpisodeAgent, GroupAction, Hidden
from marl.episode_batch import EpisodeBatch
from marl.exploration import linear_schedule
from marl.networks import GroupActionNet
from marl.returns import next_recorded, td_lambda_returns


@dataclass
class COMAConfig:
    """Hyperparameters of COMA. Steps count env steps."""

    rollout_steps: PositiveInt = 8  # vector steps collected per iteration
    batch_episodes: PositiveInt = 8  # fresh episodes per update
    lr: PositiveFloat = 5e-4
    critic_lr: PositiveFloat = 5e-4
    gamma: Probability = 0.99
    td_lambda: Probability = 0.8
    critic_steps: PositiveInt = 8  # critic gradient steps per batch before the actor step
    entropy_coef: NonNegativeFloat = 0.0  # bonus on the actors' softmax entropy over available actions
    entropy_final: NonNegativeFloat | None = None  # if set, entropy_coef moves linearly to this over the run
    # boltzmann: fit softmax(Q / temperature); expected: ascend sum_u pi(u) Q(u); sampled: log pi(u_a) A(u_a)
    policy_gradient: Literal["sampled", "expected", "boltzmann"] = "boltzmann"
    temperature: PositiveFloat = 0.02  # boltzmann: the actors fit softmax(Q / temperature) over available actions
    temperature_final: PositiveFloat | None = None  # if set, temperature moves linearly to this over the run
    lr_anneal: bool = False  # both learning rates decay linearly to 0 over train.schedule_steps
    reverse_kl_final: Probability = 1.0  # boltzmann: the reverse KL's share of the actors' loss grows to this
    target_update_interval: PositiveInt = 80  # critic updates between target copies (every 10 batches)
    epsilon_start: Probability = 0.5
    epsilon_finish: Probability = 0.01
    epsilon_anneal_steps: NonNegativeInt = 100_000
    policy: Literal["mlp", "gru"] = "gru"
    hidden_sizes: Widths = (64,)
    rnn_hidden: Width = 64
    critic_hidden: Width = 128
    share_params: bool = True
    agent_id: bool = True
    input_norm: bool = False
    max_grad_norm: PositiveFloat = 10.0
    max_episode_len: NonNegativeInt = 0  # 0: the env's own episode limit

    def budget_schedules(self) -> tuple[str, ...]:
        """The keys switched on whose values move over the run (core.trainer.BudgetScheduled)."""
        boltzmann = self.policy_gradient == "boltzmann"
        return tuple(key for key, on in (
            ("lr_anneal", self.lr_anneal), ("entropy_final", self.entropy_final is not None),
            ("temperature_final", boltzmann and self.temperature_final is not None),
            ("reverse_kl_final", boltzmann and self.reverse_kl_final > 0)) if on)


def epsilon_floor_policy(logits: torch.Tensor, avail: torch.Tensor, epsilon: float) -> torch.Tensor:
    """(1 - eps) softmax over available actions + eps uniform over available actions; zero elsewhere."""
    probs = torch.softmax(logits.masked_fill(~avail, -1e10), dim=-1)
    n_avail = avail.sum(-1, keepdim=True).clamp(min=1).float()
    probs = (1 - epsilon) * probs + epsilon * avail.float() / n_avail
    return probs * avail


def masked_entropy(logits: torch.Tensor, avail: torch.Tensor) -> torch.Tensor:
    """Entropy of the softmax over available actions (no epsilon floor), [...]."""
    logp = torch.log_softmax(logits.masked_fill(~avail, -1e10), dim=-1)
    return -(logp.exp() * logp * avail).sum(-1)


def counterfactual_advantage(
    q: torch.Tensor, probs: torch.Tensor, actions: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """COMA's advantage: Q(s, u)[u_a] - sum_u' pi(u') Q(s, (u^-a, u')); returns (advantage, baseline)."""
    baseline = (probs * q).sum(-1)
    taken = q.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    return taken - baseline, baseline


# -- the actors' objectives (`policy_gradient`): what each agent ascends at each step -----------------------
def counterfactual_objective(probs: torch.Tensor, actions: torch.Tensor, advantage: torch.Tensor) -> torch.Tensor:
    """The COMA paper's (`sampled`): log pi(u_a) A(u_a), the taken action's log-probability times its
    counterfactual advantage."""
    return torch.log(probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1).clamp(min=1e-10)) * advantage


def expected_objective(probs: torch.Tensor, q: torch.Tensor, baseline: torch.Tensor) -> torch.Tensor:
    """Expected policy gradients (`expected`; Ciosek & Whiteson 2018): sum_u pi(u) (Q(u) - b) over every action,
    the sampled gradient's expectation under the policy that chose the actions, without its sampling noise."""
    return (probs * (q - baseline.unsqueeze(-1))).sum(-1)


def boltzmann_log_likelihood(logits: torch.Tensor, avail: torch.Tensor, q: torch.Tensor, temperature: float
                             ) -> torch.Tensor:
    """sum_u w(u) log softmax(logits)(u) with w = softmax(Q / temperature) over available actions: what the actors
    ascend to fit the critic's Boltzmann policy (soft policy iteration's improvement step, as a forward KL). Its
    gradient in the logits, w - softmax, does not vanish where the actor has saturated, as the expected gradient's
    does."""
    target = torch.softmax((q / temperature).masked_fill(~avail, -1e10), dim=-1) * avail
    logp = torch.log_softmax(logits.masked_fill(~avail, -1e10), dim=-1)
    return (target * logp.masked_fill(~avail, 0.0)).sum(-1)


def boltzmann_reverse_kl(logits: torch.Tensor, avail: torch.Tensor, q: torch.Tensor, temperature: float
                         ) -> torch.Tensor:
    """KL(softmax(logits) || softmax(Q / temperature)) over available actions: the mode-seeking fit of the same
    target. Averaged over a batch its minimiser is softmax(E[Q] / temperature), whose argmax is the action best
    on average; the forward KL's, E[softmax(Q / temperature)], can spread its mass over equally good actions (three
    attack targets) so that its argmax is a fourth."""
    masked = logits.masked_fill(~avail, -1e10)
    logp = torch.log_softmax(masked, dim=-1).masked_fill(~avail, 0.0)
    log_target = torch.log_softmax((q / temperature).masked_fill(~avail, -1e10), dim=-1).masked_fill(~avail, 0.0)
    return (torch.softmax(masked, dim=-1) * avail * (logp - log_target)).sum(-1)


def boltzmann_objective(logits: torch.Tensor, avail: torch.Tensor, q: torch.Tensor, temperature: float,
                        reverse_share: float) -> torch.Tensor:
    """The default (`boltzmann`): (1 - m) forward fit - m reverse KL to softmax(Q / temperature), m the reverse KL's
    share. Chosen on smac_3m over ten seeds: the sampled and the expected gradients froze saturated actors, the
    forward fit alone left greedy policies that walked away on another float path (BENCHMARKS.md, "Why saturated
    actors stop learning, and the expected policy gradient", "COMA: the saturated actor cannot follow its critic"
    and "COMA on another float path: greedy actors that walk away, and a mode-seeking fit")."""
    objective = boltzmann_log_likelihood(logits, avail, q, temperature)
    if reverse_share > 0.0:
        objective = ((1.0 - reverse_share) * objective
                     - reverse_share * boltzmann_reverse_kl(logits, avail, q, temperature))
    return objective


class COMASchedule(NamedTuple):
    """COMA's settings that move over the run, at one point of it."""

    lr: float
    critic_lr: float
    temperature: float
    reverse_share: float  # the reverse KL's share of the Boltzmann objective
    entropy_coef: float


def coma_schedule(cfg: COMAConfig, progress: float) -> COMASchedule:
    """Every schedule of `cfg` at `progress` in [0, 1] of the run."""
    lr_scale = 1.0 - progress if cfg.lr_anneal else 1.0
    return COMASchedule(lr=cfg.lr * lr_scale, critic_lr=cfg.critic_lr * lr_scale,
                        temperature=linear_schedule(cfg.temperature, cfg.temperature_final, progress),
                        reverse_share=linear_schedule(0.0, cfg.reverse_kl_final, progress),
                        entropy_coef=linear_schedule(cfg.entropy_coef, cfg.entropy_final, progress))


@dataclass
class CriticView:
    """What the critic and the actors make of a batch, at its acting steps ([T, B, n, A] each but `acting`)."""

    q: torch.Tensor       # the critic's value of each of an agent's actions, the others' taken
    logits: torch.Tensor  # the actors' logits
    avail: torch.Tensor   # available actions
    acting: torch.Tensor  # [T, B, n]: a living agent at a recorded step


class COMA(EpisodeAgent[COMAConfig]):
    """COMA for a single agent group (every SMAC map; PettingZoo envs whose agents share spaces)."""

    def __init__(self, spec: EnvSpec, cfg: COMAConfig, device: str | torch.device = "cpu",
                 run: RunState | None = None) -> None:
        if len(spec.groups) != 1:
            raise UserError("coma needs agents with identical spaces (one group); this env has "
                            f"{len(spec.groups)}: use mappo, ippo, iql, vdn or qmix")
        self.spec, self.cfg, self.device = spec, cfg, torch.device(device)
        self.run = run or RunState()  # a training run passes its own (clock, seeded streams)
        self.group = g = spec.groups[0]
        self.actor = GroupActionNet(g, cfg).to(self.device)  # outputs action logits
        n, a = g.n_agents, g.n_actions
        critic_in = int(np.prod(spec.state_shape)) + int(np.prod(g.obs_shape)) + 2 * n * a + n
        self.critic = nn.Sequential(MultiLinear(1, critic_in, cfg.critic_hidden), nn.ReLU(),
                                    MultiLinear(1, cfg.critic_hidden, cfg.critic_hidden), nn.ReLU(),
                                    MultiLinear(1, cfg.critic_hidden, a, gain=1.0)).to(self.device)
        self.target_critic = copy.deepcopy(self.critic)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=cfg.lr)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=cfg.critic_lr)
        self.eye = torch.eye(n, device=self.device)
        self.critic_updates = 0

    @torch.no_grad()
    def act(self, obs: Mapping[str, np.ndarray], avail: Mapping[str, np.ndarray | None], state: np.ndarray,
            hidden: Mapping[str, Hidden], starts: np.ndarray, deterministic: bool = False,
            with_value: bool = True) -> dict[str, GroupAction]:
        name = self.group.name
        logits, h = self.actor(torch.as_tensor(obs[name], device=self.device)[None], hidden[name][0],
                               torch.as_tensor(starts, device=self.device)[None])
        mask = torch.as_tensor(avail[name], device=self.device)
        if deterministic:
            actions = logits[0].masked_fill(~mask, -torch.inf).argmax(-1)
        else:
            probs = epsilon_floor_policy(logits[0], mask, self.epsilon)
            actions = torch.distributions.Categorical(probs=probs, validate_args=False).sample()
        return {name: GroupAction(actions.cpu(), (h, h))}

    # -- learning ---------------------------------------------------------------------------------------
    def _critic_inputs(self, obs: torch.Tensor, state: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """[T, B, n, in]: state, own obs, other agents' actions (own zeroed), previous actions of all, id."""
        g = self.group
        t, b, n = actions.shape
        onehot = nn.functional.one_hot(actions, g.n_actions).float()  # [T, B, n, A]
        flat = onehot.reshape(t, b, 1, n * g.n_actions).expand(t, b, n, -1)
        own = (1 - self.eye).repeat_interleave(g.n_actions, dim=1)  # [n, n*A]: zero own slot
        previous = torch.cat([torch.zeros_like(flat[:1]), flat[:-1]], dim=0)
        return torch.cat([state.unsqueeze(2).expand(t, b, n, -1), obs.reshape(t, b, n, -1), flat * own, previous,
                          self.eye.expand(t, b, n, n)], dim=-1)

    def _actor_logits(self, obs: torch.Tensor) -> torch.Tensor:
        """The actors' logits over whole episodes [T, B, n, ...], from a zero hidden state."""
        h0 = torch.zeros(obs.shape[1], obs.shape[2], self.actor.net.rnn_hidden, device=self.device)
        return self.actor(obs, h0, None)[0]

    @torch.no_grad()
    def critic_view(self, batch: EpisodeBatch) -> CriticView:
        """The critic's action values and the actors' logits on a batch of whole episodes (for diagnostics:
        benchmarks/coma_critic_agreement.py)."""
        group = batch.groups[self.group.name]
        steps = group.actions.shape[0]
        return CriticView(q=self.critic(self._critic_inputs(group.obs[:steps], batch.state[:steps], group.actions)),
                          logits=self._actor_logits(group.obs[:steps]), avail=group.avail[:steps].bool(),
                          acting=(batch.mask.unsqueeze(-1) * group.alive[:-1]).bool())

    def update(self, batch: EpisodeBatch) -> dict[str, float]:
        """`critic_steps` critic steps, then one actor step on the objective `policy_gradient` names."""
        cfg = self.cfg
        schedule = coma_schedule(cfg, self.run.clock.progress)
        set_lr(self.actor_opt, schedule.lr)
        set_lr(self.critic_opt, schedule.critic_lr)
        group = batch.groups[self.group.name]
        actions = group.actions
        steps = actions.shape[0]
        obs, avail = group.obs[:steps], group.avail[:steps]
        inputs = self._critic_inputs(obs, batch.state[:steps], actions)
        critic_loss, critic_norm = self._train_critic(batch, inputs, actions)
        with torch.no_grad():
            q = self.critic(inputs)
        logits = self._actor_logits(obs)
        probs = epsilon_floor_policy(logits, avail, self.epsilon)
        advantage, baseline = counterfactual_advantage(q, probs.detach(), actions)
        if cfg.policy_gradient == "sampled":
            objective = counterfactual_objective(probs, actions, advantage)
        elif cfg.policy_gradient == "expected":
            objective = expected_objective(probs, q, baseline)
        else:
            objective = boltzmann_objective(logits, avail, q, schedule.temperature, schedule.reverse_share)
        weight = batch.mask.unsqueeze(-1) * group.alive[:-1]  # living agents' steps
        count = weight.sum().clamp(min=1.0)
        entropy = (masked_entropy(logits, avail) * weight).sum() / count
        actor_loss = -(objective * weight).sum() / count - schedule.entropy_coef * entropy
        self.actor_opt.zero_grad(set_to_none=True)
        actor_loss.backward()
        actor_norm = float(nn.utils.clip_grad_norm_(self.actor.parameters(), cfg.max_grad_norm))
        self.actor_opt.step()
        return {"loss/critic": critic_loss, "loss/policy": float(actor_loss.detach()),
                "loss/grad_norm_actor": actor_norm, "loss/grad_norm_critic": critic_norm,
                "train/advantage_mean": float((advantage * weight).sum() / count),
                "train/advantage_abs": float((advantage.abs() * weight).sum() / count),
                "train/entropy": float(entropy.detach()), "schedule/entropy_coef": schedule.entropy_coef,
                "schedule/temperature": schedule.temperature, "schedule/lr": schedule.lr}

    def _train_critic(self, batch: EpisodeBatch, inputs: torch.Tensor, actions: torch.Tensor) -> tuple[float, float]:
        """`critic_steps` steps towards TD(lambda) targets from the target critic's value of the next joint action;
        the last step's loss and gradient norm. Dead agents' steps count: their no-op value carries the team's
        return, and the target of an agent that dies at t + 1 bootstraps from it."""
        cfg, mask = self.cfg, batch.mask
        weight = mask.unsqueeze(-1).expand_as(actions)  # [T, B, n]
        with torch.no_grad():
            target_q = self.target_critic(inputs).gather(-1, actions.unsqueeze(-1)).squeeze(-1)  # [T, B, n]
            next_q = torch.cat([target_q[1:], torch.zeros_like(target_q[:1])], dim=0)
            continues = ((1.0 - batch.terminated) * next_recorded(mask)).unsqueeze(-1).expand_as(next_q)
            targets = td_lambda_returns(batch.reward.unsqueeze(-1).expand_as(next_q), continues, next_q, cfg.gamma,
                                        cfg.td_lambda)
        for _ in range(cfg.critic_steps):
            q_taken = self.critic(inputs).gather(-1, actions.unsqueeze(-1)).squeeze(-1)
            loss = ((q_taken - targets).square() * weight).sum() / weight.sum().clamp(min=1.0)
            self.critic_opt.zero_grad(set_to_none=True)
            loss.backward()
            norm = float(nn.utils.clip_grad_norm_(self.critic.parameters(), cfg.max_grad_norm))
            self.critic_opt.step()
            self.critic_updates += 1
            if self.critic_updates % cfg.target_update_interval == 0:
                self.target_critic.load_state_dict(self.critic.state_dict())
        return float(loss.detach()), norm

    def state_dict(self) -> dict:
        return {"actor": self.actor.state_dict(), "critic": self.critic.state_dict(),
                "target_critic": self.target_critic.state_dict(), "actor_opt": self.actor_opt.state_dict(),
                "critic_opt": self.critic_opt.state_dict(), "critic_updates": self.critic_updates}

    def load_state_dict(self, state: dict) -> None:
        self.actor.load_state_dict(state["actor"])
        self.critic.load_state_dict(state["critic"])
        self.target_critic.load_state_dict(state["target_critic"])
        self.actor_opt.load_state_dict(state["actor_opt"])
        self.critic_opt.load_state_dict(state["critic_opt"])
        set_lr(self.actor_opt, self.cfg.lr)  # the config's (a resumed run may change them)
        set_lr(self.critic_opt, self.cfg.critic_lr)
        self.critic_updates = int(state["critic_updates"])
