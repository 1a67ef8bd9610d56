"""COMA: hand-checked baseline, advantage and TD(lambda) targets; masks; learning on a small budget."""
import copy
import math
from dataclasses import replace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import envs
from marl.algos.coma import (
    COMA,
    COMAConfig,
    boltzmann_log_likelihood,
    boltzmann_reverse_kl,
    counterfactual_advantage,
    counterfactual_objective,
    epsilon_floor_policy,
    expected_objective,
    masked_entropy,
)
from marl.episode_batch import EpisodeBatch
from marl.episodes import OnPolicyEpisodeRunner
from marl.evaluation import evaluate
from marl.exploration import linear_schedule
from tests.drive import drive


def test_counterfactual_baseline_and_advantage_by_hand():
    q = torch.tensor([[1.0, 2.0, 3.0], [4.0, 0.0, 2.0]])
    probs = torch.tensor([[0.2, 0.3, 0.5], [0.5, 0.0, 0.5]])  # agent 1: action 1 unavailable
    advantage, baseline = counterfactual_advantage(q, probs, torch.tensor([2, 0]))
    torch.testing.assert_close(baseline, torch.tensor([0.2 + 0.6 + 1.5, 2.0 + 1.0]))
    torch.testing.assert_close(advantage, torch.tensor([3.0 - 2.3, 4.0 - 3.0]))


def test_expected_policy_gradient_is_the_sampled_gradients_expectation():
    """Two agents (one with actions 1 and 4 unavailable): the expected surrogate's gradient equals the sampled
    one's averaged over each agent's action, weighted by the probability of sampling it."""
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 5, generator=gen, requires_grad=True)
    avail = torch.tensor([[True, True, True, True, True], [True, False, True, True, False]])
    q = torch.randn(2, 5, generator=gen) * 3

    def grad(actions: torch.Tensor, expected: bool) -> tuple[torch.Tensor, torch.Tensor]:
        probs = epsilon_floor_policy(logits, avail, 0.1)
        advantage, baseline = counterfactual_advantage(q, probs.detach(), actions)
        objective = expected_objective(probs, q, baseline) if expected else counterfactual_objective(
            probs, actions, advantage)
        return torch.autograd.grad(objective.sum(), logits)[0], probs.detach()

    expected, _ = grad(torch.zeros(2, dtype=torch.long), True)  # the taken actions do not matter to it
    average = torch.zeros_like(expected)
    for u in range(5):
        actions = torch.full((2,), u)
        sampled, probs = grad(actions, False)
        average += probs.gather(-1, actions[:, None]) * sampled
    torch.testing.assert_close(expected, average)
    assert expected.abs().sum() > 0.1


def test_boltzmann_target_gradient_is_target_minus_policy_by_hand():
    """The actors' gradient towards softmax(Q / T) over the available actions is w - softmax(logits): it stays
    large for a better action the actor has all but ruled out (where the expected gradient is ~0)."""
    avail = torch.tensor([[True, True, False, True]])
    q = torch.tensor([[1.0, 1.2, 9.0, 0.8]])  # the unavailable action's value is ignored
    logits = torch.tensor([[10.0, -10.0, 0.0, 0.0]], requires_grad=True)  # saturated on action 0
    boltzmann_log_likelihood(logits, avail, q, 0.1).sum().backward()
    w = torch.tensor([math.exp(10.0), math.exp(12.0), 0.0, math.exp(8.0)])
    w = w / w.sum()
    p = torch.softmax(torch.tensor([10.0, -10.0, -1e10, 0.0]), -1)
    assert logits.grad is not None
    torch.testing.assert_close(logits.grad[0], w - p)
    assert logits.grad[0, 1] > 0.8 and logits.grad[0, 2] == 0
    same = logits.detach().requires_grad_()
    probs = epsilon_floor_policy(same, avail, 0.0)
    objective = expected_objective(probs, q, counterfactual_advantage(q, probs.detach(), torch.zeros(1).long())[1])
    assert abs(float(torch.autograd.grad(objective.sum(), same)[0][0, 1])) < 1e-6  # the expected gradient's


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(0.0, 1.0))
def test_epsilon_floor_policy_never_puts_mass_on_unavailable_actions(seed, epsilon):
    gen = torch.Generator().manual_seed(seed)
    avail = torch.rand(32, 6, generator=gen) < 0.5
    avail[:, 0] = True
    probs = epsilon_floor_policy(torch.randn(32, 6, generator=gen) * 5, avail, epsilon)
    assert (probs[~avail] == 0).all()
    torch.testing.assert_close(probs.sum(-1), torch.ones(32))
    assert (probs[avail] >= epsilon / 6 - 1e-6).all()


def test_masked_entropy_counts_available_actions_only():
    avail = torch.tensor([[True, True, False, True], [True, False, False, False]])
    uniform = masked_entropy(torch.zeros(2, 4), avail)
    torch.testing.assert_close(uniform, torch.tensor([math.log(3), 0.0]))
    logits = torch.tensor([[5.0, 0.0, 100.0, 0.0]], requires_grad=True)  # the unavailable logit is ignored
    entropy = masked_entropy(logits, avail[:1])
    assert 0 < float(entropy.detach()) < math.log(3)
    entropy.sum().backward()
    assert logits.grad is not None and logits.grad[0, 0] < 0 < logits.grad[0, 1] and logits.grad[0, 2] == 0


@pytest.mark.slow
def test_coma_learns_the_signal_game():
    """Random play scores 2.2, a perfect team 20; COMA passes 12 within 24k env steps."""
    torch.manual_seed(0)
    venv = envs.make_vec("examples.custom_env:make_env", n_envs=8, seed=0)
    agent = COMA(venv.spec, COMAConfig(epsilon_anneal_steps=8000, max_episode_len=10))
    drive(OnPolicyEpisodeRunner(agent, venv, agent.run), agent.run, 375)  # 24,000 env steps
    eval_env = envs.make_vec("examples.custom_env:make_env", n_envs=4)
    assert evaluate(agent, eval_env, 16, seed=3)["eval/return_mean"] > 12.0


def test_coma_rejects_heterogeneous_envs(tmp_path):
    from tests.test_cli import cli
    result = cli("--algo", "coma", "--env", "mpe_simple_speaker_listener", "--logdir", str(tmp_path))
    assert result.returncode == 2 and "coma needs agents with identical spaces" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def _death_env_batch(agent: COMA, venv) -> EpisodeBatch:
    """The first batch of whole episodes the runner would hand to `agent.update`."""
    return OnPolicyEpisodeRunner(agent, venv, agent.run).next_batch(agent.run.clock.advance)


def test_dead_agents_steps_are_in_the_critics_loss():
    """The collapse the COMA study found: with dead agents out of the critic's loss, the TD(lambda) target of an
    agent that dies next step bootstraps from a Q-value nobody trains. (The actors need no such care: a dead
    agent has one available action, so its log-probability is 0 and has no gradient.)"""
    torch.manual_seed(0)
    venv = envs.make_vec("tests.toy_envs:make_death_env", n_envs=2, seed=0, lifetimes=(1, 6), max_steps=6)
    # gamma 0: targets are the rewards, so what dead agents observe reaches the loss only through their own Q
    agent = COMA(venv.spec, COMAConfig(rollout_steps=6, batch_episodes=2, critic_steps=1, gamma=0.0,
                                       max_episode_len=6))
    batch = _death_env_batch(agent, venv)
    unit = batch.groups["unit"]
    dead = (unit.alive[:-1] == 0) & (batch.mask == 1).unsqueeze(-1)
    assert dead.any()
    obs = unit.obs.clone()
    obs[:-1][dead] += 5.0
    changed = replace(batch, groups={"unit": replace(unit, obs=obs)})
    losses = [copy.deepcopy(agent).update(b)["loss/critic"] for b in (batch, changed)]
    assert losses[1] != pytest.approx(losses[0], rel=1e-4)


def test_linear_schedule_moves_from_start_to_final_over_the_run():
    assert linear_schedule(0.05, None, 0.7) == 0.05
    assert linear_schedule(0.05, 0.01, 0.0) == 0.05
    assert linear_schedule(0.05, 0.01, 0.5) == pytest.approx(0.03)
    assert linear_schedule(0.05, 0.0, 1.0) == 0.0


def test_temperature_final_and_lr_anneal_follow_the_run():
    """Half-way through the budget: the Boltzmann temperature is half-way to temperature_final and both
    learning rates are at half their configured values."""
    venv = envs.make_vec("tests.toy_envs:make_death_env", n_envs=2, seed=0, lifetimes=(1, 6), max_steps=6)
    cfg = COMAConfig(rollout_steps=6, batch_episodes=2, critic_steps=1, max_episode_len=6, temperature=0.02,
                     temperature_final=0.004, lr_anneal=True, lr=4e-4, critic_lr=8e-4)
    agent = COMA(venv.spec, cfg)
    batch = _death_env_batch(agent, venv)
    agent.run.clock.total_steps = 2 * agent.run.clock.env_steps
    metrics = agent.update(batch)
    assert metrics["schedule/temperature"] == pytest.approx(0.012)
    assert metrics["schedule/lr"] == pytest.approx(2e-4)
    assert agent.critic_opt.param_groups[0]["lr"] == pytest.approx(4e-4)


def test_reverse_kl_is_kl_by_hand_and_fits_the_action_best_on_average():
    """One observation, five critic samples (the other agents' actions differ): moving (action 0) is worth 0.5
    in each; each attack (1-3) is worth 1.0 in one sample and 0.45 otherwise. The forward KL's fit goes to the
    action most often best (moving: 2 of 5), the reverse KL's to the action best on average (an attack: 0.56)."""
    q = torch.full((5, 4), 0.45)
    q[:, 0] = 0.5
    q[0, 1] = q[1, 2] = q[2, 3] = 1.0
    avail = torch.ones(5, 4, dtype=torch.bool)
    avail[4, 3] = False
    logits = torch.randn(5, 4)
    pi = torch.softmax(logits.masked_fill(~avail, -1e10), -1)
    w = torch.softmax((q / 0.5).masked_fill(~avail, -1e10), -1)
    by_hand = torch.where(avail, pi * (pi.clamp_min(1e-30).log() - w.clamp_min(1e-30).log()), 0.0).sum(-1)
    assert torch.allclose(boltzmann_reverse_kl(logits, avail, q, 0.5), by_hand, atol=1e-6)

    avail[4, 3] = True
    fits = {}
    for name, loss in (("forward", lambda x: -boltzmann_log_likelihood(x, avail, q, 0.01).mean()),
                       ("reverse", lambda x: boltzmann_reverse_kl(x, avail, q, 0.01).mean())):
        shared = torch.zeros(4, requires_grad=True)
        opt = torch.optim.Adam([shared], lr=0.05)
        for _ in range(400):
            opt.zero_grad()
            loss(shared.expand(5, 4)).backward()
            opt.step()
        fits[name] = int(shared.argmax())
    assert fits["forward"] == 0 and fits["reverse"] in (1, 2, 3)
