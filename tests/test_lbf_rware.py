"""lbf_<task> and rware_<task> (issue 45), and multi-agent gymnasium envs with Tuple spaces in general."""
import sys

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.wrappers import TimeLimit

import envs
from core.errors import MissingDependencyError, UnknownNameError, UserError
from envs.tuple_agents import TupleAgentsEnv

pytest.importorskip("lbforaging")
pytest.importorskip("rware")


def random_steps(venv, steps: int, seed: int = 0) -> tuple[int, int, float]:
    """(episodes terminated, episodes truncated, summed reward) over `steps` steps of random actions."""
    rng, terminated, truncated, total = np.random.default_rng(seed), 0, 0, 0.0
    step = venv.reset()
    n_actions = venv.spec.groups[0].action_space.n
    for _ in range(steps):
        step = venv.step({a: rng.integers(0, n_actions, venv.n_envs) for a in venv.spec.agents})
        terminated += int(step.terminated.sum())
        truncated += int(step.truncated.sum())
        total += float(sum(r.sum() for r in step.rewards.values()))
    return terminated, truncated, total


def test_lbf_task_has_the_packages_sizes_and_its_time_limit_truncates():
    venv = envs.make_vec("lbf_8x8-2p-2f-coop", n_envs=4, seed=0)
    spec = venv.spec
    assert spec.agents == ("agent_0", "agent_1") and spec.episode_limit == 50
    assert spec.groups[0].obs_shape == (12,) and spec.groups[0].action_space == spaces.Discrete(6)
    assert spec.state_shape == (24,)  # no state of its own: the agents' observations side by side
    terminated, truncated, _ = random_steps(venv, 100)
    assert (terminated, truncated) == (0, 8)  # lbforaging ends these as terminated; here they bootstrap


def test_lbf_time_limit_end_keeps_the_final_observations_to_bootstrap_from():
    """The package's own limit is off (gymnasium.make would keep it: it takes max_episode_steps as its own
    argument), so an episode at the limit is only truncated and its final observations and state are the env's,
    not the zeros of agents that terminated."""
    venv = envs.make_vec("lbf_8x8-2p-2f-coop", n_envs=1, seed=0)
    venv.reset()
    for t in range(50):
        step = venv.step({a: np.zeros(1, dtype=np.int64) for a in venv.spec.agents})  # no-ops: no food is loaded
        assert bool(step.truncated[0]) == (t == 49) and not step.terminated[0]
    assert step.final_group_alive["agent"].all()
    assert (step.final_group_obs["agent"][0] != 0).any() and (step.final_state[0] != 0).any()


def test_lbf_options_reach_the_env_and_unknown_ones_are_refused():
    venv = envs.make_vec("lbf_8x8-2p-2f-coop", n_envs=2, seed=0, max_episode_steps=10, sight=2)
    assert venv.spec.episode_limit == 10
    assert random_steps(venv, 20)[1] == 4
    with pytest.raises(UserError, match="does not accept bogus; valid options: players, "):
        envs.make_vec("lbf_8x8-2p-2f-coop", n_envs=1, bogus=1)


def test_an_lbf_task_collects_food_and_rewards_it():
    """2 players, 1 food, no forced cooperation, 5x5: random play loads some food within 2,000 steps."""
    assert random_steps(envs.make_vec("lbf_5x5-2p-1f", n_envs=8, seed=0), 250)[2] > 0


def test_an_lbf_task_the_package_does_not_register_is_built_from_its_name():
    """lbforaging 2.0 registers at most 4 foods; EPyMARL's benchmark has 15x15-4p-5f."""
    assert "Foraging-15x15-4p-5f-v3" not in gymnasium.registry
    foraging = envs.make("lbf_15x15-4p-5f").env.unwrapped
    assert (foraging.field_size, len(foraging.players), foraging.max_num_food) == ((15, 15), 4, 5)
    assert (foraging.sight, foraging.force_coop) == (15, False)
    foraging = envs.make("lbf_2s-12x12-3p-5f-coop", sight=3).env.unwrapped  # an option still wins
    assert (foraging.field_size, foraging.sight, foraging.force_coop) == ((12, 12), 3, True)


def test_rware_task_has_the_packages_sizes_and_limit():
    venv = envs.make_vec("rware_tiny-2ag", n_envs=2, seed=0, max_steps=20)
    spec = venv.spec
    assert spec.agents == ("agent_0", "agent_1") and spec.episode_limit == 20
    assert spec.groups[0].obs_shape == (71,) and spec.groups[0].action_space == spaces.Discrete(5)
    assert random_steps(venv, 40)[:2] == (0, 4)
    assert envs.make_vec("rware_small-4ag", n_envs=1).spec.episode_limit == 500


def test_enum_options_are_named_by_their_members_and_limits_are_checked():
    from rware.warehouse import RewardType
    assert envs.make("rware_tiny-2ag", reward_type="global").env.unwrapped.reward_type is RewardType.GLOBAL
    with pytest.raises(UserError, match=r"env\.reward_type must be one of global, individual, two_stage, got 'x'"):
        envs.make_vec("rware_tiny-2ag", n_envs=1, reward_type="x")
    with pytest.raises(UserError, match=r"env\.max_episode_steps must be an integer, got 2.7"):
        envs.make_vec("lbf_8x8-2p-2f-coop", n_envs=1, max_episode_steps=2.7)
    with pytest.raises(UserError, match=r"env\.max_steps must be at least 1, got 0"):
        envs.make_vec("rware_tiny-2ag", n_envs=1, max_steps=0)


def test_unknown_tasks_and_missing_packages_are_named(monkeypatch):
    with pytest.raises(UnknownNameError, match=r"unknown lbforaging task '9x9-zz' .* e\.g\. "):
        envs.make_vec("lbf_9x9-zz", n_envs=1)
    with pytest.raises(UnknownNameError, match=r"families: lbf_<task> .*rware_<task>"):
        envs.make_vec("no_such_env", n_envs=1)
    monkeypatch.setitem(sys.modules, "rware", None)
    with pytest.raises(MissingDependencyError, match=r"rware_tiny-4ag needs the rware package: .*\[rware\]"):
        envs.make_vec("rware_tiny-4ag", n_envs=1)


class Relay(gymnasium.Env):
    """A user's multi-agent gymnasium env: agent i sees a one-hot of the step; both earn 1 when their actions
    match, each its own reward, and the episode terminates after 3 steps (`also_truncated`: and is truncated
    too, as lbforaging reports its time limit)."""

    def __init__(self, shared_reward: bool = False, also_truncated: bool = False) -> None:
        self.observation_space = spaces.Tuple([spaces.Box(0, 1, (3,), np.float32)] * 2)
        self.action_space = spaces.Tuple([spaces.Discrete(2)] * 2)
        self.shared_reward, self.also_truncated, self.t = shared_reward, also_truncated, 0

    def _obs(self):
        return tuple(np.eye(3, dtype=np.float32)[min(self.t, 2)] for _ in range(2))

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, actions):
        self.t += 1
        match = float(actions[0] == actions[1])
        rewards = match if self.shared_reward else [match, 2 * match]
        return self._obs(), rewards, self.t == 3, self.also_truncated and self.t == 3, {"won": bool(match)}


def make_relay(shared_reward: bool = False, also_truncated: bool = False) -> Relay:
    return Relay(shared_reward, also_truncated)


def make_short_relay() -> gymnasium.Env:
    return TimeLimit(Relay(), 2)


@pytest.mark.parametrize("shared", [False, True])
def test_a_users_tuple_space_env_works_by_module_factory(shared):
    venv = envs.make_vec("tests.test_lbf_rware:make_relay", n_envs=2, seed=0, shared_reward=shared)
    assert venv.spec.agents == ("agent_0", "agent_1") and venv.spec.state_shape == (6,)
    venv.reset()
    step = venv.step({"agent_0": np.array([1, 0]), "agent_1": np.array([1, 1])})
    second = 1.0 if shared else 2.0
    assert step.rewards["agent_0"].tolist() == [1.0, 0.0] and step.rewards["agent_1"].tolist() == [second, 0.0]
    for _ in range(2):
        step = venv.step({"agent_0": np.array([0, 0]), "agent_1": np.array([0, 0])})
    assert step.terminated.all() and not step.truncated.any() and step.episode_won.tolist() == [1.0, 1.0]


def test_agents_both_terminated_and_truncated_end_the_episode_terminated():
    """Gymnasium's rule: termination wins (no bootstrap from observations the env marks as terminal)."""
    venv = envs.make_vec("tests.test_lbf_rware:make_relay", n_envs=1, seed=0, also_truncated=True)
    venv.reset()
    for _ in range(3):
        step = venv.step({"agent_0": np.array([0]), "agent_1": np.array([1])})
    assert step.terminated.all() and not step.truncated.any()


def test_a_time_limit_built_by_hand_is_the_episode_limit():
    venv = envs.make_vec("tests.test_lbf_rware:make_short_relay", n_envs=1, seed=0)
    assert venv.spec.episode_limit == 2
    venv.reset()
    for _ in range(2):
        step = venv.step({"agent_0": np.array([0]), "agent_1": np.array([1])})
    assert step.truncated.all() and not step.terminated.any()


def test_tuple_agents_refuses_an_env_without_tuple_spaces():
    with pytest.raises(TypeError, match="does not have Tuple observation and action spaces"):
        TupleAgentsEnv(gymnasium.make("CartPole-v1"))
