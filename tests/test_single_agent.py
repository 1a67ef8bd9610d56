"""Single-agent learners on gymnasium vector envs: time limits, replay buffer, n-step, learning, resume, CLI."""
import functools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import tests.single_toy_envs  # noqa: F401  (registers the toy envs)
from core.buffers import ReplayBuffer
from core.checkpoint import load_checkpoint
from core.run_state import RunState
from single_agent.agent import adam, adam_step
from single_agent.algos import get_algo
from single_agent.cli import run
from single_agent.mlp_backprop import Backprop, EnsembleBackprop, MLPBackprop
from single_agent.networks import LOG_STD_MAX, CriticEnsemble, mlp, squashed_sample
from single_agent.offpolicy import OffPolicyRunner, sample_transitions
from single_agent.onpolicy import RolloutRunner
from single_agent.vec_env import TransitionVecEnv
from tests.drive import drive

ROOT = Path(__file__).resolve().parent.parent


def make_agent(algo: str, env: TransitionVecEnv, **overrides):
    entry = get_algo(algo)
    cfg = entry.config_class(**{**entry.defaults, **overrides})
    return entry.agent_class(env.observation_space, env.action_space, cfg, "cpu", run=RunState(0, 10_000))


# -- time limits ----------------------------------------------------------------------------------------
def test_vec_env_returns_true_final_obs_and_keeps_terminated_and_truncated_apart():
    env = TransitionVecEnv("CartPole-v1", 2, max_episode_steps=3)
    env.reset(seed=0)
    for _ in range(2):
        tr = env.step(np.zeros(2, np.int64))
        assert tr.finished is None and not tr.truncated.any()
    last_obs = env.obs.copy()
    tr = env.step(np.zeros(2, np.int64))
    assert tr.truncated.all() and not tr.terminated.any()
    np.testing.assert_array_equal(tr.obs, last_obs)
    assert not np.allclose(tr.next_obs, env.obs)  # next_obs is the final observation, env.obs the reset one
    assert (np.abs(env.obs) <= 0.05).all()  # CartPole resets near zero
    assert tr.finished is not None
    np.testing.assert_array_equal(tr.finished.returns, [3.0, 3.0])
    np.testing.assert_array_equal(tr.finished.lengths, [3, 3])
    env.close()


def test_dqn_bootstraps_truncated_transitions_and_not_terminated_ones():
    """ConstantEnv under a 5-step TimeLimit, gamma 0.9: Q(continue) must reach 10, Q(stop) stay at 1."""
    torch.manual_seed(0)
    env = TransitionVecEnv("ConcertoConstant-v0", 4)
    agent = make_agent("dqn", env, gamma=0.9, lr=3e-3, tau=0.05, target_update_interval=1, learning_starts=64,
                       batch_size=64, epsilon_start=1.0, epsilon_finish=1.0, hidden_sizes=[32], iteration_steps=400)
    runner = OffPolicyRunner(agent, env, agent.run)
    drive(runner, runner.run, 10)
    done = runner.buffer.data["done"][: runner.buffer.size]
    terminated = runner.buffer.data["terminated"][: runner.buffer.size]
    assert (done & ~terminated).any() and terminated.any()  # both kinds of episode end were seen
    q = agent.q(torch.tensor([[0.5, -0.5]])).detach()[0]
    assert q[0] == pytest.approx(10.0, abs=0.8), q  # truncation treated as termination would give ~3.4
    assert q[1] == pytest.approx(1.0, abs=0.3), q   # bootstrapping a termination would give ~10
    env.close()


# -- hand-written gradients and the lean Adam step (the learners' fast paths: tests/test_single_reference.py) --
@pytest.mark.parametrize("kind", ["mlp", "ensemble"])
def test_backprop_matches_autograd(kind):
    torch.manual_seed(0)
    x = torch.randn(7, 5, requires_grad=True)
    backprop: Backprop
    if kind == "mlp":
        net = mlp(5, [16, 8], 3)
        grad_out, backprop, params = torch.randn(7, 3), MLPBackprop(net), list(net.parameters())
        out, x_in = net(x), x.detach()
    else:
        critic = CriticEnsemble(2, 3, 2, [16, 8])
        grad_out, backprop, params = torch.randn(2, 7, 1), EnsembleBackprop(critic), list(critic.parameters())
        out, x_in = critic(x[:, :3], x[:, 3:]).t()[..., None], x.detach().expand(2, -1, -1)
    expected = torch.autograd.grad((out * grad_out).sum(), [*params, x])
    got_out, inputs = backprop.forward(x_in)
    torch.testing.assert_close(got_out, out.detach())
    grads, input_grad = backprop.param_grads(inputs, grad_out), backprop.input_grad(inputs, grad_out)
    for got, want in zip([*grads, input_grad if kind == "mlp" else input_grad.sum(0)], expected, strict=True):
        torch.testing.assert_close(got, want)
    with pytest.raises(ValueError):
        MLPBackprop(mlp(5, [16], 3, activation="tanh"))


def test_squashed_sample_log_prob_is_the_tanh_transformed_gaussian():
    torch.manual_seed(0)
    out = torch.randn(256, 6, dtype=torch.float64)
    out[::4, 3:] += 2.0  # some log sigmas above LOG_STD_MAX, to exercise the clamp
    torch.manual_seed(1)
    action, log_prob, (_, _, in_range) = squashed_sample(out)
    mu, log_std = out.chunk(2, -1)
    torch.manual_seed(1)
    gaussian = torch.distributions.Normal(mu, log_std.clamp(max=LOG_STD_MAX).exp())
    u = gaussian.mean + torch.randn_like(mu) * gaussian.stddev
    torch.testing.assert_close(action, torch.tanh(u))
    exact = (u.abs() < 8).all(-1)  # rows where 1 - tanh(u)^2 is not lost to rounding in the reference
    expected = (gaussian.log_prob(u) - torch.log1p(-torch.tanh(u) ** 2)).sum(-1)
    torch.testing.assert_close(log_prob[exact], expected[exact])
    assert torch.equal(in_range, log_std <= LOG_STD_MAX) and not in_range[exact].all() and exact.sum() > 150


@pytest.mark.parametrize("fused", [True, False])
def test_adam_step_matches_torch_adam_with_clipping(fused):
    torch.manual_seed(0)
    ours, theirs = mlp(4, [8], 2), mlp(4, [8], 2)
    theirs.load_state_dict(ours.state_dict())
    make = adam if fused else functools.partial(torch.optim.Adam, foreach=False)
    opt_ours, opt_theirs = make(ours.parameters(), lr=0.01), make(theirs.parameters(), lr=0.01)
    assert bool(opt_ours.param_groups[0]["fused"]) == fused
    for step in range(4):
        x = torch.randn(16, 4) * (1 + 50 * (step % 2))  # every other step's gradient gets clipped
        adam_step(opt_ours, torch.autograd.grad(ours(x).pow(2).sum(), list(ours.parameters())), max_grad_norm=1.0)
        opt_theirs.zero_grad()
        theirs(x).pow(2).sum().backward()
        torch.nn.utils.clip_grad_norm_(theirs.parameters(), 1.0)
        opt_theirs.step()
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        torch.testing.assert_close(a, b)
    torch.testing.assert_close(opt_ours.state_dict(), opt_theirs.state_dict())


def test_ppo_value_bootstraps_from_the_final_observation_at_truncation():
    torch.manual_seed(0)
    env = TransitionVecEnv("ConcertoConstantBox-v0", 4)
    agent = make_agent("ppo", env, gamma=0.9, gae_lambda=0.95, n_steps=25, batch_size=50, n_epochs=10, lr=3e-3)
    drive(RolloutRunner(agent, env, agent.run), agent.run, 60)
    value = agent.value(np.array([[0.5, -0.5]], np.float32))[0]
    assert value == pytest.approx(10.0, abs=1.0)  # without bootstrapping at the time limit: about 3.4
    env.close()


# -- replay buffer ------------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(capacity=st.integers(1, 12), writes=st.lists(st.integers(0, 5), min_size=1, max_size=12))
def test_replay_buffer_holds_the_newest_items_and_round_trips(capacity, writes):
    layout = {"x": ((2,), np.float32), "obs": {"pos": ((3,), np.float32), "flag": ((), np.int64)}}
    buf = ReplayBuffer(capacity, layout)
    counter = 0
    for n in writes:
        ids = np.arange(counter, counter + n)
        buf.add({"x": np.repeat(ids[:, None], 2, 1), "obs": {"pos": np.repeat(ids[:, None], 3, 1), "flag": ids}}, n)
        counter += n
    expected = set(range(max(0, counter - capacity), counter))
    assert buf.size == len(expected)
    stored = buf.get(np.arange(buf.size))
    assert set(stored["obs"]["flag"].tolist()) == expected
    np.testing.assert_array_equal(stored["x"][:, 0], stored["obs"]["flag"])
    np.testing.assert_array_equal(stored["obs"]["pos"][:, 2], stored["obs"]["flag"])
    copy = ReplayBuffer(capacity, layout)
    copy.load_state(buf.state())
    assert (copy.size, copy.pos) == (buf.size, buf.pos)
    np.testing.assert_array_equal(copy.get(np.arange(copy.size))["obs"]["flag"], stored["obs"]["flag"])


def test_n_step_returns_by_hand():
    """2 envs; env 0 ends its episode at its 2nd step. Rewards are 1, 2, 3, ... per vector step."""
    buf = ReplayBuffer(16, {"reward": ((), np.float32), "terminated": ((), bool), "done": ((), bool),
                            "next_obs": ((1,), np.float32)})
    for t in range(4):
        end = np.array([t == 1, False])
        buf.add({"reward": np.full(2, t + 1.0), "terminated": end, "done": end,
                 "next_obs": np.array([[10 * t], [10 * t + 1]], np.float32)}, 2)

    class Fixed(np.random.Generator):
        def __init__(self, idx):
            self.idx = idx

        def integers(self, *args, **kwargs):
            return self.idx

    idx = np.array([0, 1, 4, 6, 7])  # env 0 @t0, env 1 @t0, env 0 @t2, env 0 @t3 (newest), env 1 @t3
    batch = sample_transitions(buf, 5, Fixed(idx), n_envs=2, gamma=0.5, n_step=3)
    np.testing.assert_allclose(batch["reward"], [1 + 0.5 * 2, 1 + 0.5 * 2 + 0.25 * 3, 3 + 0.5 * 4, 4, 4])
    np.testing.assert_allclose(batch["discount"], [0.0, 0.125, 0.25, 0.5, 0.5])  # the first ends terminated
    np.testing.assert_array_equal(batch["terminated"], [True, False, False, False, False])
    np.testing.assert_array_equal(batch["next_obs"][:, 0], [10, 21, 30, 30, 31])


def test_dict_observations_are_stored_as_dicts_and_learned_from():
    torch.manual_seed(0)
    env = TransitionVecEnv("ConcertoDict-v0", 4)
    agent = make_agent("dqn", env, learning_starts=200, batch_size=64, lr=1e-3, target_update_interval=50,
                       epsilon_anneal_steps=2000, iteration_steps=400, gamma=0.0)
    runner = OffPolicyRunner(agent, env, agent.run)
    drive(runner, runner.run, 8)
    assert set(runner.buffer.data["obs"]) == {"pos", "flag"}
    flags = np.arange(3)
    actions = agent.act({"pos": np.zeros((3, 2), np.float32), "flag": flags}, explore=False)
    np.testing.assert_array_equal(actions, flags)  # reward 1 only for echoing the flag
    env.close()


# -- learning on small budgets ----------------------------------------------------------------------------
def train(tmp_path, *args):
    summary = tmp_path / "summary.json"
    run(["--logdir", str(tmp_path), "--no-progress", "--summary-json", str(summary), "--seed", "0", *args])
    return json.loads(summary.read_text())


def best_eval_return(summary: dict) -> float:
    rows = (Path(summary["run_dir"]) / "metrics.csv").read_text().splitlines()
    return max(float(r.split(",")[3]) for r in rows if ",eval/return_mean," in r)


@pytest.mark.slow
def test_dqn_learns_cartpole(tmp_path):
    out = train(tmp_path, "--algo", "dqn", "--env", "CartPole-v1", "--steps", "10000", "train.eval_interval=2500",
                "hidden_sizes=[64,64]", "train_freq=64", "gradient_steps=64", "lr=0.001", "target_update_interval=64",
                "epsilon_anneal_steps=5000", "n_step=3")
    assert best_eval_return(out) >= 150  # random: about 22


@pytest.mark.slow
def test_ppo_learns_cartpole(tmp_path):
    out = train(tmp_path, "--algo", "ppo", "--env", "CartPole-v1", "--steps", "20000", "train.eval_interval=0")
    assert out["eval_return_mean"] >= 300  # random: about 22


def test_ou_exploration_noise_is_correlated_and_gaussian_is_not():
    env = TransitionVecEnv("Pendulum-v1", 2)
    spec = get_algo("td3")
    obs = env.reset(seed=0)
    lag1 = {}
    for noise_type in ("gaussian", "ou"):
        cfg = spec.config_class(**{**spec.defaults, "noise_type": noise_type, "action_noise": 0.5,
                                   "hidden_sizes": [8]})
        agent = spec.agent_class(env.observation_space, env.action_space, cfg)
        rng = np.random.default_rng(0)
        greedy = agent.act(obs, explore=False)
        noise = np.stack([agent.act(obs, explore=True, rng=rng) - greedy for _ in range(400)])[:, :, 0]
        lag1[noise_type] = np.corrcoef(noise[:-1].ravel(), noise[1:].ravel())[0, 1]
    assert abs(lag1["gaussian"]) < 0.2 and lag1["ou"] > 0.9, lag1
    assert agent.ou_state is not None  # the last agent above runs OU noise
    resumed = spec.agent_class(env.observation_space, env.action_space, cfg)
    resumed.load_state_dict(agent.state_dict())  # the OU process continues from its checkpointed state
    np.testing.assert_array_equal(resumed.act(obs, True, np.random.default_rng(1)),
                                  agent.act(obs, True, np.random.default_rng(1)))


@pytest.mark.slow
@pytest.mark.parametrize("algo, threshold", [("sac", -400), ("td3", -800), ("ddpg", -400)])
def test_continuous_learners_improve_on_pendulum(algo, threshold, tmp_path):
    out = train(tmp_path, "--algo", algo, "--env", "Pendulum-v1", "--steps", "5000", "learning_starts=1000",
                "hidden_sizes=[64,64]", "train.eval_interval=0")
    assert out["eval_return_mean"] >= threshold  # random: about -1200


# -- the command line ---------------------------------------------------------------------------------------
def cli(*args):
    code = "import sys; from single_agent.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, message", [
    (["--algo", "dqn", "--env", "NoSuchEnv-v0"], "unknown gymnasium env 'NoSuchEnv-v0'"),
    (["--algo", "dqn", "--env", "Pendulum-v1"], "dqn needs a Discrete action space, but the env's is Box"),
    (["--algo", "sac", "--env", "CartPole-v1"], "sac needs a continuous (Box) action space"),
    (["--algo", "a2c", "--env", "CartPole-v1"], "unknown algorithm 'a2c'; valid algorithms: ddpg, dqn, ppo, sac, td3"),
    (["--algo", "dqn", "--env", "CartPole-v1", "algo.n_stepz=3"], "unknown key algo.n_stepz; valid keys: "),
    (["--algo", "dqn", "--env", "CartPole-v1", "env.colour=3"], "cannot make gymnasium env 'CartPole-v1'"),
    (["--algo", "dqn", "--env", "CartPole-v1", "--target-reward", "high"], "argument --target-reward: invalid float"),
    (["--algo", "dqn", "--env", "CartPole-v1", "algo.tau=0"], "tau must be in (0, 1]"),
    (["--algo", "td3", "--env", "Pendulum-v1", "algo.noise_type=pink"], "noise_type must be one of gaussian, ou"),
    (["--algo", "dqn", "--env", "CartPole-v1", "train.matmul_precision=fp8"],
     "matmul_precision must be one of ieee, bf16, tf32, got 'fp8'"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, tmp_path):
    result = cli(*args, "--logdir", str(tmp_path))
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_run_dir_tags_target_reward_and_resume_with_the_replay_buffer_intact(tmp_path):
    quick = ["--algo", "dqn", "--env", "CartPole-v1", "--no-progress", "--logdir", str(tmp_path),
             "learning_starts=200", "iteration_steps=500", "train.eval_episodes=2", "train.eval_interval=500"]
    first = tmp_path / "first.json"
    run([*quick, "--steps", "1000", "--summary-json", str(first)])
    run_dir = Path(json.loads(first.read_text())["run_dir"])
    assert (run_dir / "config.yaml").is_file() and (run_dir / "metrics.csv").is_file()
    tags = EventAccumulator(str(run_dir)).Reload().Tags()["scalars"]
    for tag in ("eval/return_mean", "train/episode_return", "loss/q", "schedule/epsilon", "perf/steps_per_second"):
        assert tag in tags
    half = run_dir / "checkpoints" / "step-000001000"
    torch.load(half / "tensors.pt", weights_only=True)
    saved = load_checkpoint(half)[0]["runner"]["buffer"]
    assert len(saved["buffer/reward"]) == 1000

    second = tmp_path / "second.json"
    # torch.backends.mkldnn gains `matmul` at import (a module subclass), which its stubs do not show
    precision = torch.backends.mkldnn.matmul.fp32_precision  # type: ignore[attr-defined]
    run([*quick, "--steps", "2000", "--resume", str(run_dir), "--summary-json", str(second),
         "train.matmul_precision=bf16"])
    assert torch.backends.mkldnn.matmul.fp32_precision == precision  # type: ignore[attr-defined]  # mode undone
    out = json.loads(second.read_text())
    assert out["env_steps"] == 2000
    final = load_checkpoint(Path(out["run_dir"]) / "checkpoints" / "step-000002000")[0]["runner"]["buffer"]
    assert len(final["buffer/reward"]) == 2000
    for key in ("obs", "action", "reward", "next_obs", "terminated", "done"):  # CartPole resumes exactly
        np.testing.assert_array_equal(final[f"buffer/{key}"][:1000], saved[f"buffer/{key}"])

    assert np.float32(1e-39) * np.float32(1.0) != 0  # denormals are flushed only while training

    stopped = tmp_path / "stopped.json"
    run([*quick, "--steps", "50000", "--target-reward", "0", "--summary-json", str(stopped)])
    assert json.loads(stopped.read_text())["env_steps"] == 500  # stopped at the first evaluation
