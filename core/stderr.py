"""Redirecting file descriptor 2, where C libraries and some packages write past Python's sys.stderr."""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def stderr_into(path: str | Path) -> Iterator[None]:
    """Send everything written to file descriptor 2 meanwhile to `path` (appended; os.devnull drops it)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as out:
        os.dup2(out.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
