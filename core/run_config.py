"""Run configuration shared by the training CLIs: the `train` section and layered YAML resolution.

A run config has three sections: `train` (TrainConfig), `algo` (the algorithm's config dataclass) and `env`
(keyword arguments for the env factory). Layers, later ones winning:
configs/algos/<algo>.yaml, configs/envs/<family>.yaml, configs/envs/<env>.yaml, configs/tuned/<algo>_<family>.yaml,
configs/tuned/<algo>_<env>.yaml, --config FILE, command-line flags, key=value overrides (dotted `algo.lr=3e-4`,
or a bare key of the algo or train section).
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from core.added_keys import new_env_options
from core.config import (
    Bounds,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Probability,
    check_keys,
    from_dict,
    load_yaml,
    merge,
    parse_overrides,
)
from core.errors import ConfigError
from core.paths import CONFIG_DIR, shipped_config

SECTIONS = ("train", "algo", "env")
MAX_ENVS = 1 << 16  # env copies in one vector env
MAX_WORKERS = 256  # env worker processes (--vec subproc)
DEVICE_PATTERN = r"cpu|cuda(:\d+)?|mps"
LoggerName = Literal["tensorboard", "wandb"]  # train.loggers: core.logger's backends


@dataclass
class TrainConfig:
    """Settings of a training run (budgets in env steps: one step of one env)."""

    steps: PositiveInt = 200_000  # env steps to train (rounded up to whole iterations)
    # env steps over which schedules annealed over the run (algo.lr_anneal, algo.entropy_final, ppo's anneal)
    # move; unset: the budget the run started with, kept when a resume changes --steps
    schedule_steps: PositiveInt | None = None
    n_envs: Annotated[int, Bounds(ge=1, le=MAX_ENVS)] = 8  # env copies stepped together
    vec: Literal["sync", "subproc"] = "sync"  # envs in this process, or one worker process each
    seed: Annotated[int, Bounds(ge=0, lt=2**32)] = 0  # every random stream of the run derives from it
    device: str = "cpu"  # cpu, cuda, cuda:N or mps
    torch_threads: Annotated[int, Bounds(ge=1, le=1024)] = 1  # torch and BLAS threads (the cores the run keeps busy)
    matmul_precision: Literal["ieee", "bf16", "tf32"] = "ieee"  # float32 CPU matmuls: see core.precision
    eval_interval: NonNegativeInt = 25_000  # env steps between greedy evaluations; 0: only at the end
    eval_episodes: PositiveInt = 32  # greedy episodes per evaluation
    eval_envs: Annotated[int, Bounds(ge=1, le=MAX_ENVS)] = 8  # env copies the evaluation plays at once
    checkpoint_interval: NonNegativeInt = 100_000  # env steps between periodic checkpoints (0: only at the end)
    keep_checkpoints: NonNegativeInt = 3  # periodic checkpoints kept (the newest, the best evaluation's); 0: all
    video_interval: NonNegativeInt = 0  # env steps between recorded greedy episodes (GIF + TensorBoard); 0: none
    worker_timeout_s: PositiveFloat = 60.0  # an env worker that does not answer this long stops the run
    target_return: float | None = None  # stop at the first evaluation whose mean return reaches it
    target_win_rate: Probability | None = None  # stop at the first evaluation whose win rate reaches it
    progress: bool = True  # tqdm progress bar (--no-progress: false)
    # where scalars, the config and videos go besides metrics.csv and evaluations.jsonl: tensorboard, wandb
    # (Weights & Biases, the `wandb` extra; see the guide's runs page)
    loggers: tuple[LoggerName, ...] = ("tensorboard",)
    wandb_project: str | None = None  # W&B project; unset: $WANDB_PROJECT, else concerto
    experiment: str | None = None  # the experiment grid this run is a cell of (set by experiments); W&B's group

    def __post_init__(self) -> None:
        if self.vec == "subproc" and self.n_envs > MAX_WORKERS:
            raise ValueError(f"vec=subproc starts one process per env and allows at most {MAX_WORKERS}, got "
                             f"n_envs={self.n_envs}; use vec=sync")
        if not re.fullmatch(DEVICE_PATTERN, self.device):
            raise ValueError(f"device must be cpu, cuda, cuda:N or mps, got {self.device!r}")
        repeated = [name for i, name in enumerate(self.loggers) if name in self.loggers[:i]]
        if repeated:
            raise ValueError(f"loggers names {repeated[0]} twice")


def _layer(path: Path, where: str) -> dict[str, Any]:
    data = load_yaml(path)
    check_keys(data, where)
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise ConfigError(f"{where}: unknown section{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                          f"valid sections: {', '.join(SECTIONS)}")
    for section, value in data.items():
        if value is not None and not isinstance(value, Mapping):
            raise ConfigError(f"{where}: section {section!r} must be a mapping")
    return {k: v or {} for k, v in data.items()}


def resolve_config(
    algo: str,
    env: str,
    algo_config_cls: type,
    algo_defaults: Mapping[str, Any] | None = None,
    config_file: str | None = None,
    cli_train: Mapping[str, Any] | None = None,
    overrides: list[str] | None = None,
    config_dir: Path = CONFIG_DIR,
) -> tuple[TrainConfig, Any, dict[str, Any]]:
    """Merge every layer and validate it into (TrainConfig, algo config, env kwargs).

    `algo_defaults` are the values that define the variant `algo` names (the registry's `defaults`: `--algo vdn`
    is ValueDecompositionConfig with mixer=vdn); a layer that changes one is refused rather than running another
    algorithm.
    """
    merged: dict[str, Any] = {"train": {}, "algo": dict(algo_defaults or {}), "env": {}}
    safe_env = env.replace(":", "_").replace(".", "_")
    family = env_family(env)
    layers = [config_dir / "algos" / f"{algo}.yaml"]
    for folder, stem in (("envs", ""), ("tuned", f"{algo}_")):
        layers += [config_dir / folder / f"{stem}{family}.yaml"] if family else []
        layers += [config_dir / folder / f"{stem}{safe_env}.yaml"]
    for path in layers:
        if path.is_file():
            merged = merge(merged, _layer(path, str(path)))
    if config_file:
        merged = merge(merged, _layer(shipped_config(config_file), config_file))
    merged = merge(merged, {"train": {k: v for k, v in (cli_train or {}).items() if v is not None}})
    merged = merge(merged, _route_overrides(parse_overrides(overrides or []), algo_config_cls))
    train = from_dict(TrainConfig, merged["train"], "train")
    algo_cfg: Any = from_dict(algo_config_cls, merged["algo"], "algo")  # an instance of algo_config_cls
    for key, fixed in (algo_defaults or {}).items():
        if getattr(algo_cfg, key) != fixed:
            raise ConfigError(f"--algo {algo} fixes algo.{key} to {fixed!r}, got {getattr(algo_cfg, key)!r}; "
                              f"choose another variant with --algo instead")
    check_keys(merged["env"], "env")
    return train, algo_cfg, new_env_options(env, merged["env"])


def env_family(env: str) -> str | None:
    """The benchmark family of a registered env name, its text before the first underscore (`lbf` for
    `lbf_8x8-2p-2f-coop`): its configs apply to every task of the family; None for a user's module:factory."""
    family, sep, _ = env.partition("_")
    return family if sep and ":" not in env and "." not in family else None


def _route_overrides(overrides: dict[str, Any], algo_config_cls: type) -> dict[str, Any]:
    """Send bare keys to the algo section (or train, if only it has the key)."""
    algo_keys = {f.name for f in dataclasses.fields(algo_config_cls)}
    train_keys = {f.name for f in dataclasses.fields(TrainConfig)}
    routed: dict[str, Any] = {}
    for key, value in overrides.items():
        if key in SECTIONS:
            if not isinstance(value, dict):
                raise ConfigError(f"override {key}={value!r} names a whole section; use {key}.KEY=VALUE")
            routed = merge(routed, {key: value})
        elif key in algo_keys:
            routed = merge(routed, {"algo": {key: value}})
        elif key in train_keys:
            routed = merge(routed, {"train": {key: value}})
        else:
            raise ConfigError(f"unknown override key {key!r}; use train.KEY, algo.KEY or env.KEY, or one of: "
                              f"{', '.join(sorted(algo_keys | train_keys))}")
    return routed


def env_dir_name(env: str) -> str:
    """An env name as one path component (user envs are named package.module:factory)."""
    return env.replace(":", "_").replace("/", "_")
