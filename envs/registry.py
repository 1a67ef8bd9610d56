"""Env registry: `register(name, factory, **defaults)`, `make(name, **kw)`, `make_vec(name, n_envs, ...)`.

A name is either registered or of the form `package.module:factory`, where `factory(**kwargs)` returns a
PettingZoo ParallelEnv (or AECEnv). Workers receive factories (picklable callables), never names, so a
user's registration does not need to exist inside worker processes.

Env options are checked against the factory's signature: unknown names are refused (unless it takes
**kwargs) and values are converted to and checked against its type annotations, like config values. A factory
that raises (or calls sys.exit) is reported in one line naming the user's file and line.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import math
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.config import UnsupportedType, coerce
from core.errors import UnknownNameError, UserError
from core.user_code import cwd_on_path, import_object, user_code
from envs.vec_env import VecEnv

VEC_KINDS = ("sync", "subproc")
RESERVED_OPTIONS = frozenset({"seed", "n_envs", "vec", "name", "worker_timeout_s"})  # make_vec's own arguments


@dataclass(frozen=True)
class EnvEntry:
    factory: Callable[..., Any]
    defaults: dict[str, Any] = field(default_factory=dict)
    vec_factory: Callable[..., VecEnv] | None = None  # natively batched: vec_factory(n_envs=, seed=, **kw)


@dataclass(frozen=True)
class EnvFamily:
    """Names `<prefix><task>` of one benchmark package whose tasks are too many to list (LBF's sizes, players
    and foods): `entry(task)` builds a task's entry, raising UnknownNameError for a task the package lacks."""

    prefix: str
    entry: Callable[[str], EnvEntry]
    example: str


_REGISTRY: dict[str, EnvEntry] = {}
_LAZY: dict[str, Callable[[], EnvEntry]] = {}  # names whose entry is built the first time they are resolved
_FAMILIES: dict[str, EnvFamily] = {}


def register(name: str, factory: Callable[..., Any], vec_factory: Callable[..., VecEnv] | None = None,
             **defaults: Any) -> None:
    """Register `factory` under `name`; `defaults` are keyword arguments that `make` overrides.

    `vec_factory(n_envs=..., seed=..., **kwargs)`, if given, builds a natively batched VecEnv that
    `make_vec` uses instead of wrapping copies of `factory` (the `vec` kind is then irrelevant).
    """
    if not callable(factory):
        raise TypeError(f"factory for {name!r} is not callable")
    _LAZY.pop(name, None)
    _REGISTRY[name] = EnvEntry(factory, dict(defaults), vec_factory)


def register_lazily(name: str, load: Callable[[], EnvEntry]) -> None:
    """Register `name` with the entry `load()` returns the first time it is resolved, so that a family of envs
    whose modules are heavy (the built-in simulator) is listed without importing them."""
    _LAZY[name] = load


def register_family(prefix: str, entry: Callable[[str], EnvEntry], example: str) -> None:
    """Resolve every name `<prefix><task>` by `entry(task)` (`example`: a task, for messages)."""
    _FAMILIES[prefix] = EnvFamily(prefix, entry, example)


def registered_names() -> list[str]:
    return sorted({*_REGISTRY, *_LAZY})


def resolve(name: str) -> EnvEntry:
    """The registry entry for `name`, importing `module:factory` names on demand."""
    if name in _LAZY:
        _REGISTRY[name] = _LAZY[name]()  # a loader that fails keeps the name listed, to fail the same way again
        del _LAZY[name]
    if name in _REGISTRY:
        return _REGISTRY[name]
    family = next((f for prefix, f in _FAMILIES.items() if name.startswith(prefix)), None)
    if family is not None:
        _REGISTRY[name] = family.entry(name[len(family.prefix):])
        return _REGISTRY[name]
    if ":" in name:
        factory = import_object(name, "env")
        if not callable(factory):
            raise UserError(f"env {name!r} is not callable")
        return EnvEntry(factory)
    raise UnknownNameError(
        f"unknown env {name!r}; registered envs: {', '.join(registered_names())}; families: "
        f"{', '.join(f'{f.prefix}<task> (e.g. {f.prefix}{f.example})' for f in _FAMILIES.values())} "
        f"(or give package.module:factory)"
    )


@dataclass(frozen=True)
class EnvFactory:
    """Picklable zero-argument builder of env `name`: `factory(**kwargs)`, a failure reported as the user's."""

    name: str
    factory: Callable[..., Any]
    kwargs: dict[str, Any]

    def __call__(self) -> Any:
        with user_code(f"env {self.name!r}: its factory failed"):
            return self.factory(**self.kwargs)


def env_factory(name: str, **overrides: Any) -> EnvFactory:
    """A picklable zero-argument callable that builds env `name` with defaults and `overrides` applied."""
    entry = resolve(name)
    return EnvFactory(name, entry.factory, checked_options(entry.factory, {**entry.defaults, **overrides}, name))


def make(name: str, **overrides: Any) -> Any:
    """Build one env (a PettingZoo env, as the factory returns it)."""
    return env_factory(name, **overrides)()


def make_vec(name: str, n_envs: int = 1, vec: str = "sync", seed: int | None = None,
             worker_timeout_s: float = 60.0, **overrides: Any) -> VecEnv:
    """Build a vector env of `n_envs` copies of `name`; `seed` is the default for `reset()`; subproc workers
    that do not answer within `worker_timeout_s` seconds are given up on."""
    from envs.subproc_vec_env import SubprocVecEnv
    from envs.sync_vec_env import SyncVecEnv

    if n_envs < 1:
        raise UserError(f"n_envs must be at least 1, got {n_envs}")
    if vec not in VEC_KINDS:
        raise UserError(f"unknown vec kind {vec!r}; valid: {', '.join(VEC_KINDS)}")
    entry = resolve(name)
    if entry.vec_factory is not None:
        kwargs = checked_options(entry.factory, {**entry.defaults, **overrides}, name)
        with user_code(f"env {name!r}: its vector env factory failed"):
            return entry.vec_factory(n_envs=n_envs, seed=seed, name=name, **kwargs)
    factory = env_factory(name, **overrides)
    if vec == "sync":
        return SyncVecEnv([factory] * n_envs, name=name, seed=seed)
    with cwd_on_path():  # spawned workers import a user's `module:factory` by name
        return SubprocVecEnv([factory] * n_envs, name=name, seed=seed, worker_timeout_s=worker_timeout_s)


def check_env_options(options: Mapping[str, Any]) -> None:
    """UserError for an env option that is one of `make_vec`'s own arguments: a run sets those itself."""
    reserved = sorted(set(options) & RESERVED_OPTIONS)
    if reserved:
        raise UserError(f"env.{reserved[0]} is not an env option here: the run sets it (--seed, --n-envs, --vec, "
                        "train.worker_timeout_s)")


def checked_options(factory: Callable[..., Any], kwargs: dict[str, Any], name: str) -> dict[str, Any]:
    """`kwargs` checked against `factory`'s signature: names, and values against the annotations `coerce` knows."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return kwargs
    valid = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unknown = sorted(set(kwargs) - set(valid))
    if unknown and not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        raise UserError(f"env {name!r} does not accept {', '.join(map(str, unknown))}; valid options: "
                        f"{', '.join(valid) or 'none'}")
    for key, value in kwargs.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise UserError(f"env.{key} must be a finite number, got {value}")
    hints = _param_hints(factory)
    checked = dict(kwargs)
    for key in set(kwargs) & set(valid) & set(hints):
        # an annotation config values never have (np.ndarray, Sequence, ...) stays unchecked
        with contextlib.suppress(UnsupportedType):
            checked[key] = coerce(kwargs[key], hints[key], f"env.{key}")
    return checked


def _param_hints(factory: Callable[..., Any]) -> dict[str, Any]:
    """The resolved annotations of `factory`'s parameters (of the function under partials, of __init__ for a
    class); empty where they do not resolve."""
    target: Any = factory
    while isinstance(target, functools.partial):
        target = target.func
    if inspect.isclass(target):
        target = target.__init__
    try:
        return typing.get_type_hints(inspect.unwrap(target), include_extras=True)
    except Exception:  # forward references the user's module cannot resolve, exotic callables
        return {}
