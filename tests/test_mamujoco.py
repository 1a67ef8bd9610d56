"""mamujoco_<scenario>_<partition> (issue 45): MaMuJoCo's PettingZoo envs through the adapter."""
import numpy as np
import pytest
from gymnasium import spaces

import envs
from core.errors import UnknownNameError, UserError
from marl.cli import main

pytest.importorskip("gymnasium_robotics")


def test_halfcheetah_2x3_has_two_agents_of_three_joints():
    venv = envs.make_vec("mamujoco_HalfCheetah_2x3", n_envs=2, seed=0)
    (group,) = venv.spec.groups
    assert venv.spec.agents == ("agent_0", "agent_1") and venv.spec.episode_limit == 1000
    assert group.action_space == spaces.Box(-1, 1, (3,), np.float32) and group.obs_shape == (12,)
    assert venv.spec.state_shape == (17,)
    step = venv.reset()
    step = venv.step({"agent": np.full((2, 2, 3), 5.0, np.float32)})  # clipped to the joints' range
    assert np.all(np.isfinite(step.state)) and step.rewards["agent_0"].shape == (2,)


def test_an_episode_return_counts_the_robots_reward_once():
    venv = envs.make_vec("mamujoco_HalfCheetah_6x1", n_envs=1, seed=0, max_episode_steps=5)
    venv.reset()
    rewards = []
    for _ in range(5):
        step = venv.step({a: np.zeros((1, 1), np.float32) for a in venv.spec.agents})
        assert len({float(r[0]) for r in step.rewards.values()}) == 1  # every agent gets the robot's reward
        rewards.append(float(step.rewards["agent_0"][0]))
    assert step.episode_return[0] == pytest.approx(sum(rewards), rel=1e-5)


def test_options_reach_mamujoco_and_its_gymnasium_env():
    near = envs.make_vec("mamujoco_Hopper_3x1", n_envs=1, agent_obsk=0).spec.groups[0].obs_shape
    far = envs.make_vec("mamujoco_Hopper_3x1", n_envs=1, agent_obsk=2).spec.groups[0].obs_shape
    assert far[0] > near[0]
    venv = envs.make_vec("mamujoco_HalfCheetah_6x1", n_envs=2, seed=0, max_episode_steps=15)
    assert venv.spec.episode_limit == 15 and len(venv.spec.agents) == 6
    venv.reset()
    zeros = {a: np.zeros((2, 1), np.float32) for a in venv.spec.agents}  # two groups: ends and middle joints
    ended = [venv.step(zeros).truncated.copy() for _ in range(15)]
    assert not np.any(ended[:-1]) and np.all(ended[-1])


def test_options_are_checked_by_name_and_type():
    with pytest.raises(UserError, match=r"'mamujoco_HalfCheetah_2x3' does not accept n_agent; valid options: .*"
                                        r"ctrl_cost_weight.*agent_obsk"):
        envs.make_vec("mamujoco_HalfCheetah_2x3", n_envs=1, n_agent=3)
    with pytest.raises(UserError, match=r"env\.ctrl_cost_weight must be a number, got 'abc'"):
        envs.make_vec("mamujoco_HalfCheetah_2x3", n_envs=1, ctrl_cost_weight="abc")
    with pytest.raises(UserError, match=r"env\.agent_obsk must be at least 0, got -1"):
        envs.make_vec("mamujoco_HalfCheetah_2x3", n_envs=1, agent_obsk=-1)


def test_unknown_scenarios_and_partitions_list_the_valid_ones():
    for name in ("mamujoco_HalfCheetah_7x9", "mamujoco_Cheetah_2x3", "mamujoco_HalfCheetah"):
        with pytest.raises(UnknownNameError, match=r"mamujoco_<scenario>_<partition>: HalfCheetah_2x3/6x1, Ant_"):
            envs.make_vec(name, n_envs=1)


def test_mappo_trains_on_mamujoco(tmp_path):
    assert main(["--algo", "mappo", "--env", "mamujoco_HalfCheetah_2x3", "--steps", "400", "--n-envs", "2",
                 "--no-progress", "--logdir", str(tmp_path), "rollout_steps=100", "train.eval_episodes=1",
                 "env.max_episode_steps=50"]) == 0
