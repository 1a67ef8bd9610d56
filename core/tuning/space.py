"""Search spaces: which config keys a study samples and from what range, read from configs/tune/<algo>.yaml or
a --space file with the sections of a run config:

    algo:
      lr: {low: 1.0e-4, high: 3.0e-3, log: true}     # float (log-uniform with log: true)
      ppo_epochs: {low: 3, high: 15}                  # int (both bounds integers; step: k for a grid)
      hidden_sizes: {choices: [[64, 64], [128, 128]]} # categorical
    train:
      n_envs: {choices: [4, 8]}

Every key must be a field of the algorithm's config class (algo) or of TrainConfig (train), and every value the
space can take must pass that class's checks; both are checked before the first trial.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

import yaml

from core.config import Yaml12Dumper, load_yaml
from core.errors import ConfigError, UserError
from core.paths import CONFIG_DIR
from core.run_config import TrainConfig

if TYPE_CHECKING:
    from optuna.trial import Trial

Kind = Literal["float", "int", "categorical"]
SPEC_KEYS = ("type", "low", "high", "log", "step", "choices")
SET_BY_TUNE = {"train.steps": "--steps", "train.seed": "--seeds"}  # keys the tuning command sets itself
PRIMITIVE = (bool, int, float, str, type(None))  # what optuna stores as a categorical choice


@dataclass(frozen=True)
class Param:
    """One searched key (`section.key`) and its distribution."""

    name: str
    kind: Kind
    low: float = 0.0
    high: float = 0.0
    log: bool = False
    step: float | None = None
    choices: tuple[Any, ...] = ()

    def suggest(self, trial: Trial) -> Any:
        """The trial's value of this key (sampled, or the stored one when the trial already has it)."""
        if self.kind == "float":
            return trial.suggest_float(self.name, self.low, self.high, log=self.log, step=self.step)
        if self.kind == "int":
            return trial.suggest_int(self.name, int(self.low), int(self.high), step=int(self.step or 1),
                                     log=self.log)
        labels = [c if isinstance(c, PRIMITIVE) else yaml_text(c) for c in self.choices]
        return self.choices[labels.index(trial.suggest_categorical(self.name, labels))]

    def extremes(self) -> list[Any]:
        """The values whose validity stands for the whole range: the bounds, or every choice."""
        return list(self.choices) if self.kind == "categorical" else [self.low, self.high]


def yaml_text(value: Any) -> str:
    """`value` in YAML flow style, as a key=value override and a config file read it back."""
    text = yaml.dump(value, Dumper=Yaml12Dumper, default_flow_style=True, width=1 << 16).strip()
    return text.removesuffix("...").strip()


def overrides(values: Mapping[str, Any]) -> list[str]:
    """`section.key=value` overrides of the sampled values."""
    return [f"{name}={yaml_text(value)}" for name, value in values.items()]


def default_space(algo: str, config_dir: Path = CONFIG_DIR) -> Path:
    return config_dir / "tune" / f"{algo}.yaml"


def load_space(path: Path, algo_config_class: type, variant: Mapping[str, Any]) -> list[Param]:
    """The parameters of a space file; ConfigError naming the file and key for anything it cannot search."""
    data = load_yaml(path)
    valid = {"algo": _field_names(algo_config_class), "train": _field_names(TrainConfig)}
    params: list[Param] = []
    for section, keys in data.items():
        if section not in valid:
            raise ConfigError(f"{path}: unknown section {section!r}; a search space has sections algo and train")
        if not isinstance(keys, Mapping) or not keys:
            raise ConfigError(f"{path}: section {section} must map keys to their ranges")
        for key, spec in keys.items():
            name = f"{section}.{key}"
            if key not in valid[section]:
                raise ConfigError(f"{path}: unknown key {name} in the search space; valid {section} keys: "
                                  f"{', '.join(sorted(valid[section]))}")
            if name in SET_BY_TUNE:
                raise ConfigError(f"{path}: {name} cannot be searched: the tuning command sets it "
                                  f"({SET_BY_TUNE[name]})")
            if section == "algo" and key in variant:
                raise ConfigError(f"{path}: {name} cannot be searched: the algorithm fixes it to {variant[key]!r}")
            params.append(_param(name, spec, f"{path}: {name}"))
    if not params:
        raise ConfigError(f"{path}: the search space is empty")
    return params


def _field_names(config_class: type) -> set[str]:
    return {f.name for f in dataclasses.fields(config_class)}


def _param(name: str, spec: Any, where: str) -> Param:
    if not isinstance(spec, Mapping):
        raise ConfigError(f"{where}: give {{low: L, high: H}} (with log: true for log-uniform) or {{choices: [...]}}")
    unknown = sorted(set(spec) - set(SPEC_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown field {unknown[0]!r}; valid fields: {', '.join(SPEC_KEYS)}")
    kind = spec.get("type") or ("categorical" if "choices" in spec else
                                "int" if all(_is_int(spec.get(k)) for k in ("low", "high")) else "float")
    if kind not in ("float", "int", "categorical"):
        raise ConfigError(f"{where}: type must be float, int or categorical, got {kind!r}")
    if kind == "categorical":
        choices = spec.get("choices")
        if not isinstance(choices, list) or not choices or set(spec) - {"type", "choices"}:
            raise ConfigError(f"{where}: a categorical key takes only choices: a non-empty list")
        if len({yaml_text(c) for c in choices}) < len(choices):
            raise ConfigError(f"{where}: choices lists a value twice")
        return Param(name, "categorical", choices=tuple(choices))
    low, high, log, step = spec.get("low"), spec.get("high"), spec.get("log", False), spec.get("step")
    number = _is_int if kind == "int" else _is_number
    if not (_is_number(low) and _is_number(high) and number(low) and number(high)) or low >= high:
        raise ConfigError(f"{where}: needs {kind} bounds low < high, got low={low!r}, high={high!r}")
    if not isinstance(log, bool) or (log and low <= 0):
        raise ConfigError(f"{where}: log must be true or false, and log-uniform needs low > 0")
    if step is not None and (not (_is_number(step) and number(step)) or step <= 0 or log):
        raise ConfigError(f"{where}: step must be a positive {kind} and cannot go with log: true")
    return Param(name, "int" if kind == "int" else "float", float(low), float(high), log,
                 None if step is None else float(step))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value  # not NaN


def check_values(params: list[Param], check: Any, where: Path) -> None:
    """Call `check(overrides)` (which raises ConfigError for a bad config) with each bound or choice of each
    parameter alone, so that a space that would give an invalid config fails before any trial."""
    for param in params:
        for value in param.extremes():
            try:
                check(overrides({param.name: value}))
            except ConfigError as exc:
                raise UserError(f"{where}: {param.name}={yaml_text(value)} is not a valid value: {exc}") from None
