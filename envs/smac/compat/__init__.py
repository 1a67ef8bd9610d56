"""Run code written for smac/smacv2 (pymarl, EPyMARL, a user's own loop) on the built-in simulator, unchanged.

`clients/` holds two import names, `smac` and `smacv2`, that stand in for the real packages: put that directory
on PYTHONPATH (`python -m envs.smac.compat` prints it) and `from smac.env import StarCraft2Env` or
`from smacv2.env import StarCraftCapabilityEnvWrapper` give the simulator. They never shadow a real install
silently: if another package of that name is importable, the import fails naming it (set
CONCERTO_SMAC_COMPAT=1 to use the simulator anyway), and the first import prints one line saying what runs.
"""
from __future__ import annotations

from pathlib import Path

CLIENTS = Path(__file__).resolve().parent / "clients"


def clients_path() -> Path:
    """The directory to put on PYTHONPATH."""
    return CLIENTS
