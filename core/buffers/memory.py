"""Allocation of pre-allocated buffers, refused up front when it cannot fit in memory.

numpy's `zeros` reserves address space lazily, so a buffer larger than the machine may allocate fine and
then exhaust memory half-way through training. Every buffer's size is known when it is built: compare it
with the memory available (`/proc/meminfo`'s MemAvailable, a cgroup limit, or `os.sysconf`) first.
"""
from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import UserError

Layout = Mapping[str, Any]  # name -> (item shape, dtype) | nested Layout


def layout_nbytes(layout: Layout, leading: tuple[int, ...]) -> int:
    """Bytes of every array of `layout`, each shaped [*leading, *item shape]."""
    return sum(layout_nbytes(spec, leading) if isinstance(spec, Mapping)
               else math.prod(leading) * math.prod(spec[0]) * np.dtype(spec[1]).itemsize for spec in layout.values())


def allocate(layout: Layout, leading: tuple[int, ...], what: str, hint: str) -> dict[str, Any]:
    """Zeroed arrays [*leading, *shape] for `layout` (nested like it), or a UserError naming `what` and
    saying how to shrink it (`hint`) when they would not fit in the memory available."""
    need = layout_nbytes(layout, leading)
    free = available_memory()
    if free is not None and need > free:
        raise UserError(f"{what} would need {format_bytes(need)} but {format_bytes(free)} of memory is available; "
                        f"{hint}")
    try:
        return _zeros(layout, leading)
    except (MemoryError, ValueError) as exc:  # numpy's own refusal (too big for the address space)
        raise UserError(f"{what} of {format_bytes(need)} could not be allocated ({exc}); {hint}") from None


def _zeros(layout: Layout, leading: tuple[int, ...]) -> dict[str, Any]:
    return {name: _zeros(spec, leading) if isinstance(spec, Mapping) else np.zeros((*leading, *spec[0]), spec[1])
            for name, spec in layout.items()}


def available_memory() -> int | None:
    """Bytes of memory this process can still use, or None where that cannot be told."""
    system = _meminfo_available()
    if system is None:
        system = _sysconf_available()
    known = [m for m in (system, _cgroup_available()) if m is not None]
    return min(known) if known else None


def _meminfo_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _sysconf_available() -> int | None:
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _cgroup_available() -> int | None:
    """A cgroup v2 memory limit minus what the group uses (containers), if one is set."""
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit == "max":
            return None
        return max(int(limit) - int(Path("/sys/fs/cgroup/memory.current").read_text()), 0)
    except (OSError, ValueError):
        return None


def format_bytes(n: float) -> str:
    """1536 -> '1.5 KiB'."""
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    k = 0
    while n >= 1024 and k < len(units) - 1:
        n, k = n / 1024, k + 1
    return f"{n:.0f} B" if k == 0 else f"{n:.1f} {units[k]}"
