"""Running the user's code: their modules imported by name (the current directory searched too), and their
failures reported as one line naming their file and line."""
from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from core.errors import ConcertoError, Interrupted, UserError, describe_exception


@contextmanager
def user_code(what: str) -> Iterator[None]:
    """Report any failure of the user's code inside the block (an exception, `sys.exit()`) as one UserError line:
    `what`, then the exception and the user's file and line. Ctrl-C, signals and this project's errors pass."""
    try:
        yield
    except (KeyboardInterrupt, Interrupted, ConcertoError):
        raise
    except BaseException as exc:
        raise UserError(f"{what}: {describe_exception(exc)}") from None


@contextmanager
def cwd_on_path() -> Iterator[None]:
    """Modules in the current directory are importable inside the block (a run: spawned env workers import a
    user's env module by name too); afterwards sys.path is as it was."""
    added = _add_cwd_to_path()
    try:
        yield
    finally:
        if added is not None and added in sys.path:
            sys.path.remove(added)


def _add_cwd_to_path() -> str | None:
    """Put the current directory first on sys.path unless it is there already; returns the entry added."""
    cwd = str(Path.cwd())
    if "" in sys.path or cwd in sys.path:
        return None
    sys.path.insert(0, cwd)
    return cwd


def import_user_module(module_name: str, what: str, spec: str) -> ModuleType:
    """Import a user's module, the current directory searched too (sys.path is restored afterwards; code that
    spawns workers importing the module by name keeps `cwd_on_path` around the spawning); any failure,
    `sys.exit()` included, is a UserError naming `spec`."""
    if not all(part.isidentifier() for part in module_name.split(".")):
        raise UserError(f"{what} {spec!r}: {module_name!r} is not a module name (package.module)")
    with cwd_on_path(), user_code(f"{what} {spec!r}: importing {module_name} failed"):
        try:
            return importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if not exc.name or not f"{module_name}.".startswith(f"{exc.name}."):
                raise  # the module itself imports something missing: reported with its file and line
            raise UserError(f"{what} {spec!r}: cannot import {module_name}: no module named {exc.name!r} "
                            "(searched the current directory and sys.path)") from None


def import_object(spec: str, what: str) -> Any:
    """Import `package.module:attribute`; failures raise UserError naming `spec`.

    The current working directory is searched too, so a user's own file (examples/my_env.py) is found
    with `examples.my_env:thing` when running from the project or their own directory.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr.isidentifier():
        raise UserError(f"{what} {spec!r} must look like package.module:name")
    module = import_user_module(module_name, what, spec)
    with user_code(f"{what} {spec!r}: reading {attr} from {module_name} failed"):
        try:
            return getattr(module, attr)
        except AttributeError:
            raise UserError(f"{what} {spec!r}: module {module_name} has no attribute {attr!r}") from None
