"""Atomic checkpoints: a directory with tensors (`tensors.pt`), JSON metadata and optional arrays (`.npz`).

`tensors.pt` holds only tensors and plain containers, so it loads with `torch.load(weights_only=True)`.
The directory is written under a temporary name and renamed into place, so a crash never leaves a
half-written checkpoint behind.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import torch

from core.errors import UserError

TENSORS = "tensors.pt"
METADATA = "metadata.json"
ARRAYS = "arrays.npz"


def save_checkpoint(
    path: str | Path,
    tensors: Mapping[str, Any],
    metadata: Mapping[str, Any],
    arrays: Mapping[str, np.ndarray] | None = None,
) -> Path:
    """Write a checkpoint directory atomically (replacing one already at `path`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=path.parent))
    try:
        torch.save(dict(tensors), tmp / TENSORS)
        (tmp / METADATA).write_text(json.dumps(dict(metadata), indent=2, default=_json_default))
        if arrays:
            np.savez(tmp / ARRAYS, **arrays)
        if path.exists():
            old = path.with_name(f".{path.name}.old-{os.getpid()}")
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def load_checkpoint(path: str | Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, np.ndarray]]:
    """Read (tensors, metadata, arrays) from a checkpoint directory."""
    path = Path(path)
    if not (path / METADATA).is_file():
        raise UserError(f"no checkpoint at {path} (expected {METADATA} and {TENSORS} inside)")
    tensors = torch.load(path / TENSORS, weights_only=True, map_location="cpu")
    metadata = json.loads((path / METADATA).read_text())
    arrays: dict[str, np.ndarray] = {}
    if (path / ARRAYS).is_file():
        with np.load(path / ARRAYS) as npz:
            arrays = {k: npz[k] for k in npz.files}
    return tensors, metadata, arrays


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot store {type(value).__name__} in checkpoint metadata")
