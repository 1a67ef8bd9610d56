"""smacv2.env.starcraft2.distributions on the built-in simulator: every name is
envs.smac.compat.distributions' (get_distribution, register_distribution, DISTRIBUTION_MAP, the classes)."""
from typing import Any

from smacv2 import loader as _loader

_distributions = _loader.import_simulator("envs.smac.compat.distributions")


def __getattr__(name: str) -> Any:
    return getattr(_distributions, name)
