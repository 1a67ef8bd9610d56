"""The project's exception hierarchy.

`UserError` and its subclasses describe bad input (config, names, missing extras); command-line
entry points turn them into one line on stderr and exit status 2.
"""
from __future__ import annotations


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


class EnvWorkerError(ConcertoError):
    """An env inside a vector env raised or died; the message names the env index."""
