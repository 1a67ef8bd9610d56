"""Config keys added since runs were saved: the value that a run saved without one acted as, so that an old run
evaluates and resumes as it ran rather than with a newer default. Env options are free-form, so an added one is
recorded by every new run (`new_env_options`), and its absence marks a run saved before it.

Every key here came within checkpoint format 2 (`core.checkpoint.FORMAT`, the only one that loads), so each
records the commit that added it: runs saved before that commit need the entry.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AddedKey:
    """Key `key` of config class `config` (module.QualName), which runs saved before `added` lack and ran as
    `saved_without`."""

    config: str
    key: str
    saved_without: Any
    added: str  # date and commit that added the key


ADDED_KEYS = (
    AddedKey("marl.algos.coma.COMAConfig", "policy_gradient", "sampled", added="2026-11-25 253f5f3"),
    AddedKey("marl.algos.value_decomposition.ValueDecompositionConfig", "td_lambda", 0.0, added="2026-11-25 5803a4f"),
    AddedKey("marl.algos.mappo.MAPPOConfig", "agent_specific_state", False, added="2026-11-26 90a3576"),
    AddedKey("marl.algos.coma.COMAConfig", "reverse_kl_final", 0.0, added="2026-11-27 29a8f22"),
)


def saved_section(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """Config section `data`, saved by a run as config class `cls`, with the keys it predates set as it ran."""
    name = f"{cls.__module__}.{cls.__qualname__}"
    return {**{k.key: k.saved_without for k in ADDED_KEYS if k.config == name}, **data}


@dataclass(frozen=True)
class AddedEnvOption:
    """Option `key` of the envs whose names start with `prefix`: new runs record it (`default` unless set), and
    runs saved before `added` lack it and ran as `saved_without`."""

    prefix: str
    key: str
    default: Any
    saved_without: Any
    added: str


ADDED_ENV_OPTIONS = (
    AddedEnvOption("smac_", "fixed_enemy_order", False, True, added="2026-11-29 a033344"),
)


def new_env_options(env: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """A new run's env options, with every added option of `env` recorded."""
    return {**{k.key: k.default for k in ADDED_ENV_OPTIONS if env.startswith(k.prefix)}, **options}


def saved_env_options(env: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Env options saved by a run on `env`, with the options it predates set as it ran."""
    return {**{k.key: k.saved_without for k in ADDED_ENV_OPTIONS if env.startswith(k.prefix)}, **options}
