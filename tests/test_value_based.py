"""IQL/VDN/QMIX and the episode replay buffer: learning, targets, masks, monotonic mixing, buffer behaviour."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import envs
from core.buffers import EpisodeReplayBuffer
from core.checkpoint import load_checkpoint
from core.run_state import RunState
from marl.algos.value_decomposition import ValueDecomposition, ValueDecompositionConfig
from marl.episodes import ReplayEpisodeRunner
from marl.evaluation import evaluate
from marl.mixers import QMixer
from marl.networks import AgentNet
from tests.drive import drive


def test_episode_buffer_ring_sampling_and_state_roundtrip():
    buf = EpisodeReplayBuffer(3, 4, {"x": ((2,), np.dtype(np.float32), True), "r": ((), np.dtype(np.float32), False)})
    for k in range(4):  # the 4th episode overwrites the 1st
        buf.add({"x": np.full((1, 5, 2), k, np.float32), "r": np.full((1, 4), k, np.float32)}, np.array([k + 1]))
    assert buf.size == 3 and sorted(buf.lengths.tolist()) == [2, 3, 4]
    batch, mask = buf.sample(64, np.random.default_rng(0))
    assert batch["x"].shape[1] == batch["r"].shape[1] + 1 == mask.shape[1] + 1
    lengths = mask.sum(1)
    np.testing.assert_array_equal(lengths, batch["r"][:, 0] + 1)  # episode k has length k + 1
    other = EpisodeReplayBuffer(3, 4, {"x": ((2,), np.dtype(np.float32), True), "r": ((), np.dtype(np.float32), False)})
    other.load_state(buf.state())
    np.testing.assert_array_equal(other.data["x"], buf.data["x"])
    assert (other.size, other.pos) == (buf.size, buf.pos)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_qmix_mixing_is_monotonic_in_every_agent_utility(seed):
    torch.manual_seed(seed)
    mixer = QMixer(4, 6)
    qs = torch.randn(16, 4, requires_grad=True)
    mixer(qs, torch.randn(16, 6)).sum().backward()
    assert qs.grad is not None and (qs.grad >= 0).all()


@pytest.mark.parametrize("mixer", ["none", "vdn", "qmix"])
def test_value_based_agents_learn_the_signal_game(mixer):
    """Episode return sums both agents: random play scores 2.2, a perfect team 20."""
    torch.manual_seed(0)
    venv = envs.make_vec("examples.custom_env:make_env", n_envs=8, seed=0)
    cfg = ValueDecompositionConfig(
        mixer=mixer, epsilon_anneal_steps=3000, max_episode_len=10, target_update_interval=50, rollout_steps=8
    )
    agent = ValueDecomposition(venv.spec, cfg)
    drive(ReplayEpisodeRunner(agent, venv, agent.run), agent.run, 160)  # 10,240 env steps, 160 updates: seeds 0-4
    # of IQL, VDN and QMIX end at 20/20 here; with half the updates (16 rollout steps) QMIX ended at 10.4-20
    eval_env = envs.make_vec("examples.custom_env:make_env", n_envs=4)
    assert evaluate(agent, eval_env, 16, seed=3)["eval/return_mean"] > 16.0


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 1.0))
def test_exploration_never_takes_unavailable_actions(seed, epsilon):
    venv = envs.make_vec("tests.toy_envs:make_death_env", n_envs=3, seed=seed)
    cfg = ValueDecompositionConfig(epsilon_start=epsilon, epsilon_finish=epsilon, max_episode_len=6)
    agent = ValueDecomposition(venv.spec, cfg, run=RunState(seed))
    step = venv.reset(seed=seed)
    for _ in range(6):
        out = agent.act(step.group_obs, step.group_avail, step.state, agent.initial_hidden(3), np.ones(3, bool))
        actions = out["unit"].actions.numpy()
        assert np.take_along_axis(step.group_avail["unit"], actions[..., None], -1).all()
        step = venv.step({"unit": actions})


def test_truncated_episodes_store_the_final_observation_and_not_terminated():
    venv = envs.make_vec("tests.toy_envs:make_death_env", n_envs=1, seed=0, lifetimes=(2, 100), max_steps=3)
    cfg = ValueDecompositionConfig(max_episode_len=3, rollout_steps=3, learning_starts=99)
    agent = ValueDecomposition(venv.spec, cfg)
    runner = ReplayEpisodeRunner(agent, venv, agent.run)
    drive(runner, agent.run, 1)
    buf = runner.buffer
    assert buf.size == 1 and buf.lengths[0] == 3
    obs = buf.data["obs/unit"][0]  # [T+1, agents, 3]: obs = [unit index, t, offset]
    np.testing.assert_array_equal(obs[:, 1, 1], [0, 1, 2, 3])  # the final obs (t=3) is kept for bootstrapping
    assert not buf.data["terminated"][0].any()  # truncated, not terminated
    np.testing.assert_array_equal(buf.data["alive/unit"][0][:, 0], [True, True, False, False])  # unit_0 died at t=2


@pytest.mark.parametrize("td_lambda", [0.0, 0.6])
def test_iql_targets_bootstrap_through_a_death_and_dead_slots_are_learnt(td_lambda):
    """A unit's TD target at its last step alive bootstraps from Q(its dead slot), not r alone (which would cut its
    return at its death and leave it the team reward it lived to see); the dead slot's own Q is learnt too."""
    venv = envs.make_vec("tests.toy_envs:make_death_env", n_envs=1, seed=0, lifetimes=(1, 100), max_steps=3)
    cfg = ValueDecompositionConfig(mixer="none", max_episode_len=3, rollout_steps=3, learning_starts=99, gamma=0.5,
                                   td_lambda=td_lambda)
    agent = ValueDecomposition(venv.spec, cfg)
    runner = ReplayEpisodeRunner(agent, venv, agent.run)
    drive(runner, agent.run, 1)
    batch = runner.sample(1, np.random.default_rng(0))
    assert batch.groups["unit"].alive[:, 0, 0].tolist() == [1, 0, 0, 0]  # unit_0 dies at its first step
    c = 4.0  # every Q-value of the online and target nets
    with torch.no_grad():
        for net in (agent.nets, agent.target_nets):
            for p in net.parameters():
                p.zero_()
            for module in net.modules():
                if isinstance(module, AgentNet):
                    module.head.bias.fill_(c)
    reward = batch.reward[:, 0].tolist()  # truncated after 3 steps: every step bootstraps, for both slots
    targets, follow = [], c  # TD(lambda) by hand, from the final observation's value back
    for r in reward[::-1]:
        follow = r + cfg.gamma * ((1 - td_lambda) * c + td_lambda * follow)
        targets.append(follow)
    expected = float(np.mean([(c - target) ** 2 for target in targets]))
    assert agent.update(batch)["loss/td"] == pytest.approx(expected, rel=1e-5)


def test_qmix_checkpoint_keeps_the_replay_buffer_and_resume_continues(tmp_path):
    import json
    from pathlib import Path

    from marl.cli import main
    args = ["--algo", "qmix", "--env", "examples.custom_env:make_env", "--n-envs", "2", "--no-progress",
            "--logdir", str(tmp_path), "train.eval_episodes=2", "train.eval_envs=2", "max_episode_len=10",
            "learning_starts=4", "batch_size=4", "rollout_steps=8"]
    assert main([*args, "--steps", "200", "--summary-json", str(tmp_path / "a.json")]) == 0
    run_dir = Path(json.loads((tmp_path / "a.json").read_text())["run_dir"])
    ckpt = run_dir / "checkpoints" / "step-000000208"
    buffer = load_checkpoint(ckpt)[0]["runner"]["buffer"]
    assert len(buffer["buffer/lengths"]) == 20  # 208 steps / 10-step episodes, 2 envs: 20 finished
    assert main([*args, "--steps", "400", "--resume", str(run_dir), "--summary-json", str(tmp_path / "b.json")]) == 0
    assert json.loads((tmp_path / "b.json").read_text())["env_steps"] == 400
