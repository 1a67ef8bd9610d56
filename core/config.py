"""Typed configuration: YAML defaults validated into dataclasses, `key=value` overrides.

A config section is a dataclass. `from_dict` rejects unknown keys (listing the valid ones), values of the
wrong type (naming the key), non-finite floats, and values outside the range a field declares with
`Annotated[type, Bounds(...)]` or an alias (`PositiveFloat`, `Probability`, `PositiveInt`, ...): range checks
live here and nowhere else. `parse_overrides` turns CLI `key=value` strings into a nested dict. Numbers are
read as YAML 1.2 reads them, in files and overrides alike: `3e-4` is a float, `010` is ten, `1:30` a string
(and `2020-01-01` too: YAML 1.2 has no implicit dates).
"""
from __future__ import annotations

import dataclasses
import enum
import itertools
import math
import numbers
import re
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml

from core.buffers.memory import available_memory, format_bytes
from core.errors import ConfigError

T = TypeVar("T")


class Constraint:
    """Metadata of an `Annotated` config field, checked by `from_dict` once the value has the right type."""

    def check(self, value: Any, key: str) -> None:
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class Bounds(Constraint):
    """A numeric range: any of gt/ge (lower) and lt/le (upper) bounds."""

    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None

    def check(self, value: Any, key: str) -> None:
        if ((self.gt is not None and not value > self.gt) or (self.ge is not None and not value >= self.ge)
                or (self.lt is not None and not value < self.lt) or (self.le is not None and not value <= self.le)):
            raise ConfigError(f"{key} must be {self.describe()}, got {value!r}")

    def describe(self) -> str:
        """`> 0`, `>= 1`, `in [0, 1]`, `in (0, 1]`, ..."""
        low = next(((sign, b) for sign, b in ((">", self.gt), (">=", self.ge)) if b is not None), None)
        high = next(((sign, b) for sign, b in (("<", self.lt), ("<=", self.le)) if b is not None), None)
        if low and high:
            return f"in {'(' if low[0] == '>' else '['}{_num(low[1])}, {_num(high[1])}{')' if high[0] == '<' else ']'}"
        sign, bound = low or high or ("", "")
        return f"{sign} {_num(bound)}"


@dataclasses.dataclass(frozen=True)
class MinLength(Constraint):
    """A list with at least `n` entries."""

    n: int = 1

    def check(self, value: Any, key: str) -> None:
        if len(value) < self.n:
            entries = "1 entry" if self.n == 1 else f"{self.n} entries"
            raise ConfigError(f"{key} must have at least {entries}, got {list(value)!r}")


@dataclasses.dataclass(frozen=True)
class NetworkFits(Constraint):
    """Hidden layer widths whose weights, with their gradients and Adam's two moments (16 bytes each), fit in
    the memory available. Inputs and outputs count as one unit, so this is a lower bound: what fits passes."""

    def check(self, value: Any, key: str) -> None:
        weights = sum(a * b for a, b in itertools.pairwise(value)) + value[0] + value[-1]
        free = available_memory()
        if free is not None and 16 * weights > free:
            raise ConfigError(f"{key} ({len(value)} layers up to {max(value)} units wide) makes networks of at least "
                              f"{format_bytes(16 * weights)} (weights, gradients, optimiser state) but "
                              f"{format_bytes(free)} of memory is available")


def _num(bound: float | str) -> str:
    return str(int(bound)) if isinstance(bound, float) and bound.is_integer() else str(bound)


PositiveFloat = Annotated[float, Bounds(gt=0)]
NonNegativeFloat = Annotated[float, Bounds(ge=0)]
Probability = Annotated[float, Bounds(ge=0, le=1)]
PositiveFraction = Annotated[float, Bounds(gt=0, le=1)]
PositiveInt = Annotated[int, Bounds(ge=1)]
MAX_WIDTH = 8192
Width = Annotated[int, Bounds(ge=1, le=MAX_WIDTH)]
"""Units of one network layer (or recurrent state): a million-wide layer would exhaust memory, not train."""
EnsembleSize = Annotated[int, Bounds(ge=1, le=64)]
"""Critics trained side by side (TD3/SAC twins, REDQ-style ensembles)."""
NonNegativeInt = Annotated[int, Bounds(ge=0)]
Widths = Annotated[tuple[Width, ...], MinLength(1), NetworkFits()]
"""Hidden layer sizes: at least one layer, each at least one unit wide."""
WidthList = Annotated[list[Width], MinLength(1), NetworkFits()]

# -- YAML 1.2 numbers --------------------------------------------------------------------------------------
_INT_TAG, _FLOAT_TAG, _TIMESTAMP_TAG = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp"
_INT = re.compile(r"^[-+]?(?:[0-9][0-9_]*|0x[0-9a-fA-F][0-9a-fA-F_]*|0o[0-7][0-7_]*|0b[01][01_]*)$")
_FLOAT = re.compile(r"^(?:[-+]?(?:\.[0-9][0-9_]*|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?"
                    r"|[-+]?\.?(?:inf|infinity)|\.?nan)$", re.IGNORECASE)


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node)).replace("_", "")
    prefixed = text.lstrip("+-")[:2].lower() in ("0x", "0o", "0b")
    return int(text, 0 if prefixed else 10)


class Yaml12Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2's int and float forms and no implicit dates (PyYAML implements YAML 1.1,
    where `3e-4` is a string, `1:30` is ninety and `2020-01-01` a date)."""


class Yaml12Dumper(yaml.SafeDumper):
    """Safe dumper that quotes every string `Yaml12Loader` would read back as a number."""


Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_INT_TAG, _FLOAT_TAG, _TIMESTAMP_TAG)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(_INT_TAG, _INT, list("-+0123456789"))  # before floats: `1` is an int
Yaml12Loader.add_implicit_resolver(_FLOAT_TAG, _FLOAT, list("-+0123456789.nNiI"))
Yaml12Loader.add_constructor(_INT_TAG, _construct_int)
Yaml12Dumper.yaml_implicit_resolvers = Yaml12Loader.yaml_implicit_resolvers


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping; unreadable or non-text files, syntax errors and non-mappings raise ConfigError."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"config file not found: {path}")
    if not path.is_file():  # a directory, device or pipe: reading could block or never end
        raise ConfigError(f"config file {path} is {'a directory' if path.is_dir() else 'not a regular file'}")
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path} is not UTF-8 text (byte {exc.start})") from None
    data = _parse_yaml(text, f"in {path}")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a mapping of keys to values, not {type(data).__name__}")
    return data


def _parse_yaml(text: str, where: str) -> Any:
    try:
        return yaml.load(text, Loader=Yaml12Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"malformed YAML {where}{at}: {problem}") from None
    except RecursionError:
        raise ConfigError(f"malformed YAML {where}: nested too deeply") from None


def save_yaml(data: Mapping[str, Any], path: str | Path) -> None:
    """Write a mapping as YAML (keys in insertion order) that `load_yaml` reads back identically."""
    Path(path).write_text(yaml.dump(dict(data), Dumper=Yaml12Dumper, sort_keys=False))


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """Turn ["a.b=1", "c=x"] into {"a": {"b": 1}, "c": "x"}; values are parsed as YAML (flow) values."""
    result: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"override {item!r} is not of the form key=value")
        parts = key.strip().split(".")
        if not all(parts):
            raise ConfigError(f"override {item!r} has an empty key part")
        try:
            value = _parse_yaml(raw, f"in override {item!r}") if raw.strip() else ""
        except ConfigError:
            value = raw  # not YAML: a plain string
        node = result
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {item!r} conflicts with another override of {part!r}")
        node[parts[-1]] = value
    return result


def merge(base: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """Recursive dict merge; values in `update` win."""
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def from_dict(cls: type[T], data: Mapping[str, Any] | None, where: str = "config") -> T:
    """Build dataclass `cls` from `data`, validating keys, value types and declared ranges."""
    data = dict(data or {})
    check_keys(data, where)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(
            f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(f'{where}.{k}' for k in unknown)}; "
            f"valid keys: {', '.join(sorted(fields))}"
        )
    hints = typing.get_type_hints(cls, include_extras=True)
    kwargs = {name: coerce(value, hints[name], f"{where}.{name}") for name, value in data.items()}
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


def check_keys(data: Mapping[Any, Any], where: str) -> None:
    """ConfigError unless every key of `data` is a non-empty string (YAML allows numbers, null, lists...)."""
    bad = [k for k in data if not isinstance(k, str) or not k]
    if bad:
        raise ConfigError(f"{where}: keys must be names, got {bad[0]!r}")


def to_dict(obj: Any) -> dict[str, Any]:
    """Dataclass -> plain dict of YAML-safe values (tuples become lists)."""
    def plain(value: Any) -> Any:
        if dataclasses.is_dataclass(value):
            return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value
    return plain(obj)


class UnsupportedType(TypeError):
    """A type hint `coerce` cannot check (callers checking third-party signatures pass such values through)."""


def coerce(value: Any, hint: Any, key: str) -> Any:
    """Check `value` against type `hint` (and its `Annotated` constraints), converting where lossless
    (int -> float, integral float -> int, list <-> tuple); ConfigError names `key`."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Annotated:
        value = coerce(value, args[0], key)
        for constraint in args[1:]:
            if isinstance(constraint, Constraint):
                constraint.check(value, key)
        return value
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key} must be a mapping, got {value!r}")
        return from_dict(hint, value, key)  # type: ignore[arg-type]
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return coerce(value, arg, key)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if len(errors) == 1 else f"{key} has the wrong type: {value!r}")
    if origin is Literal:
        if not any(type(value) is type(a) and value == a for a in args):
            raise ConfigError(f"{key} must be one of {', '.join(map(str, args))}, got {value!r}")
        return value
    if origin in (tuple, list):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{key} must be a list, got {value!r}")
        item = args[0] if args else Any
        items = [coerce(v, item, f"{key}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key} must be a mapping, got {value!r}")
        return dict(value)
    if hint is Any:
        return value
    if isinstance(hint, type) and issubclass(hint, enum.Enum):  # a package's option enum, named by its member
        if isinstance(value, hint):
            return value
        members = {m.name.lower(): m for m in hint}
        if isinstance(value, str) and value.lower() in members:
            return members[value.lower()]
        raise ConfigError(f"{key} must be one of {', '.join(m.name.lower() for m in hint)}, got {value!r}")
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ConfigError(f"{key} must be an integer, got {value!r}")
        value = int(value)
        if not -2**63 <= value < 2**63:  # what numpy and torch hold
            raise ConfigError(f"{key} must be a 64-bit integer, got {value!r}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ConfigError(f"{key} must be a number, got {value!r}")
        if not math.isfinite(value):
            raise ConfigError(f"{key} must be a finite number, got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key} must be a string, got {value!r}")
        return value
    raise UnsupportedType(f"unsupported config type {hint!r} for {key}")
