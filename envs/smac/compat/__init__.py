"""Run code written for smac/smacv2 (pymarl, EPyMARL, a user's own loop) on the built-in simulator, unchanged.

Every face of the simulator with smac's or smacv2's API lives here: `starcraft2_env.py` (smac's StarCraft2Env),
`pettingzoo_env.py` (smac's PettingZoo env), `feature_names.py` (smacv2's feature names), `api.py` (smacv2's
classes) and `distributions.py`; `envs.smac.StarCraft2Env` and `envs.smac.SMACParallelEnv` import from here.

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
