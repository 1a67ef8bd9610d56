"""Level-Based Foraging and the Multi-Robot Warehouse (optional extras `lbf` and `rware`): `lbf_<task>` and
`rware_<task>`, any task the packages register with gymnasium.

    lbf_8x8-2p-2f-coop       lbforaging's Foraging-8x8-2p-2f-coop-v3 (`-2s`: sight 2; `-coop`: forced cooperation)
    rware_tiny-2ag           rware's rware-tiny-2ag-v2 (`-easy` / `-hard`: longer / shorter request queues)

Both are multi-agent gymnasium envs (`tuple_agents.TupleAgentsEnv` adapts them); options are the env class's
constructor arguments (`env.sight=3`, `env.max_episode_steps=25`), checked against its signature. Both packages
end an episode that runs out of time as terminated, which would stop bootstrapping where only time ran out:
their own limit is switched off and a gymnasium TimeLimit of the same length truncates instead. The packages
keep their random state inside the env, so a resumed run continues with freshly seeded envs (it says so).
"""
from __future__ import annotations

import functools
import importlib
import sys
from dataclasses import dataclass
from typing import Any

import gymnasium
from gymnasium.envs.registration import load_env_creator
from gymnasium.wrappers import TimeLimit

from core.errors import MissingDependencyError, UnknownNameError
from core.paths import install_hint
from envs.registry import EnvEntry, checked_options, register_family
from envs.tuple_agents import TupleAgentsEnv


@dataclass(frozen=True)
class Suite:
    package: str
    extra: str
    gym_id: str  # a task's gymnasium id, {} for the task
    example: str
    limit_option: str  # the constructor argument of the episode limit
    no_limit: int | None  # its value that switches the package's own limit off


SUITES = {
    "lbf_": Suite("lbforaging", "lbf", "Foraging-{}-v3", "8x8-2p-2f-coop", "max_episode_steps", sys.maxsize),
    "rware_": Suite("rware", "rware", "rware-{}-v2", "tiny-2ag", "max_steps", None),
}


def _task_id(prefix: str, task: str) -> str:
    """The gymnasium id of `task`, importing its package (which registers its ids)."""
    suite = SUITES[prefix]
    try:
        importlib.import_module(suite.package)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == suite.package:
            raise MissingDependencyError(f"env {prefix}{task} needs the {suite.package} package: "
                                         f"{install_hint(suite.extra)}") from None
        raise
    gym_id = suite.gym_id.format(task)
    if gym_id not in gymnasium.registry:
        stem = suite.gym_id.split("{}")[0]
        known = sorted(k[len(stem):].rsplit("-v", 1)[0] for k in gymnasium.registry if k.startswith(stem))
        raise UnknownNameError(f"unknown {suite.package} task {task!r} (env {prefix}{task}); {len(known)} tasks, "
                               f"e.g. {', '.join(known[:6])}, ... (gymnasium id {suite.gym_id.format('<task>')})")
    return gym_id


def make_suite_env(prefix: str, task: str, **options: Any) -> TupleAgentsEnv:
    """Build `<prefix><task>` with `options` passed to its env class, its time limit a truncation."""
    suite, gym_id = SUITES[prefix], _task_id(prefix, task)
    spec = gymnasium.registry[gym_id]
    entry = spec.entry_point
    env_class = load_env_creator(entry) if isinstance(entry, str) else entry
    assert env_class is not None  # both packages register their env classes
    options = checked_options(env_class, options, f"{prefix}{task}")
    limit = int(options.pop(suite.limit_option, spec.kwargs[suite.limit_option]))
    env = gymnasium.make(gym_id, disable_env_checker=True, **options, **{suite.limit_option: suite.no_limit})
    return TupleAgentsEnv(TimeLimit(env, limit), max_cycles=limit)


def _entry(prefix: str, task: str) -> EnvEntry:
    _task_id(prefix, task)  # an unknown task or a missing package fails when the name is resolved
    return EnvEntry(functools.partial(make_suite_env, prefix, task))


for _prefix, _suite in SUITES.items():
    register_family(_prefix, functools.partial(_entry, _prefix), _suite.example)
