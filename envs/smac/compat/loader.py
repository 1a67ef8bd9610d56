"""What the `smac`/`smacv2` stand-ins in clients/ run first. They load this file by its path, not by import
name: a client may have packages of its own called `envs` or `core`, as pymarl and EPyMARL do (their `src/`
holds an `envs` package, and its `__init__` is what imports smac). So nothing here imports this project by
name except `import_simulator`, which does it with the project's root first on sys.path, the client's modules
of the same names set aside and the simulator's modules loaded so far back under their own names, then puts the
client's back (the simulator's modules stay loaded under `concerto.<name>`, so each is loaded once).
"""
from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]  # the directory holding envs/ and core/
CLIENTS = Path(__file__).resolve().parent / "clients"
OURS = ("envs", "core")  # the top-level packages the simulator imports
OVERRIDE = "CONCERTO_SMAC_COMPAT"


def check_not_shadowing(name: str) -> None:
    """Raise ImportError if another package called `name` is importable from the rest of sys.path (unless
    CONCERTO_SMAC_COMPAT=1); otherwise print one line on stderr saying that the built-in simulator serves it."""
    rest = [p for p in sys.path if Path(p or ".").resolve() != CLIENTS]
    other = importlib.machinery.PathFinder.find_spec(name, rest)
    if other is not None and os.environ.get(OVERRIDE) != "1":
        where = other.origin or next(iter(other.submodule_search_locations or []), "?")
        raise ImportError(f"another package named {name!r} is installed ({where}); Concerto's stand-in in {CLIENTS} "
                          f"would shadow it: take {CLIENTS} off PYTHONPATH to use that package, or set "
                          f"{OVERRIDE}=1 to run the built-in simulator anyway")
    print(f"{name}: Concerto's built-in StarCraft II simulator (no StarCraft II binary), from {CLIENTS}",
          file=sys.stderr)


def import_simulator(module: str) -> ModuleType:
    """Import this project's `module` even where the client has packages named envs or core."""
    if _resolves_here():
        return importlib.import_module(module)
    foreign = {k: v for k, v in sys.modules.items() if _owned(k)}
    for name in foreign:
        del sys.modules[name]
    prefix = "concerto."
    sys.modules.update({k[len(prefix):]: v for k, v in list(sys.modules.items()) if k.startswith(prefix)})
    sys.path.insert(0, str(ROOT))
    try:
        loaded = importlib.import_module(module)
    finally:
        sys.path.remove(str(ROOT))
        for name in [k for k in sys.modules if _owned(k)]:
            sys.modules[prefix + name] = sys.modules.pop(name)
        sys.modules.update(foreign)
    return loaded


def _owned(name: str) -> bool:
    return any(name == top or name.startswith(top + ".") for top in OURS)


def _resolves_here() -> bool:
    """Whether every top-level name the simulator imports means this project's package here."""
    for top in OURS:
        module = sys.modules.get(top)
        origin = getattr(module, "__file__", None) if module is not None else getattr(
            importlib.machinery.PathFinder.find_spec(top, sys.path), "origin", None)
        if origin is None or not Path(origin).resolve().is_relative_to(ROOT):
            return False
    return True
