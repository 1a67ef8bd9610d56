"""The project's exception hierarchy and the exit statuses the command lines give them.

`UserError` and its subclasses describe bad input (config, names, missing extras, a user's code failing before
training): one line on stderr and exit status 2. `RunError` is a run that failed after training started (an
env worker died or hung, a non-finite value, a callback raised mid-run, the disk filled): exit status 1.
`Interrupted` is SIGINT/SIGTERM: exit 130/143.
"""
from __future__ import annotations

import signal
import sys
import traceback
from pathlib import Path

EXIT_BAD_INPUT = 2
EXIT_RUN_FAILED = 1


class ConcertoError(Exception):
    """Base class of every error raised on purpose by this project."""


class UserError(ConcertoError):
    """Bad input from the user: reported as one line, exit status 2."""


class ConfigError(UserError):
    """A config file, key or value is invalid."""


class UnknownNameError(UserError):
    """An env, algorithm or plugin name is not known; the message lists valid choices."""


class MissingDependencyError(UserError):
    """An optional dependency is not installed; the message says what to install."""


class RunError(ConcertoError):
    """A run that started training and then failed: reported as one line, exit status 1."""


class EnvWorkerError(RunError):
    """An env inside a vector env raised, died or stopped answering; the message names the env index."""


class NonFiniteError(RunError):
    """NaN or inf in a loss, gradient, parameter, reward or observation; the message names the quantity."""


class Interrupted(BaseException):
    """SIGINT or SIGTERM; a BaseException like KeyboardInterrupt so that `except Exception` does not swallow it."""

    def __init__(self, signum: int, detail: str = "") -> None:
        name = signal.Signals(signum).name
        super().__init__(f"interrupted by {name}" + (f" {detail}" if detail else ""))
        self.signum, self.detail = signum, detail

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


_PACKAGES = tuple(str(Path(__file__).resolve().parent.parent / name) for name in ("core", "envs", "marl",
                                                                                   "single_agent"))


def describe_exception(exc: BaseException) -> str:
    """`Type: message (file:line)`, naming the innermost frame outside Python's and this project's own code
    (the user's file), or the innermost frame when there is none; one line."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if not _library_frame(f.filename)]
    where = (own or frames)[-1] if frames else None
    text = " ".join(str(exc).split()) or "(no message)"
    if isinstance(exc, SystemExit):
        text = f"exit status {exc.code}"
    location = f" ({_short_path(where.filename)}:{where.lineno})" if where else ""
    return f"{type(exc).__name__}: {text}{location}"


def _library_frame(filename: str) -> bool:
    path = str(Path(filename).resolve()) if not filename.startswith("<") else filename
    return (path.startswith(_PACKAGES) or "site-packages" in path or "dist-packages" in path
            or path.startswith(sys.prefix) or path.startswith(sys.base_prefix) or filename.startswith("<"))


def _short_path(filename: str) -> str:
    try:
        return str(Path(filename).resolve().relative_to(Path.cwd()))
    except ValueError:
        return filename
