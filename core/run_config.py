"""Run configuration shared by the training CLIs: the `train` section and layered YAML resolution.

A run config has three sections: `train` (TrainConfig), `algo` (the algorithm's config dataclass) and `env`
(keyword arguments for the env factory). Layers, later ones winning:
configs/algos/<algo>.yaml, configs/envs/<env>.yaml, configs/tuned/<algo>_<env>.yaml, --config FILE,
command-line flags, key=value overrides (dotted `algo.lr=3e-4`, or a bare key of the algo or train section).
"""
from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from core.config import from_dict, load_yaml, merge, parse_overrides, require_at_least_one
from core.errors import ConfigError, UserError
from core.precision import MATMUL_PRECISIONS
from core.paths import CONFIG_DIR

SECTIONS = ("train", "algo", "env")


@dataclass
class TrainConfig:
    """Settings of a training run (budgets in env steps: one step of one env)."""

    steps: int = 200_000
    n_envs: int = 8
    vec: str = "sync"
    seed: int = 0
    device: str = "cpu"
    torch_threads: int = 1
    matmul_precision: str = "ieee"  # float32 matmuls on CPU: ieee (exact), bf16 (AMX/AVX512-BF16) or tf32
    eval_interval: int = 25_000
    eval_episodes: int = 32
    eval_envs: int = 8
    checkpoint_interval: int = 0
    target_return: float | None = None
    target_win_rate: float | None = None
    progress: bool = True

    def __post_init__(self) -> None:
        require_at_least_one(self, "steps", "n_envs", "eval_episodes", "eval_envs", "torch_threads")
        for key in ("eval_interval", "checkpoint_interval"):
            if getattr(self, key) < 0:
                raise ValueError(f"{key} must be 0 (off) or positive, got {getattr(self, key)}")
        if self.matmul_precision not in MATMUL_PRECISIONS:
            raise ValueError(f"matmul_precision must be one of {', '.join(MATMUL_PRECISIONS)}, "
                             f"got {self.matmul_precision!r}")
        if self.vec not in ("sync", "subproc"):
            raise ValueError(f"vec must be sync or subproc, got {self.vec!r}")
        if not re.fullmatch(r"cpu|cuda(:\d+)?|mps", self.device):
            raise ValueError(f"device must be cpu, cuda, cuda:N or mps, got {self.device!r}")


def _layer(path: Path, where: str) -> dict[str, Any]:
    data = load_yaml(path)
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
    """Merge every layer and validate it into (TrainConfig, algo config, env kwargs)."""
    merged: dict[str, Any] = {"train": {}, "algo": dict(algo_defaults or {}), "env": {}}
    safe_env = env.replace(":", "_").replace(".", "_")
    for path in (config_dir / "algos" / f"{algo}.yaml", config_dir / "envs" / f"{safe_env}.yaml",
                 config_dir / "tuned" / f"{algo}_{safe_env}.yaml"):
        if path.is_file():
            merged = merge(merged, _layer(path, str(path)))
    if config_file:
        merged = merge(merged, _layer(Path(config_file), config_file))
    merged = merge(merged, {"train": {k: v for k, v in (cli_train or {}).items() if v is not None}})
    merged = merge(merged, _route_overrides(parse_overrides(overrides or []), algo_config_cls))
    train = from_dict(TrainConfig, merged["train"], "train")
    algo_cfg = from_dict(algo_config_cls, merged["algo"], "algo")
    return train, algo_cfg, dict(merged["env"])


def _route_overrides(overrides: dict[str, Any], algo_config_cls: type) -> dict[str, Any]:
    """Send bare keys to the algo section (or train, if only it has the key)."""
    algo_keys = {f.name for f in dataclasses.fields(algo_config_cls)}
    train_keys = {f.name for f in dataclasses.fields(TrainConfig)}
    routed: dict[str, Any] = {}
    for key, value in overrides.items():
        if key in SECTIONS and isinstance(value, dict):
            routed = merge(routed, {key: value})
        elif key in algo_keys:
            routed = merge(routed, {"algo": {key: value}})
        elif key in train_keys:
            routed = merge(routed, {"train": {key: value}})
        else:
            raise ConfigError(f"unknown override key {key!r}; use train.KEY, algo.KEY or env.KEY, or one of: "
                              f"{', '.join(sorted(algo_keys | train_keys))}")
    return routed


def make_run_dir(logdir: str | Path, env: str, algo: str, seed: int) -> Path:
    """runs/<env>/<algo>/<YYYYmmdd-HHMMSS>-seed<k>/ (suffixed if it already exists)."""
    safe_env = env.replace(":", "_").replace("/", "_")
    base = Path(logdir) / safe_env / algo / f"{time.strftime('%Y%m%d-%H%M%S')}-seed{seed}"
    path, k = base, 1
    while path.exists():
        k += 1
        path = base.with_name(f"{base.name}-{k}")
    try:
        path.mkdir(parents=True)
    except OSError as exc:
        raise UserError(f"cannot create the run directory under --logdir {logdir}: {exc.strerror}") from None
    return path
