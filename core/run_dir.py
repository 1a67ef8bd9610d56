"""Where a run may write: its own run directory, marked by `run.json`, and the one rule that picks the directory a
resumed run continues in.

A run directory is made (and marked with a fresh run id) only here, and every checkpoint records the id of the
run that wrote it. A resumed run continues in place only when its checkpoint still sits in that run's directory
(`<run>/checkpoints/<checkpoint>` beside a `run.json` with the same id). A checkpoint anywhere else (copied,
moved, from another run, or written before run ids) continues in a new run directory under `--logdir` whose
`run.json` names the checkpoint it came from, so a resume never writes into a folder the run did not make.
"""
from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.checkpoint import checkpoint_dirs, read_metadata
from core.errors import UserError
from core.run_config import env_dir_name

MARKER = "run.json"


def make_run_dir(logdir: str | Path, env: str, algo: str, seed: int, resumed_from: Path | None = None) -> Path:
    """A new marked run directory runs/<env>/<algo>/<YYYYmmdd-HHMMSS>-seed<k>/ (suffixed if the name is taken)."""
    base = Path(logdir) / env_dir_name(env) / algo / f"{time.strftime('%Y%m%d-%H%M%S')}-seed{seed}"
    path, k = base, 1
    while path.exists():
        k += 1
        path = base.with_name(f"{base.name}-{k}")
    try:
        path.mkdir(parents=True)
    except OSError as exc:
        raise UserError(f"cannot create the run directory under --logdir {logdir}: {exc.strerror}") from None
    mark(path, resumed_from)
    return path


def mark(run_dir: Path, resumed_from: Path | None = None) -> str:
    """Give `run_dir` a new run id in its run.json (with the checkpoint it was resumed from); returns the id."""
    run_id = uuid.uuid4().hex
    record = {"run_id": run_id, "resumed_from": None if resumed_from is None else str(resumed_from.resolve())}
    (run_dir / MARKER).write_text(json.dumps(record, indent=2) + "\n")
    return run_id


def run_id_of(run_dir: Path) -> str | None:
    """The id in `run_dir`'s run.json; None where there is no readable one (not a run directory)."""
    try:
        record = json.loads((run_dir / MARKER).read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    run_id = record.get("run_id") if isinstance(record, dict) else None
    return run_id if isinstance(run_id, str) else None


def claim(run_dir: Path) -> str:
    """The id of the run writing into `run_dir` (made if needed): marks a directory given through the Python API."""
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_id_of(run_dir) or mark(run_dir)


def latest_checkpoint(path: Path) -> Path:
    """A checkpoint directory, or the newest one under a run directory's checkpoints/."""
    if (path / "metadata.json").is_file():
        return path
    candidates = checkpoint_dirs(path)
    if not candidates:
        raise UserError(f"no checkpoint found at {path}")
    return candidates[-1]


def checkpoint_metadata(path: Path) -> tuple[Path, dict[str, Any]]:
    """(checkpoint directory, its metadata) for a --resume argument."""
    checkpoint = latest_checkpoint(path)
    return checkpoint, read_metadata(checkpoint)


def home_of(checkpoint: Path, meta: Mapping[str, Any]) -> Path | None:
    """The run directory that wrote `checkpoint`, if the checkpoint is still inside it; else None."""
    resolved = checkpoint.resolve()
    home = resolved.parent.parent
    saved = meta.get("run_id")
    if resolved.parent.name != "checkpoints" or not isinstance(saved, str) or run_id_of(home) != saved:
        return None
    given = checkpoint.parent.parent  # the path as the user wrote it, where it names the same directory
    return given if given.resolve() == home else home


def resume_run_dir(checkpoint: Path, meta: Mapping[str, Any], logdir: str | Path, env: str, algo: str,
                   seed: int) -> tuple[Path, str | None]:
    """(the run directory a resume of `checkpoint` writes into, a note to print when it is a new one)."""
    home = home_of(checkpoint, meta)
    if home is not None:
        return home, None
    run_dir = make_run_dir(logdir, env, algo, seed, resumed_from=checkpoint)
    return run_dir, (f"note: {checkpoint} is not inside the run directory that wrote it; the resumed run "
                     f"continues in a new one, {run_dir}")
