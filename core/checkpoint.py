"""Atomic checkpoints: a directory with `tensors.pt`, `arrays.npz` and `metadata.json`.

A checkpoint holds a *state tree*: nested dicts (and lists) whose leaves are tensors, NumPy arrays or plain
values. NumPy arrays go to `arrays.npz`, everything else to `tensors.pt` (loadable with
`torch.load(weights_only=True)`: no code runs on load); `metadata.json` is a human-readable summary (config,
counters) that resuming checks before loading anything. Files are written into a temporary directory,
fsynced and renamed into place, so a crash or a second Ctrl-C never leaves a half-written checkpoint;
temporaries of killed writes are removed by `remove_stale`. `prune` keeps the newest few.
"""
from __future__ import annotations

import json
import os
import pickle
import pickletools
import shutil
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import torch

from core.errors import UserError

TENSORS = "tensors.pt"
METADATA = "metadata.json"
ARRAYS = "arrays.npz"
FORMAT = 2  # checkpoint layout version (1: tensors/arrays without state trees)
PREFIX = "step-"
_ARRAY_MARK, _SCALAR_MARK = "__array__", "__scalar__"


def split_arrays(tree: Any, path: str = "") -> tuple[Any, dict[str, np.ndarray]]:
    """(tree with each NumPy array or scalar replaced by a marker, {path: array})."""
    if isinstance(tree, np.ndarray):
        return {_ARRAY_MARK: path}, {path: tree}
    if isinstance(tree, np.generic):
        return {_SCALAR_MARK: path}, {path: np.asarray(tree)}
    arrays: dict[str, np.ndarray] = {}
    if isinstance(tree, Mapping):
        out = {}
        for key, value in tree.items():
            out[key], found = split_arrays(value, f"{path}/{quote(str(key), safe='')}")
            arrays.update(found)
        return out, arrays
    if isinstance(tree, list):
        items = []
        for i, value in enumerate(tree):
            item, found = split_arrays(value, f"{path}/{i}")
            items.append(item)
            arrays.update(found)
        return items, arrays
    return tree, arrays


def join_arrays(tree: Any, arrays: Mapping[str, np.ndarray]) -> Any:
    """Inverse of `split_arrays`."""
    if isinstance(tree, Mapping):
        if set(tree) == {_ARRAY_MARK}:
            return arrays[tree[_ARRAY_MARK]]
        if set(tree) == {_SCALAR_MARK}:
            return arrays[tree[_SCALAR_MARK]][()]
        return {key: join_arrays(value, arrays) for key, value in tree.items()}
    if isinstance(tree, list):
        return [join_arrays(value, arrays) for value in tree]
    return tree


def save_checkpoint(path: str | Path, state: Mapping[str, Any], metadata: Mapping[str, Any]) -> Path:
    """Write the state tree and its metadata to the directory `path` atomically (replacing one there)."""
    path = Path(path)
    path.parent.mkdir(exist_ok=True)  # not its parents: a run directory removed under us is an error
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=path.parent))
    try:
        tree, arrays = split_arrays(dict(state))
        torch.save(tree, tmp / TENSORS)
        # allow_pickle given (its default) so that no array key can be taken for it
        np.savez(tmp / ARRAYS, allow_pickle=True, **{key.lstrip("/"): value for key, value in arrays.items()})
        (tmp / METADATA).write_text(json.dumps({"format": FORMAT, **metadata}, indent=2, default=_json_default))
        for name in (TENSORS, ARRAYS, METADATA):
            _fsync(tmp / name)
        _fsync(tmp)
        if path.exists():
            old = path.with_name(f".{path.name}.old-{os.getpid()}")
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
        _fsync(path.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The metadata of checkpoint directory `path`; UserError if it is missing, damaged or foreign."""
    path = Path(path)
    if not (path / METADATA).is_file():
        raise UserError(f"no checkpoint at {path} (expected {METADATA}, {TENSORS} and {ARRAYS} inside)")
    try:
        meta = json.loads((path / METADATA).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"checkpoint {path} is damaged: {METADATA} cannot be read ({_first_line(exc)})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format", "none") if isinstance(meta, dict) else "none"
        raise UserError(f"checkpoint {path} is not a checkpoint this version can resume "
                        f"(format {found}, expected {FORMAT})")
    return meta


def load_checkpoint(path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(state tree, metadata) of checkpoint directory `path`; UserError if any file is missing or damaged."""
    path = Path(path)
    meta = read_metadata(path)
    try:
        with warnings.catch_warnings():  # torch warns about foreign pickle protocols before refusing them
            warnings.simplefilter("ignore")
            tree = torch.load(path / TENSORS, weights_only=True, map_location="cpu")
    except pickle.UnpicklingError as exc:
        if not _refers_to_code(path / TENSORS, exc):
            raise UserError(f"checkpoint {path} is damaged: {TENSORS} cannot be read (not a torch file)") from None
        raise UserError(f"checkpoint {path} is refused: {TENSORS} is not a tensors-only checkpoint (loading it "
                        "would import or run code; nothing was run); resume only checkpoints this project "
                        "wrote") from None
    except Exception as exc:  # truncated, empty or foreign files raise many types
        raise UserError(f"checkpoint {path} is damaged: {TENSORS} cannot be read ({_first_line(exc)})") from None
    try:
        with np.load(path / ARRAYS, allow_pickle=False) as npz:
            arrays = {f"/{key}": npz[key] for key in npz.files}
        state = join_arrays(tree, arrays)
    except Exception as exc:
        raise UserError(f"checkpoint {path} is damaged: {ARRAYS} cannot be read ({_first_line(exc)})") from None
    if not isinstance(state, dict):
        raise UserError(f"checkpoint {path} is damaged: {TENSORS} holds {type(state).__name__}, not a state tree")
    return state, meta


STATE_MISMATCH = (RuntimeError, KeyError, ValueError, TypeError, IndexError)  # what a state of another shape raises


def state_mismatch(path: Path, exc: BaseException) -> UserError:
    """The error for a checkpoint's state that does not load into the objects built from its config."""
    return UserError(f"checkpoint {path} does not match this algorithm, env or network shape: "
                     f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}")


def checkpoint_dirs(run_dir: Path) -> list[Path]:
    """A run's checkpoint directories, oldest first."""
    root = run_dir / "checkpoints"
    return sorted(p for p in root.glob(f"{PREFIX}*") if p.is_dir()) if root.is_dir() else []


def remove_stale(run_dir: Path) -> None:
    """Remove temporaries left by checkpoint writes that were killed."""
    root = run_dir / "checkpoints"
    if root.is_dir():
        for stale in root.glob(f".{PREFIX}*"):
            shutil.rmtree(stale, ignore_errors=True)


def prune(run_dir: Path, keep: int) -> None:
    """Delete all but the newest `keep` checkpoints (0 keeps all) and the best: the one whose metadata has the
    highest `score` (its evaluation's win rate or return)."""
    dirs = checkpoint_dirs(run_dir)
    if keep <= 0 or len(dirs) <= keep:
        return
    scores = {}
    for path in dirs:
        try:
            score = json.loads((path / METADATA).read_text()).get("score")
        except (OSError, ValueError):
            continue
        if isinstance(score, (int, float)):
            scores[path] = score
    best = max(scores, key=scores.__getitem__) if scores else None
    for old in dirs[:-keep]:
        if old != best:
            shutil.rmtree(old, ignore_errors=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


CODE_OPCODES = {"GLOBAL", "STACK_GLOBAL", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX", "REDUCE"}


def _refers_to_code(path: Path, exc: pickle.UnpicklingError) -> bool:
    """Whether torch's tensors-only loader refused a reference to code (its message names a GLOBAL) or the file
    is a plain pickle that would import or call something; pickletools parses it without running anything."""
    if "GLOBAL" in str(exc):
        return True
    try:
        with path.open("rb") as file:
            return bool({op.name for op, _, _ in pickletools.genops(file)} & CODE_OPCODES)
    except Exception:  # not a pickle stream at all: damaged
        return False


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot store {type(value).__name__} in checkpoint metadata")
