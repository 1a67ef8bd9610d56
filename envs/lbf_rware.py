"""Level-Based Foraging and the Multi-Robot Warehouse (optional extras `lbf` and `rware`): `lbf_<task>` and
`rware_<task>`, any task the packages register with gymnasium.

    lbf_8x8-2p-2f-coop       lbforaging's Foraging-8x8-2p-2f-coop-v3 (`2s-` before the size: sight 2; `-coop`:
                             forced cooperation); a name of that pattern the package does not register (it
                             registers 1-4 foods and sides 5-19) is built from it: EPyMARL's 15x15-4p-5f
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
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium
from gymnasium.envs.registration import load_env_creator
from gymnasium.wrappers import TimeLimit

from core.config import coerce
from core.errors import MissingDependencyError, UnknownNameError, UserError
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
    # a task name the package does not register, as a registered id and the arguments that make it that task
    unregistered: Callable[[str], tuple[str, dict[str, Any]] | None] | None = None


LBF_TASK = re.compile(r"(2s-)?(\d+)x(\d+)-(\d+)p-(\d+)f(-coop)?")
LBF_BASE = "Foraging-8x8-2p-1f-v3"  # a registered task whose other arguments all LBF tasks share


def _lbf_pattern(task: str) -> tuple[str, dict[str, Any]] | None:
    """A task named by lbforaging's pattern ([2s-]RxC-Pp-Ff[-coop]) as a registered id and the constructor
    arguments that make it that task, or None if the name does not follow the pattern."""
    match = LBF_TASK.fullmatch(task)
    if match is None:
        return None
    sight2, rows, cols, players, foods, coop = match.groups()
    field = (int(rows), int(cols))
    return LBF_BASE, dict(field_size=field, players=int(players), max_num_food=int(foods), force_coop=bool(coop),
                          sight=2 if sight2 else max(field))


SUITES = {
    "lbf_": Suite("lbforaging", "lbf", "Foraging-{}-v3", "8x8-2p-2f-coop", "max_episode_steps", sys.maxsize,
                  _lbf_pattern),
    "rware_": Suite("rware", "rware", "rware-{}-v2", "tiny-2ag", "max_steps", None),
}


def _task(prefix: str, task: str) -> tuple[str, dict[str, Any]]:
    """The gymnasium id of `task` and the constructor arguments that make it that task (none for a registered
    one), importing its package (which registers its ids)."""
    suite = SUITES[prefix]
    try:
        importlib.import_module(suite.package)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == suite.package:
            raise MissingDependencyError(f"env {prefix}{task} needs the {suite.package} package: "
                                         f"{install_hint(suite.extra)}") from None
        raise
    gym_id = suite.gym_id.format(task)
    if gym_id in gymnasium.registry:
        return gym_id, {}
    built = suite.unregistered(task) if suite.unregistered else None
    if built is not None:
        return built
    stem = suite.gym_id.split("{}")[0]
    known = sorted(k[len(stem):].rsplit("-v", 1)[0] for k in gymnasium.registry if k.startswith(stem))
    raise UnknownNameError(f"unknown {suite.package} task {task!r} (env {prefix}{task}); {len(known)} tasks, "
                           f"e.g. {', '.join(known[:6])}, ... (gymnasium id {suite.gym_id.format('<task>')})")


def make_suite_env(prefix: str, task: str, **options: Any) -> TupleAgentsEnv:
    """Build `<prefix><task>` with `options` passed to its env class, its time limit a truncation."""
    suite = SUITES[prefix]
    gym_id, task_options = _task(prefix, task)
    spec = gymnasium.registry[gym_id]
    entry = spec.entry_point
    env_class = load_env_creator(entry) if isinstance(entry, str) else entry
    assert env_class is not None  # both packages register their env classes
    options = {**task_options, **checked_options(env_class, options, f"{prefix}{task}")}
    key = suite.limit_option
    limit = coerce(options.pop(key, spec.kwargs[key]), int, f"env.{key}")  # the episode limit: here, not the package's
    if limit < 1:
        raise UserError(f"env.{key} must be at least 1, got {limit}")
    # the class itself, not gymnasium.make: make takes `max_episode_steps` (LBF's limit option) as its own
    # argument, for a TimeLimit of its own, and would leave the package's limit on (an episode at the limit then
    # ends terminated as well as truncated, with no final observation to bootstrap from)
    env = env_class(**{**spec.kwargs, **options, suite.limit_option: suite.no_limit})
    assert isinstance(env, gymnasium.Env)  # both packages' env classes are gymnasium envs
    return TupleAgentsEnv(TimeLimit(env, limit), max_cycles=limit)


def _entry(prefix: str, task: str) -> EnvEntry:
    _task(prefix, task)  # an unknown task or a missing package fails when the name is resolved
    return EnvEntry(functools.partial(make_suite_env, prefix, task))


for _prefix, _suite in SUITES.items():
    register_family(_prefix, functools.partial(_entry, _prefix), _suite.example)
