"""Env registry: `register(name, factory, **defaults)`, `make(name, **kw)`, `make_vec(name, n_envs, ...)`.

A name is either registered or of the form `package.module:factory`, where `factory(**kwargs)` returns a
PettingZoo ParallelEnv (or AECEnv). Workers receive factories (picklable callables), never names, so a
user's registration does not need to exist inside worker processes.
"""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from core.callbacks import import_object
from core.errors import UnknownNameError, UserError
from envs.vec_env import VecEnv

VEC_KINDS = ("sync", "subproc")


@dataclass(frozen=True)
class EnvEntry:
    factory: Callable[..., Any]
    defaults: dict[str, Any] = field(default_factory=dict)
    vec_factory: Callable[..., VecEnv] | None = None  # natively batched: vec_factory(n_envs=, seed=, **kw)


_REGISTRY: dict[str, EnvEntry] = {}


def register(name: str, factory: Callable[..., Any], vec_factory: Callable[..., VecEnv] | None = None,
             **defaults: Any) -> None:
    """Register `factory` under `name`; `defaults` are keyword arguments that `make` overrides.

    `vec_factory(n_envs=..., seed=..., **kwargs)`, if given, builds a natively batched VecEnv that
    `make_vec` uses instead of wrapping copies of `factory` (the `vec` kind is then irrelevant).
    """
    if not callable(factory):
        raise TypeError(f"factory for {name!r} is not callable")
    _REGISTRY[name] = EnvEntry(factory, dict(defaults), vec_factory)


def registered_names() -> list[str]:
    return sorted(_REGISTRY)


def resolve(name: str) -> EnvEntry:
    """The registry entry for `name`, importing `module:factory` names on demand."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    if ":" in name:
        factory = import_object(name, "env")
        if not callable(factory):
            raise UserError(f"env {name!r} is not callable")
        return EnvEntry(factory)
    raise UnknownNameError(
        f"unknown env {name!r}; registered envs: {', '.join(registered_names())} "
        f"(or give package.module:factory)"
    )


def env_factory(name: str, **overrides: Any) -> Callable[[], Any]:
    """A picklable zero-argument callable that builds env `name` with defaults and `overrides` applied."""
    entry = resolve(name)
    kwargs = {**entry.defaults, **overrides}
    _check_kwargs(name, entry.factory, kwargs)
    return functools.partial(entry.factory, **kwargs)


def make(name: str, **overrides: Any) -> Any:
    """Build one env (a PettingZoo env, as the factory returns it)."""
    return env_factory(name, **overrides)()


def make_vec(name: str, n_envs: int = 1, vec: str = "sync", seed: int | None = None, **overrides: Any) -> VecEnv:
    """Build a vector env of `n_envs` copies of `name`; `seed` is the default for `reset()`."""
    from envs.subproc_vec_env import SubprocVecEnv
    from envs.sync_vec_env import SyncVecEnv

    if n_envs < 1:
        raise UserError(f"n_envs must be at least 1, got {n_envs}")
    if vec not in VEC_KINDS:
        raise UserError(f"unknown vec kind {vec!r}; valid: {', '.join(VEC_KINDS)}")
    entry = resolve(name)
    if entry.vec_factory is not None:
        kwargs = {**entry.defaults, **overrides}
        _check_kwargs(name, entry.factory, kwargs)
        return entry.vec_factory(n_envs=n_envs, seed=seed, name=name, **kwargs)
    factory = env_factory(name, **overrides)
    cls = SyncVecEnv if vec == "sync" else SubprocVecEnv
    return cls([factory] * n_envs, name=name, seed=seed)


def _check_kwargs(name: str, factory: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    valid = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unknown = sorted(set(kwargs) - set(valid))
    if unknown:
        raise UserError(f"env {name!r} does not accept {', '.join(unknown)}; valid options: "
                        f"{', '.join(valid) or 'none'}")
