"""Multi-agent MuJoCo (optional extra `mamujoco`: gymnasium-robotics): `mamujoco_<scenario>_<partition>`.

    mamujoco_HalfCheetah_2x3     the cheetah's 6 joints split into 2 agents of 3 (MaMuJoCo's `agent_conf`)
    mamujoco_Ant_2x4             mamujoco_Hopper_3x1      mamujoco_HalfCheetah_6x1      mamujoco_Humanoid_9|8

MaMuJoCo speaks PettingZoo (its own `mamujoco_v1.parallel_env`), so its envs go through the PettingZoo
adapter. Options are MaMuJoCo's (`env.agent_obsk=2`: how many joints away an agent sees;
`env.local_categories`, `env.global_categories`: which quantities) and, passed on to the single-agent gymnasium
env, its own (`env.max_episode_steps=500`, `env.ctrl_cost_weight=0.1`). An episode ends as the single-agent
env's does: 1,000 steps (truncated) or a fall (terminated, on Ant, Hopper, Humanoid, Walker2d). Every agent
gets the robot's reward; an episode's return is that reward summed over steps once, as published MaMuJoCo
returns are (not once per agent).
"""
from __future__ import annotations

import functools
import importlib
import inspect
import io
import os
import warnings
from contextlib import redirect_stderr
from typing import Any

import gymnasium
from gymnasium.envs.registration import load_env_creator

from core.config import coerce
from core.errors import MissingDependencyError, UnknownNameError, UserError
from core.paths import install_hint
from envs.registry import EnvEntry, checked_options, register_family

PREFIX = "mamujoco_"
# MaMuJoCo's partitions per scenario (gymnasium_robotics/envs/multiagent_mujoco/obsk.py, get_parts_and_edges, at
# gymnasium-robotics 1.4.2; CoupledHalfCheetah_1p1 left out: it fails inside the package with mujoco 4.0); the
# ManySegment scenarios take <segments>x<segments per agent>
PARTITIONS = {
    "HalfCheetah": ("2x3", "6x1"), "Ant": ("2x4", "2x4d", "4x2"), "Hopper": ("3x1",), "Humanoid": ("9|8",),
    "HumanoidStandup": ("9|8",), "Reacher": ("2x1",), "Pusher": ("3p",), "Swimmer": ("2x1",), "Walker2d": ("2x3",),
    "ManySegmentSwimmer": ("<n>x<k>",), "ManySegmentAnt": ("<n>x<k>",),
}


MAMUJOCO_OPTIONS = ("agent_obsk", "local_categories", "global_categories")  # parallel_env's own; the rest go on


def _mujoco_warning(message: str) -> None:
    """MuJoCo's warnings as Python warnings (its own handler prints them and appends them to MUJOCO_LOG.TXT in
    the working directory), less the compiler's deprecation notice about the models' `settotalmass`."""
    if "settotalmass" not in message:
        warnings.warn(f"MuJoCo: {message}", RuntimeWarning, stacklevel=2)


def _mamujoco() -> Any:
    if not os.environ.get("DISPLAY"):  # headless: MuJoCo draws frames (evaluate --gif) through EGL
        os.environ.setdefault("MUJOCO_GL", "egl")
    try:
        with redirect_stderr(io.StringIO()):  # gymnasium-robotics prints a notice about its Adroit envs
            module = importlib.import_module("gymnasium_robotics.envs.multiagent_mujoco.mamujoco_v1")
    except (ModuleNotFoundError, gymnasium.error.DependencyNotInstalled) as exc:
        missing = exc.name if isinstance(exc, ModuleNotFoundError) else "mujoco"
        if missing and missing.split(".")[0] in ("gymnasium_robotics", "mujoco"):
            raise MissingDependencyError(f"mamujoco_<scenario>_<partition> envs need gymnasium-robotics and "
                                         f"MuJoCo: {install_hint('mamujoco')}") from None
        raise
    importlib.import_module("mujoco").set_mju_user_warning(_mujoco_warning)
    return module


def _checked(name: str, scenario: str, options: dict[str, Any]) -> dict[str, Any]:
    """`options` of env `name` checked: MaMuJoCo's own, gymnasium.make's `max_episode_steps`, and the rest against
    the single-agent env class of `scenario` (where gymnasium registers one)."""
    from gymnasium.envs.mujoco.mujoco_env import MujocoEnv  # imports mujoco: only once the extra is known present

    for key, least in (("agent_obsk", 0), ("max_episode_steps", 1)):
        if key in options:
            options = {**options, key: coerce(options[key], int, f"env.{key}")}
            if options[key] < least:
                raise UserError(f"env.{key} must be at least {least}, got {options[key]}")
    own = {k: v for k, v in options.items() if k in MAMUJOCO_OPTIONS}
    rest = {k: v for k, v in options.items() if k not in MAMUJOCO_OPTIONS}
    spec = gymnasium.registry.get(f"{scenario}-v5")
    if spec is not None and isinstance(spec.entry_point, str):
        env_class = load_env_creator(spec.entry_point)
        valid = [*_named_parameters(env_class), *_named_parameters(MujocoEnv), *MAMUJOCO_OPTIONS, "max_episode_steps"]
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise UserError(f"env {name!r} does not accept {', '.join(unknown)}; valid options: "
                            f"{', '.join(dict.fromkeys(valid))}")
        limit = {k: rest.pop(k) for k in ("max_episode_steps",) if k in rest}
        rest = {**checked_options(env_class, rest, name), **limit}  # values against its annotations
    return {**own, **rest}


def _named_parameters(cls: Any) -> list[str]:
    params = inspect.signature(cls.__init__).parameters.values()
    return [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"]


def make_mamujoco(scenario: str, partition: str, **options: Any) -> Any:
    """MaMuJoCo's parallel env of `scenario` split by `partition`; `options` go to `mamujoco_v1.parallel_env`."""
    module = _mamujoco()
    env = module.parallel_env(scenario, partition, **_checked(f"{PREFIX}{scenario}_{partition}", scenario, options))
    env.max_cycles = env.single_agent_env.spec.max_episode_steps  # the episode limit, as PettingZoo envs name it
    env.team_reward = True  # every agent gets the robot's reward: an episode's return counts it once
    return env


def _entry(task: str) -> EnvEntry:
    scenario, _, partition = task.partition("_")
    known = PARTITIONS.get(scenario, ())
    if not partition or not (partition in known or known == ("<n>x<k>",)):
        raise UnknownNameError(f"unknown MaMuJoCo task {task!r}; names are mamujoco_<scenario>_<partition>: "
                               + ", ".join(f"{s}_{'/'.join(p)}" for s, p in PARTITIONS.items()))
    _mamujoco()  # a missing package fails when the name is resolved
    return EnvEntry(functools.partial(make_mamujoco, scenario, partition))


register_family(PREFIX, _entry, "HalfCheetah_2x3")
