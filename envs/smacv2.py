"""smacv2_<race>_<n>_vs_<m>: the real SMACv2 (StarCraft II) through its StarCraftCapabilityEnvWrapper.

Needs the smacv2 package and a StarCraft II install (SC2PATH); both are imported lazily, and a missing one
is reported as one line naming what to install. Capability configs follow smacv2's examples
(SMAC_SPEC.md §1.4): weighted_teams unit mixes and surrounded_and_reflect start positions.
"""
from __future__ import annotations

import functools
from typing import Any

from core.errors import MissingDependencyError
from core.paths import install_hint
from envs.registry import register
from envs.smac_api import SMACAPIParallelEnv

RACES = {
    "protoss": {"unit_types": ["stalker", "zealot", "colossus"], "weights": [0.45, 0.45, 0.1]},
    "terran": {"unit_types": ["marine", "marauder", "medivac"], "weights": [0.45, 0.45, 0.1],
               "exception_unit_types": ["medivac"]},
    "zerg": {"unit_types": ["zergling", "baneling", "hydralisk"], "weights": [0.45, 0.1, 0.45],
             "exception_unit_types": ["baneling"]},
}
SIZES = ((5, 5), (10, 10), (20, 20), (10, 11), (20, 23))
ENV_KWARGS = {"conic_fov": False, "use_unit_ranges": True, "min_attack_range": 2, "obs_own_pos": True,
              "prob_obs_enemy": 1.0, "action_mask": True, "continuing_episode": True}


def capability_config(race: str, n_units: int, n_enemies: int) -> dict[str, Any]:
    """SMACv2's capability_config for one scenario."""
    return {
        "n_units": n_units,
        "n_enemies": n_enemies,
        "team_gen": {"dist_type": "weighted_teams", "observe": True, **RACES[race]},
        "start_positions": {"dist_type": "surrounded_and_reflect", "p": 0.5, "map_x": 32, "map_y": 32,
                            "n_enemies": n_enemies},
    }


def make_smacv2(race: str, n_units: int, n_enemies: int, **kwargs: Any) -> SMACAPIParallelEnv:
    """The real SMACv2 scenario as a PettingZoo ParallelEnv (kwargs go to smacv2's StarCraft2Env)."""
    try:
        from smacv2.env import StarCraftCapabilityEnvWrapper
    except ImportError:
        raise MissingDependencyError(
            f"env smacv2_{race}_{n_units}_vs_{n_enemies} needs the smacv2 package and StarCraft II: "
            f"{install_hint('smacv2')} and install StarCraft II (set SC2PATH); "
            "without SC2 use the built-in smac_<map> envs") from None
    env = StarCraftCapabilityEnvWrapper(capability_config=capability_config(race, n_units, n_enemies),
                                        map_name=f"10gen_{race}", **{**ENV_KWARGS, **kwargs})
    return SMACAPIParallelEnv(env)


for _race in RACES:
    for _n, _m in SIZES:
        register(f"smacv2_{_race}_{_n}_vs_{_m}", functools.partial(make_smacv2, _race, _n, _m))
