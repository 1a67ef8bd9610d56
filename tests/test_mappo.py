"""MAPPO/IPPO: masks, shapes, variants, and learning on small budgets (these fail if learning breaks)."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import envs
from core.normalizers import EMANormalizer, RunningNormalizer
from core.run_state import RunState
from marl.algos.mappo import MAPPO, MAPPOConfig
from marl.distributions import MaskedCategorical
from marl.evaluation import RandomAgent, evaluate
from marl.onpolicy import OnPolicyCollector, OnPolicyRunner
from tests.drive import drive


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 7))
def test_masked_sampling_never_picks_unavailable_actions(seed, n_actions):
    gen = torch.Generator().manual_seed(seed)
    avail = torch.rand(64, n_actions, generator=gen) < 0.5
    avail[torch.arange(64), torch.randint(0, n_actions, (64,), generator=gen)] = True
    logits = torch.randn(64, n_actions, generator=gen) * 10
    dist = MaskedCategorical(logits, avail)
    for _ in range(5):
        assert avail.gather(1, dist.sample()[:, None]).all()
    assert avail.gather(1, dist.mode()[:, None]).all()
    assert torch.isfinite(dist.entropy()).all()
    probs = dist.dist.probs
    assert (probs[~avail] == 0).all()


def train(agent, venv, iterations):
    return drive(OnPolicyRunner(agent, venv, agent.run), agent.run, iterations)


@pytest.mark.parametrize(("critic_input", "agent_specific"), [("state", True), ("state", False), ("obs", False)])
def test_mappo_and_ippo_learn_the_signal_game(critic_input, agent_specific):
    """Episode return sums both agents' rewards: random play scores 10 * 2 / 9 = 2.2, a perfect team 20."""
    torch.manual_seed(0)
    venv = envs.make_vec("examples.custom_env:make_env", n_envs=8, seed=0)
    eval_env = envs.make_vec("examples.custom_env:make_env", n_envs=4)
    cfg = MAPPOConfig(rollout_steps=20, ppo_epochs=4, lr=3e-3, critic_lr=3e-3, critic_input=critic_input,
                      agent_specific_state=agent_specific)
    agent = MAPPO(venv.spec, cfg)
    random = evaluate(RandomAgent(venv.spec, seed=0), eval_env, 32, seed=123)["eval/return_mean"]
    train(agent, venv, 40)  # 6,400 env steps
    learned = evaluate(agent, eval_env, 32, seed=123)["eval/return_mean"]
    assert random < 3.5
    assert learned > 16.0, (random, learned)


@pytest.mark.slow
def test_gru_policy_learns_and_handles_deaths():
    torch.manual_seed(0)
    venv = envs.make_vec("examples.custom_env:make_env", n_envs=8, seed=1, n_agents=3)
    cfg = MAPPOConfig(rollout_steps=20, chunk_len=5, ppo_epochs=4, lr=3e-3, critic_lr=3e-3, policy="gru",
                      share_params=False, num_minibatches=2)
    agent = MAPPO(venv.spec, cfg)
    train(agent, venv, 40)
    eval_env = envs.make_vec("examples.custom_env:make_env", n_envs=4, n_agents=3)
    assert evaluate(agent, eval_env, 16, seed=5)["eval/return_mean"] > 21.0  # 3 agents: perfect 30, random 1.1
    # deaths, masks in obs dicts, truncation: runs and produces finite losses
    death = envs.make_vec("tests.toy_envs:make_death_env", n_envs=3, seed=0)
    metrics = train(MAPPO(death.spec, cfg), death, 2)
    assert all(np.isfinite(v) for v in metrics.values())


def test_box_actions_on_continuous_mpe():
    venv = envs.make_vec("mpe_simple_spread", n_envs=2, seed=0, continuous_actions=True)
    group = venv.spec.groups[0]
    assert not group.discrete and group.n_actions == 5
    agent = MAPPO(venv.spec, MAPPOConfig(rollout_steps=25, ppo_epochs=2))
    metrics = train(agent, venv, 2)
    assert np.isfinite(metrics["loss/policy"])
    out = agent.act(venv.reset().group_obs, {"agent": None}, venv.reset().state, agent.initial_hidden(2),
                    np.ones(2, bool), deterministic=True)
    assert out["agent"][0].shape == (2, 3, 5)


def test_dead_agents_are_out_of_the_policy_loss_but_their_values_are_learnt():
    """A dead agent's obs, log-prob and advantage do not move the policy loss or the entropy; its return moves the
    value loss (the returns of agents that die bootstrap from their slots' values)."""
    venv = envs.make_vec("tests.toy_envs:make_death_env", n_envs=2, seed=0, lifetimes=(1, 6), max_steps=6)
    agent = MAPPO(venv.spec, MAPPOConfig(rollout_steps=6, ppo_epochs=1, value_norm=False, advantage_norm=False))
    batch = OnPolicyCollector(agent, venv, 6, 0.99, 0.95, RunState()).collect(lambda n, finished: None)
    gb = batch.groups["unit"]
    dead = ~gb.alive
    assert dead.any() and gb.alive.any()

    def losses() -> tuple[float, float, float]:
        out = agent._minibatch_loss(*agent._prepare(batch))
        return float(out["policy"]), float(out["entropy"]), float(out["value"])

    policy, entropy, value = losses()
    gb.obs[dead] = 123.0
    gb.logp[dead] = -50.0
    gb.advantages[dead] = 1e6
    assert losses()[:2] == pytest.approx((policy, entropy), rel=1e-6)
    gb.returns[dead] = -1e6
    assert losses()[2] > 1e3 * value
    gb.advantages[~dead] += 1.0  # a change to a live agent's data does move the policy loss
    assert losses()[0] != pytest.approx(policy, rel=1e-6)


@pytest.mark.parametrize("minibatches", [1, 2])
def test_the_ema_value_normalizer_moves_on_every_minibatch_of_every_epoch(minibatches):
    """value_normalizer ema (the MAPPO code's ValueNorm) takes one step per minibatch per epoch on that minibatch's
    returns; with one minibatch every step sees the whole batch, so the debiased mean is the returns' mean."""
    venv = envs.make_vec("tests.toy_envs:make_death_env", n_envs=2, seed=0, lifetimes=(1, 6), max_steps=6)
    beta, epochs = 0.99999, 3
    cfg = MAPPOConfig(rollout_steps=6, ppo_epochs=epochs, num_minibatches=minibatches, value_normalizer="ema")
    agent = MAPPO(venv.spec, cfg)
    batch = OnPolicyCollector(agent, venv, 6, 0.99, 0.95, RunState()).collect(lambda n, finished: None)
    returns = batch.groups["unit"].returns.double()
    agent.update(batch)
    norm = agent.value_norm["unit"]
    assert isinstance(norm, EMANormalizer)
    assert float(norm.debias) == pytest.approx(1 - beta ** (epochs * minibatches), rel=1e-9)
    if minibatches == 1:
        mean, var = norm.mean_var()
        assert float(mean) == pytest.approx(float(returns.mean()), rel=1e-6)
        assert float(var) == pytest.approx(max(float(returns.var(unbiased=False)), 0.01), rel=1e-5)
    running = MAPPO(venv.spec, MAPPOConfig(rollout_steps=6, ppo_epochs=epochs, num_minibatches=minibatches))
    running.update(batch)
    running_norm = running.value_norm["unit"]
    assert isinstance(running_norm, RunningNormalizer)
    assert float(running_norm.count) == pytest.approx(returns.numel())  # today's: once per rollout


def _returns(monkeypatch, lifetimes: tuple[int, ...], max_steps: int, steps: int, lam: float = 1.0,
             lambda_after_death: float | None = None) -> torch.Tensor:
    """Returns [T, agents] of env 0 with gamma 0.5 and lambda `lam`, the critic's value of every final state 8."""
    venv = envs.make_vec("tests.toy_envs:make_death_env", n_envs=1, seed=0, lifetimes=lifetimes, max_steps=max_steps)
    agent = MAPPO(venv.spec, MAPPOConfig(rollout_steps=steps, gamma=0.5, gae_lambda=lam, value_norm=False))
    collector = OnPolicyCollector(agent, venv, steps, 0.5, lam, RunState(), lambda_after_death)
    monkeypatch.setattr(agent, "value", lambda group, obs, state, h, starts: torch.full((obs.shape[0], 2), 8.0))
    return collector.collect(lambda n, finished: None).groups["unit"].returns[:, 0]


def test_truncated_episodes_bootstrap_and_an_agents_death_does_not_end_its_return(monkeypatch):
    """Agent i gets reward i + t at step t while alive, 0 once dead; the episode is truncated after step 3."""
    ret = _returns(monkeypatch, lifetimes=(2, 100), max_steps=3, steps=3)
    # unit_1 (reward 4 at t=3) is truncated after step 3 and bootstraps: G2 = 4 + 0.5*8
    assert ret[2, 1].item() == pytest.approx(4.0 + 4.0)
    # unit_0 (rewards 1, 2) dies after step 2; its slot still bootstraps at the truncation: G2 = 0 + 0.5*8,
    # G1 = 2 + 0.5*4, G0 = 1 + 0.5*4
    assert ret[:, 0].tolist() == pytest.approx([3.0, 4.0, 4.0])


def test_with_lambda_1_after_death_no_dead_slots_value_is_a_target(monkeypatch):
    """lambda 0 (one-step targets), unit_0 (rewards 1, 2) dies after step 2, the episode is truncated after step 3:
    with lambda 1 after death its last step alive bootstraps from its slot's own return, not its dead slot's value."""
    ret = _returns(monkeypatch, lifetimes=(2, 100), max_steps=3, steps=3, lam=0.0, lambda_after_death=1.0)
    # G2 = 0 + 0.5*8 (the truncation's final value), G1 = 2 + 0.5*G2, not 2 + 0.5*(the critic's value at step 2)
    assert ret[1:, 0].tolist() == pytest.approx([4.0, 4.0])
    one_step = _returns(monkeypatch, lifetimes=(2, 100), max_steps=3, steps=3, lam=0.0)
    assert one_step[1, 0].item() != pytest.approx(4.0) and one_step[2, 0].item() == pytest.approx(4.0)


def test_a_truncation_without_bootstrap_is_a_termination(monkeypatch):
    """bootstrap_truncated False (the MAPPO code's use_proper_time_limits False): an episode cut by the time limit
    after step 3 gets the advantages and returns of the same episode terminated there; with the bootstrap its last
    step adds gamma x the final state's value (8)."""

    def rollout(lifetimes: tuple[int, ...], max_steps: int, bootstrap_truncated: bool) -> tuple[torch.Tensor, ...]:
        venv = envs.make_vec("tests.toy_envs:make_death_env", n_envs=1, seed=0, lifetimes=lifetimes,
                             max_steps=max_steps)
        torch.manual_seed(0)  # the same critic, so the same values along both episodes
        agent = MAPPO(venv.spec, MAPPOConfig(rollout_steps=3, value_norm=False))
        collector = OnPolicyCollector(agent, venv, 3, 0.5, 0.9, RunState(), bootstrap_truncated=bootstrap_truncated)
        monkeypatch.setattr(agent, "value", lambda group, obs, state, h, starts: torch.full((obs.shape[0], 2), 8.0))
        gb = collector.collect(lambda n, finished: None).groups["unit"]
        return gb.advantages, gb.returns, gb.values

    terminated = rollout((3, 3), 100, bootstrap_truncated=True)  # both units die at step 3: terminated
    cut = rollout((100, 100), 3, bootstrap_truncated=False)  # the time limit at step 3: truncated
    for a, b in zip(terminated, cut, strict=True):
        torch.testing.assert_close(a, b)
    advantages, returns, values = rollout((100, 100), 3, bootstrap_truncated=True)
    torch.testing.assert_close(values, terminated[2])
    torch.testing.assert_close(returns[2] - terminated[1][2], torch.full((1, 2), 0.5 * 8.0))
    assert (advantages != terminated[0]).all()  # the bootstrap reaches every step through GAE
    venv = envs.make_vec("tests.toy_envs:make_death_env", n_envs=1, seed=0)
    runner = OnPolicyRunner(MAPPO(venv.spec, MAPPOConfig(bootstrap_truncated=False)), venv, RunState())
    assert runner.collector.bootstrap_truncated is False  # the config reaches the collector


def test_the_agent_specific_critic_sees_the_state_then_its_own_obs_then_its_id():
    venv = envs.make_vec("smac_3m", n_envs=1, seed=0)
    group = venv.spec.groups[0]
    net = MAPPO(venv.spec, MAPPOConfig()).nets[group.name]  # MAPPO's default: agent_specific_state
    n, state_dim, obs_dim = group.n_agents, int(np.prod(venv.spec.state_shape)), int(np.prod(group.obs_shape))
    obs, state = torch.randn(5, n, *group.obs_shape), torch.randn(5, *venv.spec.state_shape)
    x = net.critic_input(obs, state)
    assert x.shape == (5, n, state_dim + obs_dim + n)
    for agent in range(n):
        assert torch.equal(x[:, agent, :state_dim], state.reshape(5, -1))
        assert torch.equal(x[:, agent, state_dim:-n], obs[:, agent].reshape(5, -1))
        assert torch.equal(x[:, agent, -n:], torch.eye(n)[agent].expand(5, n))
    plain = MAPPO(venv.spec, MAPPOConfig(agent_specific_state=False)).nets[group.name]
    assert torch.equal(plain.critic_input(obs, state), torch.cat([x[..., :state_dim], x[..., -n:]], dim=-1))


@pytest.mark.parametrize(("algo", "after_death"), [("mappo", 0.95), ("ippo", 1.0)])
def test_only_a_critic_that_cannot_see_the_team_runs_returns_past_deaths_with_lambda_1(algo, after_death):
    venv = envs.make_vec("tests.toy_envs:make_death_env", n_envs=1, seed=0)
    cfg = MAPPOConfig(critic_input="obs" if algo == "ippo" else "state", gae_lambda=0.95)
    runner = OnPolicyRunner(MAPPO(venv.spec, cfg), venv, RunState())
    assert runner.collector.lambda_after_death == after_death


def test_terminated_episodes_do_not_bootstrap(monkeypatch):
    """Both agents die after step 2: the episode terminates, nothing after it counts."""
    ret = _returns(monkeypatch, lifetimes=(2, 2), max_steps=5, steps=2)
    assert ret[:, 0].tolist() == pytest.approx([1.0 + 0.5 * 2.0, 2.0])
    assert ret[:, 1].tolist() == pytest.approx([2.0 + 0.5 * 3.0, 3.0])


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["mappo", "ippo"])
def test_learns_mpe_simple_spread_on_a_small_budget(algo, tmp_path):
    """40k env steps with fast-start settings (shorter rollouts, higher learning rate; the defaults learn
    further over 300k steps): seeds 0-2 reach -57..-63 where the random policy scores -73.6."""
    from marl.cli import run
    summary = run(["--algo", algo, "--env", "mpe_simple_spread", "--steps", "40000", "--seed", "1", "--no-progress",
                   "--logdir", str(tmp_path), "train.eval_interval=0", "rollout_steps=50", "lr=0.002",
                   "critic_lr=0.002"])
    assert summary["eval_return_mean"] > -66.0, summary


def test_gru_state_is_reset_at_episode_starts():
    from marl.networks import AgentNet
    torch.manual_seed(0)
    net = AgentNet(1, 4, 3, (8,), recurrent=True, rnn_hidden=6)
    x = torch.randn(2, 5, 2, 4)  # [L, B, agents, features]
    h0 = torch.randn(5, 2, 6)
    out, _ = net(x, h0, torch.tensor([[False] * 5, [True] * 5]))
    fresh, _ = net(x[1:], torch.zeros(5, 2, 6), None)
    torch.testing.assert_close(out[1], fresh[0])
    carried, _ = net(x, h0, None)
    assert not torch.allclose(carried[1], fresh[0])


def test_lr_anneal_decays_both_learning_rates_linearly_over_the_budget():
    venv = envs.make_vec("tests.toy_envs:make_death_env", n_envs=2, seed=0, lifetimes=(1, 6), max_steps=6)
    run = RunState(total_steps=1000)
    agent = MAPPO(venv.spec, MAPPOConfig(rollout_steps=6, ppo_epochs=1, lr=1e-3, critic_lr=2e-3, lr_anneal=True),
                  run=run)
    batch = OnPolicyCollector(agent, venv, 6, 0.99, 0.95, RunState()).collect(lambda n, finished: None)
    run.clock.env_steps = 750
    agent.update(batch)
    assert [g["lr"] for g in agent.optimizer.param_groups] == pytest.approx([2.5e-4, 5e-4])
    fixed = MAPPO(venv.spec, MAPPOConfig(rollout_steps=6, ppo_epochs=1, lr=1e-3, critic_lr=2e-3), run=run)
    fixed.update(batch)
    assert [g["lr"] for g in fixed.optimizer.param_groups] == [1e-3, 2e-3]


def test_entropy_final_moves_the_entropy_bonus_linearly_over_the_budget():
    venv = envs.make_vec("tests.toy_envs:make_death_env", n_envs=2, seed=0, lifetimes=(1, 6), max_steps=6)
    run = RunState(total_steps=1000)
    agent = MAPPO(venv.spec, MAPPOConfig(rollout_steps=6, ppo_epochs=1, entropy_coef=0.05, entropy_final=0.01),
                  run=run)
    batch = OnPolicyCollector(agent, venv, 6, 0.99, 0.95, RunState()).collect(lambda n, finished: None)
    run.clock.env_steps = 250
    assert agent.update(batch)["schedule/entropy_coef"] == pytest.approx(0.04)
    run.clock.env_steps = 1000
    assert agent.update(batch)["schedule/entropy_coef"] == pytest.approx(0.01)
