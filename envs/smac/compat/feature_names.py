"""Names of every observation and state column, in smacv2's naming scheme and the simulator's column order.

smacv2's `get_obs_feature_names`/`get_state_feature_names` (and smac's `agent_features`/`enemy_features` in
`get_env_info`) label the vectors; these lists follow the layout `Features` writes, so their lengths equal
the obs and state sizes.
"""
from __future__ import annotations

from envs.smac.features import N_HEIGHT, N_PATHING, Features


def ally_state_attributes(f: Features) -> list[str]:
    """smac's per-ally state attribute names (`get_env_info()["agent_features"]`)."""
    return ["health", "energy/cooldown", "rel_x", "rel_y"] + ["shield"] * f.ally_shield + _bits("type_", f.bits)


def enemy_state_attributes(f: Features) -> list[str]:
    """smac's per-enemy state attribute names (`get_env_info()["enemy_features"]`)."""
    return ["health", "rel_x", "rel_y"] + ["shield"] * f.enemy_shield + _bits("type_", f.bits)


def obs_feature_names(f: Features) -> list[str]:
    """One name per observation column; allies are numbered as agent 0 sees them (agents 1..n_agents-1)."""
    flags = f.flags
    if not flags.obs_starcraft:
        return ["timestep"]
    names = ["move_action_north", "move_action_south", "move_action_east", "move_action_west"]
    names += _bits("pathing_grid_", N_PATHING * flags.obs_pathing_grid)
    names += _bits("terrain_height_", N_HEIGHT * flags.obs_terrain_height)
    for e in range(f.n_enemies):
        names += _unit_obs(f, "enemy", e, "shootable", f.enemy_shield)
    for a in range(1, f.n_agents):
        names += _unit_obs(f, "ally", a, "visible", f.ally_shield)
        if flags.obs_last_action:
            names += [f"ally_last_action_{a}_action_{k}" for k in range(f.n_actions)]
    if flags.obs_own_health or flags.obs_all_health:
        names += ["own_health"] + ["own_shield"] * f.ally_shield
    if flags.obs_own_pos:
        names += ["own_pos_x", "own_pos_y"]
    names += _bits("own_unit_type_bit_", f.bits)
    if flags.obs_timestep_number:
        names.append("timestep")
    return names


def state_feature_names(f: Features) -> list[str]:
    """One name per state column (with obs_instead_of_state: each agent's obs names, prefixed agent_<i>_)."""
    flags = f.flags
    if flags.obs_instead_of_state:
        obs = obs_feature_names(f)
        return [f"agent_{i}_{name}" for i in range(f.n_agents) for name in obs]
    names: list[str] = []
    for a in range(f.n_agents):
        names += [f"ally_health_{a}", f"ally_cooldown_{a}", f"ally_relative_x_{a}", f"ally_relative_y_{a}"]
        names += [f"ally_shield_{a}"] * f.ally_shield + _bits(f"ally_unit_type_{a}_bit_", f.bits)
    for e in range(f.n_enemies):
        names += [f"enemy_health_{e}", f"enemy_relative_x_{e}", f"enemy_relative_y_{e}"]
        names += [f"enemy_shield_{e}"] * f.enemy_shield + _bits(f"enemy_unit_type_{e}_bit_", f.bits)
    if flags.state_last_action:
        names += [f"ally_last_action_{a}_action_{k}" for a in range(f.n_agents) for k in range(f.n_actions)]
    if flags.state_timestep_number:
        names.append("timestep")
    return names


def _unit_obs(f: Features, side: str, k: int, first: str, shield: int) -> list[str]:
    names = [f"{side}_{first}_{k}", f"{side}_distance_{k}", f"{side}_relative_x_{k}", f"{side}_relative_y_{k}"]
    if f.flags.obs_all_health:
        names += [f"{side}_health_{k}"] + [f"{side}_shield_{k}"] * shield
    return names + _bits(f"{side}_unit_type_{k}_bit_", f.bits)


def _bits(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{b}" for b in range(n)]
