"""The config of a resumed run: the checkpoint's own config with the user's new settings on top.

Settings that only steer the rest of the run (the budget, learning rates, evaluation, checkpoints, logging)
may change and take effect; what would make the resumed run another experiment is refused with one line:
the algorithm variant, the env and its options, the number and kind of env copies, the seed. A changed
network shape is caught when the weights load.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.added_keys import saved_env_options, saved_section
from core.config import from_dict, merge, parse_overrides
from core.errors import UserError
from core.paths import shipped_config
from core.run_config import TrainConfig, _layer, _route_overrides

FIXED_TRAIN_KEYS = ("n_envs", "vec", "seed")


def resume_config(meta: Mapping[str, Any], algo_config_cls: type, variant: Mapping[str, Any],
                  config_file: str | None, cli_train: Mapping[str, Any], overrides: list[str] | None,
                  where: str) -> tuple[TrainConfig, Any, dict[str, Any]]:
    """(TrainConfig, algo config, env kwargs) for resuming the checkpoint whose metadata is `meta`."""
    saved = meta.get("config")
    if not isinstance(saved, Mapping) or not all(isinstance(saved.get(k), Mapping) for k in ("train", "algo", "env")):
        raise UserError(f"checkpoint {where} has no config to resume from")
    saved_env = saved_env_options(str(meta.get("env", "")), saved["env"])
    merged: dict[str, Any] = {"train": dict(saved["train"]), "algo": saved_section(algo_config_cls, saved["algo"]),
                              "env": saved_env}
    if config_file:
        merged = merge(merged, _layer(shipped_config(config_file), config_file))
    merged = merge(merged, {"train": {k: v for k, v in cli_train.items() if v is not None}})
    merged = merge(merged, _route_overrides(parse_overrides(overrides or []), algo_config_cls))
    changed = [f"train.{k}" for k in FIXED_TRAIN_KEYS if merged["train"].get(k) != saved["train"].get(k)]
    changed += [f"algo.{k}" for k in variant if merged["algo"].get(k) != saved["algo"].get(k)]
    if merged["env"] != saved_env:
        changed.append("env options")
    if changed:
        raise UserError(f"cannot change {', '.join(changed)} when resuming {where}; start a new run instead")
    return (from_dict(TrainConfig, merged["train"], "train"), from_dict(algo_config_cls, merged["algo"], "algo"),
            dict(merged["env"]))
