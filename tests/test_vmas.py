"""vmas_<scenario> (issue 45): VMAS's batch as a natively batched vector env."""
import numpy as np
import pytest
from gymnasium import spaces

import envs
from core.errors import UnknownNameError, UserError
from envs.vmas_env import VMASVecEnv

vmas = pytest.importorskip("vmas")
torch = pytest.importorskip("torch")


def uniform_actions(venv, rng):
    return {g.name: rng.uniform(-1.5, 1.5, (venv.n_envs, g.n_agents, *g.action_shape)).astype(np.float32)
            for g in venv.spec.groups}


def test_the_batch_is_the_packages_own_batch_stepped_by_hand():
    """Observations, rewards, ends and same-step resets equal VMAS's env driven directly with the same actions
    (clipped to the agents' range), over episodes cut at 7 steps. The two run one after the other: VMAS keeps
    one random state for all its envs."""
    n, steps = 6, 30
    venv = VMASVecEnv("balance", n_envs=n, seed=3, max_steps=7)
    rng = np.random.default_rng(0)
    actions = [uniform_actions(venv, rng) for _ in range(steps)]
    ours = [{k: v.copy() for k, v in venv.reset().arrays.items()}]
    for act in actions:
        ours.append({k: v.copy() for k, v in venv.step(act).arrays.items()})
    raw = vmas.make_env("balance", num_envs=n, seed=3, max_steps=7, terminated_truncated=True)
    obs = raw.reset(seed=3)
    ended = 0
    for act, before, after in zip(actions, ours, ours[1:], strict=False):
        np.testing.assert_array_equal(before["obs/agent"], torch.stack(obs, 1).numpy())
        obs, rewards, terminated, truncated, _ = raw.step([torch.as_tensor(np.clip(act["agent"][:, i], -1, 1))
                                                           for i in range(3)])
        np.testing.assert_array_equal(after["rewards/agent"], torch.stack(rewards, 1).numpy())
        np.testing.assert_array_equal(after["terminated"], terminated.numpy())
        np.testing.assert_array_equal(after["truncated"], truncated.numpy() & ~terminated.numpy())
        done = np.flatnonzero(after["terminated"] | after["truncated"])
        np.testing.assert_array_equal(after["final_obs/agent"][done], torch.stack(obs, 1).numpy()[done])
        for index in done:
            raw.reset_at(int(index), return_observations=False)
        obs = raw.get_from_scenario(get_observations=True, get_rewards=False, get_infos=False, get_dones=False)[0]
        ended += done.size
    assert ended >= n * (steps // 7)


def test_envs_of_the_batch_do_not_touch_each_other():
    a, b = (VMASVecEnv("navigation", n_envs=4, seed=1) for _ in range(2))
    a.reset(), b.reset()
    actions = uniform_actions(a, np.random.default_rng(0))
    other = {k: v.copy() for k, v in actions.items()}
    other["agent"][2] = -other["agent"][2]
    sa, sb = a.step(actions), b.step(other)
    same = [0, 1, 3]
    np.testing.assert_array_equal(sa.state[same], sb.state[same])
    assert not np.array_equal(sa.state[2], sb.state[2])


def test_another_batch_does_not_reseed_this_one():
    """VMAS keeps one random state per process; an evaluation batch reset between episodes must not make the
    training batch replay its starting layouts."""
    def first_states(reset_other: bool) -> list[np.ndarray]:
        train, other = VMASVecEnv("balance", n_envs=1, seed=0, max_steps=2), VMASVecEnv("balance", n_envs=1, seed=9)
        step, starts = train.reset(), []
        zeros = {"agent": np.zeros((1, 3, 2), np.float32)}
        for _ in range(3):
            starts.append(step.state[0].copy())
            if reset_other:
                other.reset(seed=9)
            for _ in range(2):
                step = train.step(zeros)
        return starts

    alone, beside = first_states(False), first_states(True)
    np.testing.assert_array_equal(np.stack(alone), np.stack(beside))
    assert not np.array_equal(alone[1], alone[2])


def test_an_episode_return_is_the_agents_mean_reward_summed_over_steps():
    venv = VMASVecEnv("navigation", n_envs=2, seed=0, max_steps=3)
    venv.reset()
    total = np.zeros(2)
    for _ in range(3):
        step = venv.step(uniform_actions(venv, np.random.default_rng(1)))
        total += np.mean([step.rewards[a] for a in venv.spec.agents], axis=0)
    np.testing.assert_allclose(step.episode_return, total, rtol=1e-6)


def test_spaces_options_and_errors():
    venv = envs.make_vec("vmas_balance", n_envs=2, seed=0, n_agents=4)
    group = venv.spec.groups[0]
    assert venv.spec.agents == ("agent_0", "agent_1", "agent_2", "agent_3") and venv.spec.episode_limit == 100
    assert group.action_space == spaces.Box(-1, 1, (2,), np.float32) and venv.spec.state_shape == (4 * 16,)
    discrete = envs.make_vec("vmas_navigation", n_envs=2, continuous_actions=False).spec.groups[0]
    assert discrete.action_space == spaces.Discrete(9)
    with pytest.raises(UserError, match=r"vmas scenario balance: Scenario kwargs: \{'bogus': 1\} passed but not"):
        envs.make_vec("vmas_balance", n_envs=1, bogus=1)
    with pytest.raises(UnknownNameError, match=r"unknown vmas scenario 'nope'; \d+ scenarios: balance, "):
        envs.make_vec("vmas_nope", n_envs=1)
    for option, message in ((dict(max_steps=2.5), r"env\.max_steps must be an integer, got 2\.5"),
                            (dict(continuous_actions="maybe"), r"env\.continuous_actions must be true or false"),
                            (dict(device="banana"), r"env\.device must be cpu, cuda or cuda:N, got 'banana'")):
        with pytest.raises(UserError, match=message):
            envs.make_vec("vmas_balance", n_envs=1, **option)


def test_the_pettingzoo_face_plays_one_episode_to_its_limit():
    env = envs.make("vmas_sampling", seed=0, max_steps=12)
    obs, _ = env.reset(seed=0)
    assert set(obs) == set(env.possible_agents) and env.state().shape == (3 * 24,)
    length = 0
    while env.agents:
        obs, _, terminated, truncated, _ = env.step({a: env.action_space(a).sample() for a in env.agents})
        length += 1
    assert length == 12 and all(truncated.values()) and not any(terminated.values())


def test_the_pettingzoo_face_renders_frames():
    env = envs.make("vmas_balance", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8
