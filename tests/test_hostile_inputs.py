"""Hostile input: every bad flag, override, config file, env output, env factory and plugin gives exactly one
`error: ...` line and exit status 2 (bad input found before training) or 1 (a run that failed after it started,
such as a NaN the env returns mid-run), never a traceback.

The cases run in-process through the command lines' `main(argv)`; a few run end to end as subprocesses. The toy
envs below break one rule each, chosen by `fault` and the env step `at` which it happens (0: at reset).
"""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo import ParallelEnv

from core.callbacks import Callback
from core.config import Bounds, load_yaml, parse_overrides, save_yaml
from core.errors import NonFiniteError
from core.run_config import resolve_config
from envs.pettingzoo_adapter import PettingZooAdapter
from envs.spec import EnvContractError
from envs.vec_env import allocate, array_layout
from marl.algos.mappo import MAPPOConfig
from marl.cli import main as marl_main
from single_agent.cli import main as single_main

ROOT = Path(__file__).resolve().parent.parent
ME = "tests.test_hostile_inputs"
QUICK = ["--steps", "16", "--n-envs", "1", "--no-progress", "train.eval_episodes=1", "train.eval_envs=1",
         "train.checkpoint_interval=0"]
MAPPO = ["--algo", "mappo", *QUICK, "algo.rollout_steps=8", "algo.ppo_epochs=1"]
SPREAD = [*MAPPO, "--env", "mpe_simple_spread"]
DQN = ["--algo", "dqn", "--env", "CartPole-v1", *QUICK]
PPO = ["--algo", "ppo", "--env", "CartPole-v1", *QUICK]
TD3 = ["--algo", "td3", "--env", "Pendulum-v1", *QUICK]
DDPG = ["--algo", "ddpg", "--env", "Pendulum-v1", *QUICK]
QMIX = ["--algo", "qmix", "--env", "mpe_simple_spread", *QUICK]
COMA = ["--algo", "coma", "--env", "mpe_simple_spread", *QUICK]


# -- toy envs that break the contract ----------------------------------------------------------------------------
class HostileEnv(ParallelEnv):
    """Two agents with Box(4) observations, Discrete(3) actions and masks in infos; a global state of 5 values.
    `fault` breaks one output at env step `at` (0: the first reset); episodes truncate after 10 steps."""

    metadata = {"name": "hostile_v0"}
    OBS = spaces.Box(-1.0, 1.0, (4,), np.float32)

    def __init__(self, fault: str = "none", at: int = 0) -> None:
        self.possible_agents = ["player_0", "player_1"]
        self.agents: list[str] = []
        self.fault, self.at, self.t = fault, at, 0
        self.max_cycles = 10
        self.state_calls = 0  # the first call, while the adapter sets up, declares the state's shape

    def observation_space(self, agent):
        return self.OBS

    def action_space(self, agent):
        return spaces.Discrete(3)

    def state(self):
        self.state_calls += 1
        return self._break("state", np.zeros(5, np.float32)) if self.state_calls > 1 else np.zeros(5, np.float32)

    def _break(self, what: str, value):
        """`value`, or its broken version when the fault concerns `what` and it is time."""
        if self.t != self.at or not self.fault.endswith(what):
            return value
        return {
            "scalar_obs": 0.5, "short_obs": np.zeros(3), "long_obs": np.zeros(5), "matrix_obs": np.zeros((2, 2)),
            "str_obs": "abcd", "none_obs": None, "ragged_obs": [[0.0], [0.0, 1.0]], "dict_obs": {"x": 1.0},
            "nan_obs": np.array([0.0, np.nan, 0.0, 0.0]), "inf_obs": np.full(4, np.inf),
            "complex_obs": np.zeros(4, np.complex64),
            "len1_mask": np.ones(1, np.int8), "long_mask": np.ones(5, np.int8), "no_action_mask": np.zeros(3, np.int8),
            "str_mask": np.array(["a", "b", "c"]),
            "nan_reward": float("nan"), "inf_reward": -float("inf"), "str_reward": "1.0", "none_reward": None,
            "huge_reward": 1e300,  # finite in Python, inf as the float32 the vector env stores
            "array_reward": np.zeros(2),
            "nan_state": np.full(5, np.nan), "short_state": np.zeros(2), "str_state": "state",
        }.get(self.fault, value)

    def _outputs(self):
        obs = {a: np.zeros(4, np.float32) for a in self.agents}
        infos = {a: {"action_mask": np.ones(3, np.int8)} for a in self.agents}
        obs["player_1"] = self._break("obs", obs["player_1"])
        infos["player_1"]["action_mask"] = self._break("mask", infos["player_1"]["action_mask"])
        if self.t == self.at and self.fault == "missing_obs":
            del obs["player_1"]
        if self.t == self.at and self.fault == "ghost_obs":
            obs["ghost"] = np.zeros(4, np.float32)
        return obs, infos

    def reset(self, seed=None, options=None):
        self.agents, self.t = list(self.possible_agents), 0
        obs, infos = self._outputs()
        if self.t == self.at and self.fault == "reset_obs_only":
            return obs
        return obs, infos

    def step(self, actions):
        self.t += 1
        obs, infos = self._outputs()
        rewards = {a: 1.0 for a in self.agents}
        rewards["player_1"] = self._break("reward", rewards["player_1"])
        if self.t == self.at and self.fault == "ghost_reward":
            rewards["ghost"] = 1.0
        done = self.t >= 10
        terms = {a: False for a in self.agents}
        truncs = {a: done for a in self.agents}
        if done:
            self.agents = []
        if self.t == self.at and self.fault == "step_four_values":
            return obs, rewards, terms, infos
        if self.t == self.at and self.fault == "list_rewards":
            return obs, list(rewards.values()), terms, truncs, infos
        return obs, rewards, terms, truncs, infos


def hostile(fault: str = "none", at: int = 0) -> HostileEnv:
    return HostileEnv(fault, at)


class NoAgents(HostileEnv):
    def __init__(self) -> None:
        super().__init__()
        self.possible_agents = []


class BadSpaces(HostileEnv):
    """Construction-time faults: the spaces the env declares, or its methods raising while the adapter reads them."""

    def __init__(self, which: str) -> None:
        super().__init__()
        self.which = which
        if which == "max_cycles_negative":
            self.max_cycles = -3
        if which == "max_cycles_text":
            self.max_cycles = "ten"  # type: ignore[assignment]  # deliberately not an int

    def observation_space(self, agent):
        if self.which == "obs_space_raises":
            raise KeyError(agent)
        if self.which == "discrete_obs":
            return spaces.Discrete(4)
        return self.OBS

    def action_space(self, agent):
        if self.which == "multidiscrete_actions":
            return spaces.MultiDiscrete([2, 2])
        if self.which == "discrete_start_1":
            return spaces.Discrete(3, start=1)
        if self.which == "empty_box_actions":
            return spaces.Box(-1, 1, (0,), np.float32)
        return spaces.Discrete(3)

    def state(self):
        if self.which == "state_raises":
            raise ValueError("no state today")
        return super().state()

    def reset(self, seed=None, options=None):
        if self.which == "reset_raises":
            raise RuntimeError("cannot reset")
        return super().reset(seed, options)


def bad_spaces(which: str) -> BadSpaces:
    return BadSpaces(which)


def no_agents() -> NoAgents:
    return NoAgents()


def raising_factory():
    raise RuntimeError("factory boom")


def exiting_factory():
    sys.exit(4)


def returns_none():
    return None


def returns_gym_env():
    return gym.make("CartPole-v1")


def typed_factory(n_players: int = 2, scale: float = 1.0, mode: str = "a") -> HostileEnv:
    return HostileEnv()


def untyped_factory(n_players=2):
    return HostileEnv() if len(range(n_players)) else None


NOT_CALLABLE = 42


class BoomCallback(Callback):
    def __init__(self) -> None:
        raise RuntimeError("callback boom")


class ExitCallback(Callback):
    def __init__(self) -> None:
        sys.exit(5)


class NeedsArgs(Callback):
    def __init__(self, threshold: float) -> None:
        self.threshold = threshold


class NotACallback:
    pass


class OddSpaceEnv(gym.Env):
    """A gymnasium env whose constructor raises (registered as HostileBroken-v0)."""

    def __init__(self) -> None:
        raise RuntimeError("gym env boom")


if "HostileBroken-v0" not in gym.registry:
    gym.register("HostileBroken-v0", entry_point=f"{__name__}:OddSpaceEnv")


# -- the table ---------------------------------------------------------------------------------------------------
def env(spec: str, *kwargs: str) -> list[str]:
    """--env ME:spec with env.KEY=VALUE options."""
    return ["--env", f"{ME}:{spec}", *(f"env.{kw}" for kw in kwargs)]


M, S = "marl", "single"
CASES = [
    # command-line flags
    (M, ["--env", "mpe_simple_spread"], "the following arguments are required: --algo"),
    (M, ["--algo", "mappo"], "the following arguments are required: --env"),
    (M, ["--algo", "nope", "--env", "mpe_simple_spread"], "unknown algorithm 'nope'"),
    (M, ["--algo", "", "--env", "mpe_simple_spread"], "--algo"),
    (M, [*SPREAD, "--steps", "ten"], "argument --steps: invalid int value"),
    (M, [*SPREAD, "--steps", "0"], "train.steps must be >= 1, got 0"),
    (M, [*SPREAD, "--steps", "-5"], "train.steps must be >= 1, got -5"),
    (M, [*SPREAD, "--steps", "99999999999999999999999"], "train.steps must be a 64-bit integer"),
    (M, [*SPREAD, "--n-envs", "0"], "train.n_envs must be in [1, 65536], got 0"),
    (M, [*SPREAD, "--n-envs", "-3"], "train.n_envs must be in [1, 65536], got -3"),
    (M, [*SPREAD, "--n-envs", "100000000"], "train.n_envs must be in [1, 65536]"),
    (M, [*SPREAD, "--n-envs", "1000", "--vec", "subproc"], "at most 256"),
    (M, [*SPREAD, "--n-envs", "2.5"], "argument --n-envs: invalid int value"),
    (M, [*SPREAD, "--seed", "-1"], "train.seed must be in [0, 4294967296), got -1"),
    (M, [*SPREAD, "--seed", "4294967296"], "train.seed must be in [0, 4294967296)"),
    (M, [*SPREAD, "--vec", "threads"], "argument --vec: invalid choice"),
    (M, [*SPREAD, "--device", "gpu"], "device must be cpu, cuda, cuda:N or mps"),
    (M, [*SPREAD, "--device", "cuda:abc"], "device must be cpu, cuda, cuda:N or mps"),
    (M, [*SPREAD, "--config", "/nonexistent/config.yaml"], "config file not found"),
    (M, [*SPREAD, "--config", "/"], "config file / is a directory"),
    (M, [*SPREAD, "--config", "/dev/null"], "config file /dev/null is not a regular file"),
    (M, [*SPREAD, "--bogus-flag"], "unrecognized arguments: --bogus-flag"),
    (M, ["--algo", "mappo", "--env", "nope", *QUICK], "unknown env 'nope'"),
    (M, ["--algo", "mappo", "--env", "", *QUICK], "required: --env"),
    (M, ["--algo", "mappo", "--env", ":", *QUICK], "must look like package.module:name"),
    (M, ["--algo", "mappo", "--env", "a b:c", *QUICK], "is not a module name"),
    (M, ["--algo", "mappo", "--env", "..rel:make", *QUICK], "is not a module name"),
    (M, ["--algo", "mappo", "--env", "nosuchmodule_xyz:make", *QUICK], "no module named 'nosuchmodule_xyz'"),
    (M, ["--algo", "mappo", "--env", f"{ME}:nothing", *QUICK], "has no attribute 'nothing'"),
    (M, ["--algo", "mappo", "--env", f"{ME}:NOT_CALLABLE", *QUICK], "is not callable"),
    (M, ["--algo", "mappo", "--env", "smac_4m", *QUICK], "unknown env 'smac_4m'"),
    (S, [*DQN, "--target-reward", "nan"], "train.target_return must be a finite number, got nan"),
    (S, [*DQN, "--target-reward", "inf"], "train.target_return must be a finite number, got inf"),
    (S, [*DQN, "--steps", "-1"], "train.steps must be >= 1, got -1"),
    (S, ["--algo", "a2c", "--env", "CartPole-v1"], "unknown algorithm 'a2c'"),
    # overrides
    (M, [*SPREAD, "lrr=1"], "unknown override key 'lrr'"),
    (M, [*SPREAD, "algo.lrr=1"], "unknown key algo.lrr; valid keys: "),
    (M, [*SPREAD, "nosection.lr=1"], "unknown override key 'nosection'"),
    (M, [*SPREAD, "=3"], "is not of the form key=value"),
    (M, [*SPREAD, "algo..lr=3"], "has an empty key part"),
    (M, [*SPREAD, "algo=3"], "names a whole section; use algo.KEY=VALUE"),
    (M, [*SPREAD, "algo.lr=fast"], "algo.lr must be a number, got 'fast'"),
    (M, [*SPREAD, "algo.lr=-1"], "algo.lr must be > 0, got -1.0"),
    (M, [*SPREAD, "algo.lr=0"], "algo.lr must be > 0, got 0.0"),
    (M, [*SPREAD, "algo.lr=.inf"], "algo.lr must be a finite number, got inf"),
    (M, [*SPREAD, "algo.lr=nan"], "algo.lr must be a finite number, got nan"),
    (M, [*SPREAD, "algo.lr=-2E5"], "algo.lr must be > 0, got -200000.0"),
    (M, [*SPREAD, "algo.lr=[1"], "algo.lr must be a number, got '[1'"),
    (M, [*SPREAD, "algo.lr=true"], "algo.lr must be a number, got True"),
    (M, [*SPREAD, "algo.critic_lr=-3e-4"], "algo.critic_lr must be > 0, got -0.0003"),
    (M, [*SPREAD, "algo.gamma=1.5"], "algo.gamma must be in [0, 1], got 1.5"),
    (M, [*SPREAD, "algo.gae_lambda=-.5"], "algo.gae_lambda must be in [0, 1], got -0.5"),
    (M, [*SPREAD, "algo.clip=0"], "algo.clip must be > 0, got 0.0"),
    (M, [*SPREAD, "algo.entropy_coef=-0.01"], "algo.entropy_coef must be >= 0, got -0.01"),
    (M, [*SPREAD, "algo.max_grad_norm=0"], "algo.max_grad_norm must be > 0"),
    (M, [*SPREAD, "algo.hidden_sizes=[]"], "algo.hidden_sizes must have at least 1 entry, got []"),
    (M, [*SPREAD, "algo.hidden_sizes=[0]"], "algo.hidden_sizes[0] must be in [1, 8192], got 0"),
    (M, [*SPREAD, "algo.hidden_sizes=[64, -1]"], "algo.hidden_sizes[1] must be in [1, 8192], got -1"),
    (M, [*SPREAD, "algo.hidden_sizes=64x64"], "algo.hidden_sizes must be a list"),
    (M, [*SPREAD, "algo.hidden_sizes=[1.5]"], "algo.hidden_sizes[0] must be an integer, got 1.5"),
    (M, [*SPREAD, "algo.rnn_hidden=0"], "algo.rnn_hidden must be in [1, 8192], got 0"),
    (M, [*SPREAD, "algo.rollout_steps=0"], "algo.rollout_steps must be >= 1, got 0"),
    (M, [*SPREAD, "algo.ppo_epochs=-1"], "algo.ppo_epochs must be >= 1"),
    (M, [*SPREAD, "algo.num_minibatches=0"], "algo.num_minibatches must be >= 1"),
    (M, [*SPREAD, "algo.chunk_len=0"], "algo.chunk_len must be >= 1"),
    (M, [*SPREAD, "algo.policy=gru", "algo.chunk_len=3"], "must be a multiple of chunk_len"),
    (M, [*SPREAD, "algo.policy=lstm"], "algo.policy must be one of mlp, gru, got 'lstm'"),
    (M, [*SPREAD, "algo.activation=gelu"], "algo.activation must be one of relu, tanh, got 'gelu'"),
    (M, [*SPREAD, "algo.value_norm=yes please"], "algo.value_norm must be true or false"),
    (M, [*SPREAD, "algo.log_std_init=nan"], "algo.log_std_init must be a finite number"),
    (M, [*SPREAD, "train.eval_interval=-1"], "train.eval_interval must be >= 0, got -1"),
    (M, [*SPREAD, "train.eval_episodes=0"], "train.eval_episodes must be >= 1"),
    (M, [*SPREAD, "train.torch_threads=1000000000"], "train.torch_threads must be in [1, 1024]"),
    (M, [*SPREAD, "train.matmul_precision=fp8"], "train.matmul_precision must be one of ieee, bf16, tf32"),
    (M, [*SPREAD, "train.target_win_rate=1.5"], "train.target_win_rate must be in [0, 1], got 1.5"),
    (M, [*SPREAD, "train.target_return=nan"], "train.target_return must be a finite number"),
    (M, [*SPREAD, "train.worker_timeout_s=0"], "train.worker_timeout_s must be > 0"),
    (M, [*SPREAD, "train.progress=maybe"], "train.progress must be true or false"),
    (M, [*SPREAD, "train.steps=1:30"], "train.steps must be an integer, got '1:30'"),
    (M, [*SPREAD, "train.loggers=[tensorboard, mlflow]"], "train.loggers[1] must be one of tensorboard, wandb, "
                                                           "got 'mlflow'"),
    (M, [*SPREAD, "train.loggers=[wandb, tensorboard, wandb]"], "train: loggers names wandb twice"),
    (M, [*SPREAD, "train.loggers=wandb"], "train.loggers must be a list, got 'wandb'"),
    (M, [*SPREAD, "train.experiment=[a]"], "train.experiment must be a string"),
    (M, [*SPREAD, "train.steps=1e300"], "train.steps must be a 64-bit integer"),
    # variants are fixed by --algo
    (M, [*QMIX, "--algo", "vdn", "algo.mixer=qmix"], "--algo vdn fixes algo.mixer to 'vdn', got 'qmix'"),
    (M, [*QMIX, "--algo", "iql", "algo.mixer=vdn"], "--algo iql fixes algo.mixer to 'none', got 'vdn'"),
    (M, [*QMIX, "mixer=none"], "--algo qmix fixes algo.mixer to 'qmix', got 'none'"),
    (M, [*SPREAD, "--algo", "ippo", "critic_input=state"], "--algo ippo fixes algo.critic_input to 'obs'"),
    (M, [*SPREAD, "algo.critic_input=obs"], "--algo mappo fixes algo.critic_input to 'state'"),
    (S, [*DDPG, "algo.n_critics=2"], "--algo ddpg fixes algo.n_critics to 1, got 2"),
    (S, [*DDPG, "algo.policy_delay=2"], "--algo ddpg fixes algo.policy_delay to 1, got 2"),
    (S, [*DDPG, "algo.target_noise=0.2"], "--algo ddpg fixes algo.target_noise to 0.0, got 0.2"),
    # value-based and COMA configs
    (M, [*QMIX, "algo.epsilon_start=1.5"], "algo.epsilon_start must be in [0, 1]"),
    (M, [*QMIX, "algo.epsilon_finish=0.9", "algo.epsilon_start=0.1"], "must not exceed epsilon_start"),
    (M, [*QMIX, "algo.batch_size=0"], "algo.batch_size must be >= 1"),
    (M, [*QMIX, "algo.batch_size=64", "algo.buffer_size=8"], "batch_size (64) must not exceed buffer_size (8)"),
    (M, [*QMIX, "algo.learning_starts=100", "algo.buffer_size=50", "algo.batch_size=32"],
     "learning_starts (100) must not exceed"),
    (M, [*QMIX, "algo.max_episode_len=-1"], "algo.max_episode_len must be >= 0"),
    (M, [*QMIX, "algo.target_update_interval=0"], "algo.target_update_interval must be >= 1"),
    (M, [*COMA, "algo.td_lambda=2"], "algo.td_lambda must be in [0, 1]"),
    (M, [*COMA, "algo.critic_hidden=0"], "algo.critic_hidden must"),
    # single-agent configs
    (S, [*DQN, "algo.lr=-1"], "algo.lr must be > 0, got -1.0"),
    (S, [*DQN, "algo.tau=0"], "algo.tau must be in (0, 1], got 0.0"),
    (S, [*DQN, "algo.tau=1.5"], "algo.tau must be in (0, 1], got 1.5"),
    (S, [*DQN, "algo.gamma=-0.1"], "algo.gamma must be in [0, 1]"),
    (S, [*DQN, "algo.buffer_size=0"], "algo.buffer_size must be >= 1"),
    (S, [*DQN, "algo.batch_size=512", "algo.buffer_size=100"], "batch_size (512) must not exceed buffer_size (100)"),
    (S, [*DQN, "algo.n_step=0"], "algo.n_step must be >= 1"),
    (S, [*DQN, "algo.epsilon_finish=2"], "algo.epsilon_finish must be in [0, 1]"),
    (S, [*DQN, "algo.hidden_sizes=[]"], "algo.hidden_sizes must have at least 1 entry"),
    (S, [*DQN, "algo.train_freq=0"], "algo.train_freq must be >= 1"),
    (S, [*PPO, "algo.activation=gelu"], "algo.activation must be one of relu, tanh, got 'gelu'"),
    (S, [*PPO, "algo.clip_range=-0.2"], "algo.clip_range must be > 0"),
    (S, [*PPO, "algo.n_epochs=0"], "algo.n_epochs must be >= 1"),
    (S, [*PPO, "algo.vf_coef=-1"], "algo.vf_coef must be >= 0"),
    (S, [*TD3, "algo.noise_type=pink"], "algo.noise_type must be one of gaussian, ou, got 'pink'"),
    (S, [*TD3, "algo.ou_dt=0"], "algo.ou_dt must be > 0"),
    (S, [*TD3, "algo.action_noise=-0.1"], "algo.action_noise must be >= 0"),
    (S, ["--algo", "sac", "--env", "Pendulum-v1", *QUICK, "algo.alpha=0"], "algo.alpha must be > 0"),
    # buffers and networks that cannot fit in memory are refused before they are allocated
    (S, [*DQN, "algo.hidden_sizes=[1000000000]"], "algo.hidden_sizes[0] must be in [1, 8192], got 1000000000"),
    (M, [*SPREAD, "algo.rnn_hidden=1e9"], "algo.rnn_hidden must be in [1, 8192], got 1000000000"),
    (M, [*SPREAD, f"algo.hidden_sizes=[{', '.join(['8192'] * 4000)}]"], "(4000 layers up to 8192 units wide) makes "
                                                                          "networks of at least 3.9 TiB"),
    (
        S,
        ["--algo", "sac", "--env", "Pendulum-v1", *QUICK, "algo.n_critics=1000000"],
        "algo.n_critics must be in [1, 64]",
    ),
    (M, [*SPREAD, "algo.rollout_steps=1000000000000"], "rollout buffer would need"),
    (M, [*QMIX, "algo.buffer_size=1000000000000"], "episode replay buffer would need"),
    (M, [*QMIX, "algo.max_episode_len=1000000000000", "algo.buffer_size=1000"], "lower algo.buffer_size or algo.max_"),
    (S, [*DQN, "algo.buffer_size=1000000000000000"], "replay buffer would need"),
    (S, [*PPO, "algo.n_steps=1000000000000"], "rollout buffer would need"),
    # env options
    (M, [*SPREAD, "env.colour=1"], "does not accept colour"),
    (M, ["--algo", "mappo", "--env", "smac_3m", *QUICK, "env.episode_limit=-5"], "episode limit must be at least 1"),
    (M, ["--algo", "mappo", "--env", "smac_3m", *QUICK, "env.episode_limit=abc"],
     "env.episode_limit must be an integer, got 'abc'"),
    (M, [*MAPPO, *env("typed_factory", "n_players=two")], "env.n_players must be an integer, got 'two'"),
    (M, [*MAPPO, *env("typed_factory", "scale=nan")], "env.scale must be a finite number"),
    (M, [*MAPPO, *env("typed_factory", "mode=[1]")], "env.mode must be a string"),
    (M, [*MAPPO, *env("untyped_factory", "n_players=two")], "TypeError: "),
    (M, [*MAPPO, *env("typed_factory", "n_players=2", "extra=1")], "does not accept extra"),
    # env factories and what the env declares
    (M, [*MAPPO, *env("raising_factory")], "factory failed: RuntimeError: factory boom (tests/test_hostile_inputs.py:"),
    (M, [*MAPPO, *env("exiting_factory")], "its factory failed: SystemExit: exit status 4"),
    (M, [*MAPPO, *env("returns_none")], "factory returned NoneType, not a PettingZoo"),
    (M, [*MAPPO, *env("returns_gym_env")], "not a PettingZoo ParallelEnv"),
    (M, [*MAPPO, *env("no_agents")], "has no agents (possible_agents is empty)"),
    (M, [*MAPPO, *env("bad_spaces", "which=obs_space_raises")], "KeyError: 'player_0' (tests/test_hostile_inputs.py:"),
    (M, [*MAPPO, *env("bad_spaces", "which=discrete_obs")], "has observation space Discrete(4); only Box"),
    (M, [*MAPPO, *env("bad_spaces", "which=multidiscrete_actions")], "unsupported action space MultiDiscrete"),
    (M, [*MAPPO, *env("bad_spaces", "which=discrete_start_1")], "must start at 0"),
    (M, [*MAPPO, *env("bad_spaces", "which=empty_box_actions")], "Box action space has shape (0,)"),
    (M, [*MAPPO, *env("bad_spaces", "which=max_cycles_negative")], "episode limit must be at least 1 step, got -3"),
    (M, [*MAPPO, *env("bad_spaces", "which=max_cycles_text")], "max_cycles must be an integer, got 'ten'"),
    (M, [*MAPPO, *env("bad_spaces", "which=state_raises")], "ValueError: no state today"),
    (M, [*MAPPO, *env("bad_spaces", "which=reset_raises")], "RuntimeError: cannot reset"),
    # env outputs that contradict the declared spaces (at the first reset: before training)
    (M, [*MAPPO, *env("hostile", "fault=scalar_obs")], "observation of agent player_1 has shape (), but the env "
                                                        "declared (4,)"),
    (M, [*MAPPO, *env("hostile", "fault=short_obs")], "observation of agent player_1 has shape (3,)"),
    (M, [*MAPPO, "--vec", "subproc", *env("hostile", "fault=short_obs")], "env 0 raised EnvContractError: env "
                                                                          f"{ME}:hostile: the observation of agent "
                                                                          "player_1 has shape (3,)"),
    (M, [*MAPPO, *env("hostile", "fault=long_obs")], "observation of agent player_1 has shape (5,)"),
    (M, [*MAPPO, *env("hostile", "fault=matrix_obs")], "observation of agent player_1 has shape (2, 2)"),
    (M, [*MAPPO, *env("hostile", "fault=str_obs")], "observation of agent player_1 is not numeric: str 'abcd'"),
    (M, [*MAPPO, *env("hostile", "fault=none_obs")], "observation of agent player_1 is not numeric: NoneType"),
    (M, [*MAPPO, *env("hostile", "fault=ragged_obs")], "observation of agent player_1 is not numeric: list"),
    (M, [*MAPPO, *env("hostile", "fault=dict_obs")], "observation of agent player_1 is not numeric: dict"),
    (M, [*MAPPO, *env("hostile", "fault=complex_obs")], "observation of agent player_1 is not numeric"),
    (M, [*MAPPO, *env("hostile", "fault=len1_mask")], "action mask of agent player_1 has shape (1,), but the env "
                                                       "declared (3,)"),
    (M, [*MAPPO, *env("hostile", "fault=long_mask")], "action mask of agent player_1 has shape (5,)"),
    (M, [*MAPPO, *env("hostile", "fault=str_mask")], "action mask of agent player_1 is not numeric"),
    (M, [*MAPPO, *env("hostile", "fault=no_action_mask")], "action mask of agent player_1 has no available action"),
    (M, [*MAPPO, *env("hostile", "fault=short_state")], "the state has shape (2,), but the env declared (5,)"),
    (M, [*MAPPO, *env("hostile", "fault=str_state")], "the state is not numeric"),
    (M, [*MAPPO, *env("hostile", "fault=missing_obs")], "agent player_1 is alive (in env.agents) but has no obs"),
    (M, [*MAPPO, *env("hostile", "fault=ghost_obs")], "observations names agent 'ghost', which is not one of"),
    (M, [*MAPPO, *env("hostile", "fault=reset_obs_only")], "reset() must return (observations, infos), got dict"),
    (M, [*MAPPO, *env("hostile", "fault=nan_obs")], "returned a non-finite observation for agent player_1 (nan)"),
    (M, [*MAPPO, *env("hostile", "fault=nan_state")], "returned a non-finite state (nan)"),
    (M, [*MAPPO, *env("hostile", "at=soon")], "env.at must be an integer, got 'soon'"),
    # callbacks
    (M, [*SPREAD, "--callback", f"{ME}:BoomCallback"], "its constructor failed: RuntimeError: callback boom "
                                                       "(tests/test_hostile_inputs.py:"),
    (M, [*SPREAD, "--callback", f"{ME}:ExitCallback"], "its constructor failed: SystemExit: exit status 5"),
    (M, [*SPREAD, "--callback", f"{ME}:NeedsArgs"], "could not be created without arguments"),
    (M, [*SPREAD, "--callback", f"{ME}:NotACallback"], "is not a subclass of core.callbacks.Callback"),
    (M, [*SPREAD, "--callback", f"{ME}:missing"], "has no attribute 'missing'"),
    (M, [*SPREAD, "--callback", "nosuchmodule_xyz:Thing"], "no module named 'nosuchmodule_xyz'"),
    (M, [*SPREAD, "--callback", "no_such_entry_point"], "unknown callback 'no_such_entry_point'"),
    (M, [*SPREAD, "--callback", f"{ME}:BoomCallback:x"], "must look like package.module:name"),
    (S, [*DQN, "--callback", f"{ME}:BoomCallback"], "RuntimeError: callback boom"),
    # single-agent envs
    (S, ["--algo", "dqn", "--env", "NoSuchEnv-v0", *QUICK], "unknown gymnasium env 'NoSuchEnv-v0'"),
    (S, ["--algo", "sac", "--env", "CartPole-v1", *QUICK], "sac needs a continuous (Box) action space"),
    (S, ["--algo", "dqn", "--env", "Pendulum-v1", *QUICK], "dqn needs a Discrete action space"),
    (S, ["--algo", "dqn", "--env", "nosuchmodule_xyz:Foo-v0", *QUICK], "no module named 'nosuchmodule_xyz'"),
    (S, ["--algo", "dqn", "--env", f"{ME}:Missing-v0", *QUICK], "unknown gymnasium env"),
    (S, ["--algo", "dqn", "--env", ":Foo-v0", *QUICK], "must look like module:EnvId"),
    (S, ["--algo", "dqn", "--env", "HostileBroken-v0", *QUICK], "RuntimeError: gym env boom "
                                                                 "(tests/test_hostile_inputs.py:"),
    (S, [*DQN, "env.colour=red"], "cannot make gymnasium env 'CartPole-v1'"),
]


@pytest.mark.parametrize("side, argv, message", CASES, ids=[f"{i:03d}" for i in range(len(CASES))])
def test_bad_input_is_one_line_and_exit_2(side, argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    main = marl_main if side == M else single_main
    status = main([*argv, "--logdir", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert_one_error_line(err, message)


def assert_one_error_line(err: str, message: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert message in lines[0], err
    assert "Traceback" not in err


def test_the_table_is_large():
    assert len(CASES) >= 100


# -- found after training started: exit status 1 ---------------------------------------------------------------
# MID-RUN CASES (exit 1 once the trainer reports failures after the first training step as RunError).
MID_RUN = [
    ("fault=nan_reward", "returned a non-finite reward for agent player_1 (nan)"),
    ("fault=inf_reward", "returned a non-finite reward for agent player_1 (-inf)"),
    ("fault=nan_obs", "returned a non-finite observation for agent player_1 (nan)"),
    ("fault=inf_obs", "returned a non-finite observation for agent player_1 (inf)"),
    ("fault=nan_state", "returned a non-finite state (nan)"),
    ("fault=scalar_obs", "observation of agent player_1 has shape (), but the env declared (4,)"),
    ("fault=no_action_mask", "action mask of agent player_1 has no available action"),
    ("fault=str_reward", "reward of agent player_1 is not numeric: str '1.0'"),
    ("fault=none_reward", "reward of agent player_1 is not numeric: NoneType"),
    ("fault=array_reward", "reward of agent player_1 has shape (2,), but the env declared ()"),
    ("fault=ghost_reward", "rewards names agent 'ghost', which is not one of possible_agents"),
    ("fault=list_rewards", "step() returned rewards as list, not a dict keyed by agent"),
    ("fault=step_four_values", "step() must return (observations, rewards, terminations, truncations, infos)"),
]


@pytest.mark.parametrize("fault, message", MID_RUN, ids=[m[0][6:] for m in MID_RUN])
def test_env_fault_after_training_started_is_one_line_and_exit_1(fault, message, tmp_path, capsys):
    status = marl_main([*MAPPO, *env("hostile", fault, "at=3"), "--logdir", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 1, err
    assert_one_error_line(err, message)


# -- config files ---------------------------------------------------------------------------------------------------
CONFIG_FILES = [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", "is not UTF-8 text"),
    (b"algo:\n  lr: 0.1\x00\n", "malformed YAML"),
    (b"- 1\n- 2\n", "must hold a mapping of keys to values, not list"),
    (b"just a string\n", "must hold a mapping of keys to values, not str"),
    (b"algos: {lr: 0.1}\n", "unknown section algos; valid sections: train, algo, env"),
    (b"1: {lr: 0.1}\n", "keys must be names, got 1"),
    (b"algo: [1, 2]\n", "section 'algo' must be a mapping"),
    (b"algo:\n  lr: [1\n", "malformed YAML"),
    (b"algo:\n\tlr: 1\n", "malformed YAML"),
    (b"algo: {lr: 1}\n---\nalgo: {lr: 2}\n", "malformed YAML"),
    (b"[" * 5000 + b"]" * 5000, "malformed YAML"),
    (b"algo: {lr: fast}\n", "algo.lr must be a number, got 'fast'"),
    (b"algo: {lr: 3e-4, gamma: 1.2}\n", "algo.gamma must be in [0, 1], got 1.2"),
    (b"algo: {null: 1}\n", "algo: keys must be names, got None"),
    (b"algo: {hidden_sizes: {a: 1}}\n", "algo.hidden_sizes must be a list"),
    (b"train: {eval_interval: .inf}\n", "train.eval_interval must be an integer, got inf"),
    (b"train: {seed: -2E5}\n", "train.seed must be in [0, 4294967296), got -200000"),
    (b"train: {torch_threads: 1:30}\n", "train.torch_threads must be an integer, got '1:30'"),
    (b"env: {3: 1}\n", "env: keys must be names, got 3"),
    (b"env: {colour: red}\n", "does not accept colour"),
    (b"algo: {mixer: qmix}\n", "unknown key algo.mixer"),
]


@pytest.mark.parametrize("content, message", CONFIG_FILES, ids=[f"{i:02d}" for i in range(len(CONFIG_FILES))])
def test_bad_config_file_is_one_line_and_exit_2(content, message, tmp_path, capsys):
    path = tmp_path / "config.yaml"
    path.write_bytes(content)
    assert marl_main([*SPREAD, "--config", str(path), "--logdir", str(tmp_path)]) == 2
    assert_one_error_line(capsys.readouterr().err, message)


def test_yaml_12_numbers_in_files_and_overrides(tmp_path):
    values = {"a": "3e-4", "b": "1e-3", "c": "-2E5", "d": ".5", "e": "1.", "f": "010", "g": "0x1f", "h": "1_000",
              "i": "1:30", "j": "0o17", "k": ".inf", "l": "-.inf", "m": "nan", "n": "2020-01-01", "o": "1e3x"}
    expected = {"a": 3e-4, "b": 1e-3, "c": -2e5, "d": 0.5, "e": 1.0, "f": 10, "g": 31, "h": 1000, "i": "1:30",
                "j": 15, "k": math.inf, "l": -math.inf, "n": "2020-01-01", "o": "1e3x"}
    path = tmp_path / "numbers.yaml"
    path.write_text("".join(f"{k}: {v}\n" for k, v in values.items()))
    for parsed in (load_yaml(path), parse_overrides([f"{k}={v}" for k, v in values.items()])):
        assert math.isnan(parsed.pop("m"))
        assert parsed == expected and all(type(parsed[k]) is type(v) for k, v in expected.items())
    save_yaml({"s": ["3e-4", "010", "1:30", "nan"], "x": 1e-10}, path)  # strings that look like numbers stay strings
    assert load_yaml(path) == {"s": ["3e-4", "010", "1:30", "nan"], "x": 1e-10}


def test_3e_minus_4_is_accepted_everywhere(tmp_path):
    user = tmp_path / "user.yaml"
    user.write_text("algo: {lr: 3e-4, critic_lr: 1E-3}\n")
    train, algo, _ = resolve_config("mappo", "mpe_x", MAPPOConfig, {"critic_input": "state"}, str(user),
                                    overrides=["algo.clip=.5", "entropy_coef=1e-2", "train.steps=1e6"],
                                    config_dir=tmp_path)
    assert (algo.lr, algo.critic_lr, algo.clip, algo.entropy_coef, train.steps) == (3e-4, 1e-3, 0.5, 0.01, 10**6)
    assert type(train.steps) is int


def test_bounds_describe_their_range():
    assert [Bounds(gt=0).describe(), Bounds(ge=1).describe(), Bounds(ge=0, le=1).describe(),
            Bounds(gt=0, le=1).describe(), Bounds(ge=0, lt=2**32).describe()] == \
        ["> 0", ">= 1", "in [0, 1]", "in (0, 1]", "in [0, 4294967296)"]


# -- memory ---------------------------------------------------------------------------------------------------------
def test_buffer_too_big_for_numpy_is_a_user_error(monkeypatch):
    from core.buffers import memory
    from core.buffers.replay import ReplayBuffer
    from core.errors import UserError

    monkeypatch.setattr(memory, "available_memory", lambda: None)  # only numpy's own refusal is left
    with pytest.raises(UserError, match=r"replay buffer of .* could not be allocated .*; lower algo.buffer_size"):
        ReplayBuffer(2**62, {"obs": ((2**10,), np.float32)})
    assert memory.format_bytes(341 * 2**50) == "341.0 PiB" and memory.format_bytes(512) == "512 B"


# -- the adapter on its own -------------------------------------------------------------------------------------------
def adapter_for(env: HostileEnv) -> PettingZooAdapter:
    adapter = PettingZooAdapter(env, name="toy")
    arrays = allocate(array_layout(adapter.spec, 1))
    adapter.bind({k: (a[0] if a.ndim > 1 else a[0:1]) for k, a in arrays.items()})
    return adapter


def test_adapter_names_agent_field_and_source_of_a_nan_reward():
    adapter = adapter_for(HostileEnv("nan_reward", at=2))
    adapter.reset(seed=0)
    adapter.step()
    with pytest.raises(NonFiniteError, match=r"^env toy returned a non-finite reward for agent player_1 \(nan\)$"):
        adapter.step()


def test_adapter_accepts_what_the_contract_allows(monkeypatch):
    """Lists, float64, ints and bools are fine observations; numpy scalars and 0-d arrays are fine rewards."""
    env = HostileEnv()
    adapter = adapter_for(env)
    adapter.reset(seed=0)
    monkeypatch.setattr(env, "_outputs", lambda: ({"player_0": [1, 2, 3, 4], "player_1": np.ones(4, bool)},
                                                  {a: {"action_mask": [True, False, 1]} for a in env.agents}))
    adapter.step()
    assert adapter._views[""].group_obs[0].tolist() == [[1, 2, 3, 4], [1, 1, 1, 1]]
    with pytest.raises(EnvContractError, match="agent player_1"):
        monkeypatch.setattr(env, "_outputs", lambda: ({"player_0": np.zeros(4), "player_1": np.zeros(1)}, {}))
        adapter.step()


# -- user modules in the current directory ------------------------------------------------------------------------
GOOD_GYM_MODULE = """
import gymnasium as gym
from gymnasium.envs.classic_control.cartpole import CartPoleEnv
gym.register("{env_id}", entry_point=CartPoleEnv, max_episode_steps=20)
"""


@pytest.mark.parametrize("side, body, message", [
    (M, "import sys\nsys.exit(3)\n", "importing {mod} failed: SystemExit: exit status 3 ({mod}.py:2)"),
    (M, "x = 1\nraise ValueError('bad module')\n", "importing {mod} failed: ValueError: bad module ({mod}.py:2)"),
    (M, "import nosuchdep_xyz\n", "ModuleNotFoundError: No module named 'nosuchdep_xyz' ({mod}.py:1)"),
    (M, "def make(:\n", "importing {mod} failed: SyntaxError: "),
    (S, "import sys\nsys.exit(3)\n", "importing {mod} failed: SystemExit: exit status 3 ({mod}.py:2)"),
    (S, "raise KeyError('k')\n", "importing {mod} failed: KeyError: 'k' ({mod}.py:1)"),
], ids=["marl-exit", "marl-raise", "marl-missing-dep", "marl-syntax", "single-exit", "single-raise"])
def test_env_module_in_cwd_that_fails_at_import(side, body, message, tmp_path, capsys, monkeypatch, request):
    mod = f"hostile_mod_{request.node.callspec.id.replace('-', '_')}"
    (tmp_path / f"{mod}.py").write_text(body)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    argv = [*MAPPO, "--env", f"{mod}:make"] if side == M else [*DQN, "--env", f"{mod}:Thing-v0"]
    status = (marl_main if side == M else single_main)([*argv, "--logdir", str(tmp_path / "runs")])
    assert status == 2
    assert_one_error_line(capsys.readouterr().err, message.format(mod=mod))


def test_single_agent_env_module_is_found_in_cwd_and_sys_path_restored(tmp_path, capsys, monkeypatch):
    (tmp_path / "my_gym_envs.py").write_text(GOOD_GYM_MODULE.format(env_id="HostileTiny-v0"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    before = list(sys.path)
    status = single_main([*DQN, "--env", "my_gym_envs:HostileTiny-v0", "algo.learning_starts=8",
                          "--logdir", str(tmp_path / "runs")])
    assert status == 0, capsys.readouterr().err
    assert sys.path == before


def test_fixed_variant_value_given_again_is_accepted(tmp_path, capsys):
    """Saying what --algo already fixes is not a conflict; the odd-but-valid run finishes."""
    status = marl_main([*QMIX, "--algo", "vdn", "algo.mixer=vdn", "algo.batch_size=2", "algo.learning_starts=2",
                        "algo.rollout_steps=4", "--logdir", str(tmp_path)])
    assert status == 0, capsys.readouterr().err


# -- end to end -----------------------------------------------------------------------------------------------------
def script(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / name), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_end_to_end_module_that_exits_at_import(tmp_path):
    (tmp_path / "exiting_env.py").write_text("import sys\n\nsys.exit(3)\n")
    result = script("train_marl.py", "--algo", "mappo", "--env", "exiting_env:make", "--logdir", str(tmp_path),
                    cwd=tmp_path)
    assert result.returncode == 2
    assert_one_error_line(result.stderr, "importing exiting_env failed: SystemExit: exit status 3 (exiting_env.py:3)")


def test_end_to_end_binary_config_and_single_agent_override(tmp_path):
    (tmp_path / "c.yaml").write_bytes(bytes(range(256)))
    result = script("train_marl.py", "--algo", "mappo", "--env", "mpe_simple_spread", "--config", "c.yaml",
                    cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert_one_error_line(result.stderr, "config file c.yaml is not UTF-8 text")
    result = script("train_single.py", "--algo", "ppo", "--env", "CartPole-v1", "algo.activation=gelu", cwd=tmp_path)
    assert result.returncode == 2
    assert_one_error_line(result.stderr, "algo.activation must be one of relu, tanh, got 'gelu'")


def test_end_to_end_nan_reward_after_training_started_exits_1(tmp_path):
    """MID-RUN: a NaN reward at env step 3 fails the run (exit 1) with one line naming agent and field."""
    result = script("train_marl.py", *MAPPO, "--env", f"{ME}:hostile", "env.fault=nan_reward", "env.at=3",
                    "--logdir", str(tmp_path), cwd=ROOT)
    assert result.returncode == 1, result.stderr
    assert_one_error_line(result.stderr, "returned a non-finite reward for agent player_1 (nan)")
