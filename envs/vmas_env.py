"""VMAS (optional extra `vmas`): `vmas_<scenario>`, every scenario the package ships, natively batched.

VMAS simulates all its envs as one batch of torch tensors, so `VMASVecEnv` steps the whole batch in one call
(no per-env Python loop) on `env.device=cpu` or `cuda`; only envs whose episode ended are reset one by one,
which is the package's own API (`reset_at(index)`). Scenario options pass as `env.KEY=VALUE` (`env.n_agents=4`);
one the scenario does not use is an error. `max_steps` (default 100, as BenchMARL's VMAS tasks) ends an episode
as truncated; a scenario's own end (a package fallen, every goal reached) terminates it. Agents with the same
observation size and action space form one group; the state is all observations side by side. Actions are
continuous (Box, clipped to each agent's range) unless `env.continuous_actions=false` (Discrete). VMAS keeps its
world inside scenario objects, so a resumed run continues with freshly reset envs (it says so), and it keeps one
random state for all its envs: `reset(seed)` seeds the batch as a whole.
"""
from __future__ import annotations

import functools
import importlib
import re
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
from gymnasium import spaces

from core.config import coerce
from core.errors import MissingDependencyError, UnknownNameError, UserError
from core.paths import install_hint
from core.run_config import DEVICE_PATTERN
from envs.registry import EnvEntry, register_family
from envs.spec import EnvContractError, EnvSpec, check_action_space, group_agents
from envs.vec_env import VecEnv, VecStep, allocate, array_layout
from envs.vec_parallel import VecParallelEnv

PREFIX = "vmas_"
MAX_STEPS = 100  # BenchMARL's VMAS tasks (benchmarl/conf/task/vmas/*.yaml) all end episodes after 100 steps
UNUSED = "passed but not used by the scenario"  # VMAS's warning for options a scenario ignores


def _vmas() -> Any:
    try:
        return importlib.import_module("vmas")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "vmas":
            raise MissingDependencyError(f"vmas_<scenario> envs need the vmas package: {install_hint('vmas')}") \
                from None
        raise


def scenario_names() -> list[str]:
    return sorted(_vmas().scenarios)


class VMASVecEnv(VecEnv):
    """`n_envs` copies of VMAS scenario `scenario` as one VMAS batch; ended episodes reset in the same step."""

    def __init__(self, scenario: str, n_envs: int = 1, seed: int | None = None, name: str | None = None,
                 max_steps: int = MAX_STEPS, continuous_actions: bool = True, device: str = "cpu",
                 **options: Any) -> None:
        vmas = _vmas()
        max_steps, continuous_actions, device = _checked(max_steps, continuous_actions, device)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.env = vmas.make_env(scenario, num_envs=n_envs, device=device, continuous_actions=continuous_actions,
                                     max_steps=max_steps, seed=seed, terminated_truncated=True, **options)
        self._random_state = list(self.env.vmas_random_state)  # this batch's own copy of VMAS's shared state
        unused = [str(w.message) for w in caught if UNUSED in str(w.message)]
        if unused:
            raise UserError(f"vmas scenario {scenario}: {unused[0].split(' This')[0]}")
        self.n_envs, self.default_seed, self.device = n_envs, seed, device
        agents = tuple(agent.name for agent in self.env.agents)
        obs_shapes = {}
        for agent, space in zip(agents, self.env.observation_space, strict=True):
            if type(space).__name__ != "Box":  # VMAS's spaces are gym's, not gymnasium's
                raise EnvContractError(f"env {name}: agent {agent} has observation space {space}; only Box is "
                                       "supported")
            obs_shapes[agent] = tuple(space.shape)
        action_spaces = {a: check_action_space(a, _gymnasium_space(space))
                         for a, space in zip(agents, self.env.action_space, strict=True)}
        self.spec = EnvSpec(agents, group_agents(agents, obs_shapes, action_spaces),
                            (sum(int(np.prod(s)) for s in obs_shapes.values()),), name=name or PREFIX + scenario,
                            episode_limit=max_steps)
        self.arrays = allocate(array_layout(self.spec, n_envs))
        for group in self.spec.groups:
            if group.discrete:  # VMAS has no action masks: every action is always available
                self.arrays[f"avail/{group.name}"][:] = True
                self.arrays[f"final_avail/{group.name}"][:] = True
            self.arrays[f"alive/{group.name}"][:] = True
            self.arrays[f"final_alive/{group.name}"][:] = True
        self._slots = [self.spec.agent_slots[a] for a in agents]
        self._bounds = {g.name: (g.action_space.low, g.action_space.high) for g in self.spec.groups
                        if isinstance(g.action_space, spaces.Box)}
        self._step = VecStep(self.spec, self.arrays)
        self._returns = np.zeros(n_envs)
        self._lengths = np.zeros(n_envs, np.int64)

    @contextmanager
    def _own_random_state(self) -> Iterator[None]:
        """VMAS keeps one random state for all its envs in a process (Environment.vmas_random_state): swap this
        batch's own in for its calls, so that another batch (the evaluation's) does not reseed this one."""
        shared = self.env.vmas_random_state
        others = list(shared)
        shared[:] = self._random_state
        try:
            yield
        finally:
            self._random_state = list(shared)
            shared[:] = others

    def reset(self, seed: int | None = None) -> VecStep:
        seed = self.default_seed if seed is None else seed
        with self._own_random_state():
            obs = self.env.reset(seed=seed)
        self._returns[:] = 0.0
        self._lengths[:] = 0
        for key in ("terminated", "truncated"):
            self.arrays[key][:] = False
        for group in self.spec.groups:
            self.arrays[f"rewards/{group.name}"][:] = 0.0
        self._write_obs(obs, "")
        return self._step

    def step(self, actions: Mapping[str, np.ndarray]) -> VecStep:
        import torch

        out = {g.name: self.arrays[f"actions/{g.name}"] for g in self.spec.groups}
        self.group_actions(actions, out)
        for name, (low, high) in self._bounds.items():
            np.clip(out[name], low, high, out=out[name])
        joint = [torch.as_tensor(out[g][:, i], device=self.device) for g, i in self._slots]
        with self._own_random_state():
            return self._step_batch(joint)

    def _step_batch(self, joint: list[Any]) -> VecStep:
        obs, rewards, terminated, truncated, _ = self.env.step(joint)
        arrays = self.arrays
        reward = np.stack([r.detach().cpu().numpy() for r in rewards], axis=1)  # [n_envs, n_agents]
        for k, (g, i) in enumerate(self._slots):
            arrays[f"rewards/{g}"][:, i] = reward[:, k]
        self._returns += reward.mean(axis=1)  # a group's episode reward as BenchMARL reports it: the agents' mean
        self._lengths += 1
        ended = terminated.cpu().numpy()
        arrays["terminated"][:] = ended
        arrays["truncated"][:] = truncated.cpu().numpy() & ~ended
        done = np.flatnonzero(arrays["terminated"] | arrays["truncated"])
        if done.size:
            self._write_obs(obs, "final_", done)
            arrays["episode_return"][done] = self._returns[done]
            arrays["episode_length"][done] = self._lengths[done]
            arrays["episode_won"][done] = np.nan
            self._returns[done] = 0.0
            self._lengths[done] = 0
            for index in done:  # VMAS resets one env at a time (or all of them)
                self.env.reset_at(int(index), return_observations=False)
            obs = self.env.get_from_scenario(get_observations=True, get_rewards=False, get_infos=False,
                                             get_dones=False)[0]
        self._write_obs(obs, "")
        return self._step

    def render(self, index: int = 0) -> np.ndarray:
        """Copy `index`'s frame as an RGB array (VMAS draws it with pyglet, headless)."""
        with self._own_random_state():
            return self.env.render(mode="rgb_array", env_index=index)

    def _write_obs(self, obs: list[Any], prefix: str, rows: np.ndarray | None = None) -> None:
        """Write per-agent observation tensors into the `prefix` obs and state arrays (only `rows` if given)."""
        select = slice(None) if rows is None else rows
        taken = [o.detach().cpu().numpy()[select] for o in obs]  # per agent [rows, obs]
        for (g, i), values in zip(self._slots, taken, strict=True):
            self.arrays[f"{prefix}obs/{g}"][select, i] = values
        self.arrays[f"{prefix}state"][select] = np.concatenate([v.reshape(len(v), -1) for v in taken], axis=1)


def _checked(max_steps: Any, continuous_actions: Any, device: Any) -> tuple[int, bool, str]:
    """The options VMAS's make_env takes itself, checked (it would take 2.5 steps or `maybe` for a bool)."""
    import torch

    max_steps = coerce(max_steps, int, "env.max_steps")
    if max_steps < 1:
        raise UserError(f"env.max_steps must be at least 1, got {max_steps}")
    continuous_actions = coerce(continuous_actions, bool, "env.continuous_actions")
    device = coerce(device, str, "env.device")
    if not re.fullmatch(DEVICE_PATTERN, device):
        raise UserError(f"env.device must be cpu, cuda or cuda:N, got {device!r}")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"env.device={device} but CUDA is not available; use env.device=cpu")
    return max_steps, continuous_actions, device


def _gymnasium_space(space: Any) -> spaces.Space:
    """A gym Box or Discrete (what VMAS declares) as gymnasium's."""
    if type(space).__name__ == "Discrete":
        return spaces.Discrete(int(space.n))
    if type(space).__name__ == "Box":
        return spaces.Box(np.asarray(space.low, np.float32), np.asarray(space.high, np.float32), dtype=np.float32)
    raise EnvContractError(f"unsupported VMAS action space {space}; Box and Discrete are supported")


def _entry(scenario: str) -> EnvEntry:
    if scenario not in _vmas().scenarios:
        names = scenario_names()
        raise UnknownNameError(f"unknown vmas scenario {scenario!r}; {len(names)} scenarios: "
                               f"{', '.join(names)}")
    vec_factory = functools.partial(VMASVecEnv, scenario)
    return EnvEntry(functools.partial(VecParallelEnv, vec_factory), vec_factory=vec_factory)


register_family(PREFIX, _entry, "balance")
