"""The names client code imports from smac.env and smacv2.env, on the built-in simulator."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from core.errors import UnknownNameError
from envs.smac.batch import ONLY_DEFAULT
from envs.smac.compat.distributions import Distribution, get_distribution
from envs.smac.compat.starcraft2_env import MultiAgentEnv, StarCraft2Env
from envs.smac.maps import MAPS
from envs.smac.scenarios import LIMIT, RACES, SMACV2_MAPS, smacv2_defaults
from envs.smac.unit_view import RL_UNIT_NAMES, SC2_UNIT_TYPE_IDS, UnitView
from envs.smac.units import UNIT_TYPES

__all__ = ["CannotResetException", "MultiAgentEnv", "SMACv2Env", "StarCraft2Env", "StarCraftCapabilityEnvWrapper",
           "get_map_params", "get_smacv2_map_params"]


class CannotResetException(RuntimeError):
    """smacv2's exception for a reset that StarCraft II refused (never raised by the simulator)."""


def get_map_params(map_name: str) -> dict[str, Any]:
    """smac's map_param_registry entry: n_agents, n_enemies, limit, a_race, b_race, unit_type_bits, map_type."""
    if map_name not in MAPS:
        raise UnknownNameError(f"unknown SMAC map {map_name!r}; available maps: {', '.join(sorted(MAPS))}")
    m = MAPS[map_name]
    return {"n_agents": m.n_agents, "n_enemies": m.n_enemies, "limit": m.limit, "a_race": m.ally_race,
            "b_race": m.enemy_race, "unit_type_bits": m.unit_type_bits, "map_type": m.map_type}


def get_smacv2_map_params(map_name: str) -> dict[str, Any]:
    """smacv2's map_param_registry entry: smac's with the map file's name (map_name), and the 10gen_<race> maps,
    which smacv2 plays on 32x32_flat."""
    if map_name in SMACV2_MAPS:
        race = SMACV2_MAPS[map_name]
        letter = UNIT_TYPES[RACES[race][0][0]].race  # "P", "T" or "Z", as the race's units have
        return {"n_agents": 10, "n_enemies": 10, "limit": LIMIT, "a_race": letter, "b_race": letter,
                "unit_type_bits": 3, "map_type": f"{race}_gen", "map_name": "32x32_flat"}
    if map_name not in MAPS:
        raise UnknownNameError(f"unknown SMACv2 map {map_name!r}; available maps: "
                               f"{', '.join(sorted({*MAPS, *SMACV2_MAPS}))}")
    return {**get_map_params(map_name), "map_name": map_name}
# what smacv2's StarCraft2Env does differently on smac's maps: its reward clips at 0 where smac takes abs(), and
# its observations remember sighted enemies (envs.smac.sighting); the smaclite_* scenarios have both already
SMACV2_ON_SMAC_MAPS = {"reward_positive_part": True, "sighted_enemies": True}


class SMACv2Env(StarCraft2Env):
    """smacv2.env.StarCraft2Env: the simulator's env with smacv2's reward and sighting memory on every map."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**SMACV2_ON_SMAC_MAPS, **kwargs})
        cc = self.capability_config
        # the settings the simulator takes only at their defaults (others are refused), readable as in smacv2
        for name, (value, _) in ONLY_DEFAULT.items():
            setattr(self, name, value)
        self.n_fov_actions = self.conic_fov_angle = 0  # no conic field of view
        self.stochastic_attack, self.stochastic_health = "attack" in cc, "health" in cc  # both refused if given
        self.mask_enemies, self.random_start = False, "start_positions" in cc
        self.replace_teammates = "team_gen" in cc
        if self.replace_teammates:
            self.observe_teammate_types = bool(cc["team_gen"].get("observe", True))
            self.zero_pad_unit_types = not self.observe_teammate_types
        self.map_params = get_smacv2_map_params(self.map_name) \
            if self.map_name in SMACV2_MAPS or self.map_name in MAPS else None
        # smacv2 keeps the unit-type bits out of the allies' state attributes and names them capabilities
        bits = self.unit_type_bits
        self.ally_state_attr_names = self.ally_state_attr_names[: len(self.ally_state_attr_names) - bits]
        self.capability_attr_names = [f"type_{bit}" for bit in range(bits)]
        names = RL_UNIT_NAMES if self._generated else list(self._ally_type_ids)
        self.ally_unit_map = {name: self._ally_type_ids[name] for name in names}
        self.enemy_unit_map = {name: SC2_UNIT_TYPE_IDS[name] for name in
                               (RL_UNIT_NAMES if self._generated else sorted(set(self.core.map.enemy_names)))}
        # smacv2 registers names and ids on smac's maps only
        self.unit_name_to_id_map = {} if self._generated else dict(self._ally_type_ids)
        self.id_to_unit_name_map = {i: name for name, i in self.unit_name_to_id_map.items()}
        self.episode_config: dict[str, Any] = {}
        self.ally_start_positions: np.ndarray | None = None
        self.enemy_start_positions: np.ndarray | None = None

    def reset(self, episode_config: Mapping[str, Any] | None = None) -> tuple[list[np.ndarray], np.ndarray]:
        """As StarCraft2Env.reset; also records smacv2's episode_config and start positions. Where the scenario
        draws the teams itself (a capability config without an episode_config), episode_config holds what it
        drew (team_gen's unit type names, start positions as smacv2's items, in agent order). The start positions
        are the episode config's items, as smacv2 keeps them."""
        out = super().reset(episode_config)
        a, z = self.n_agents, self.core.battle.state.z[0].astype(np.complex128)
        at = np.stack([z.real, z.imag], axis=1)
        config = dict(episode_config or {})
        if self._generated:
            names = [u.name for u in self._units(0, a + self.n_enemies)]
            config.setdefault("team_gen", {"ally_team": names[:a], "enemy_team": names[a:]})
            if self.random_start:
                config.setdefault("ally_start_positions", {"item": at[:a]})
                config.setdefault("enemy_start_positions", {"item": at[a:]})
        self.episode_config = config
        self.ally_start_positions, self.enemy_start_positions = (
            np.asarray(config[key]["item"], float) if key in config else None
            for key in ("ally_start_positions", "enemy_start_positions"))
        return out

    @property
    def enemy_tags(self) -> list[int | None]:
        """smacv2's sighting memory: the agent that sighted each enemy (None: not sighted)."""
        sighting = self.core.sighting
        owners = sighting.owner[0].tolist() if sighting is not None else [-1] * self.n_enemies
        return [None if owner < 0 else owner for owner in owners]

    @property
    def obs_enemies(self) -> np.ndarray:
        """smacv2's [n_enemies, n_agents] float64: 1 where the team has sighted the enemy (prob_obs_enemy 1)."""
        sighted = np.array([tag is not None for tag in self.enemy_tags], np.float64)
        return np.repeat(sighted[:, None], self.n_agents, axis=1)

    def get_obs_own_feats_size(self) -> int:
        """smacv2 leaves the timestep out of this count (smac counts it)."""
        return super().get_obs_own_feats_size() - int(self.core.features.flags.obs_timestep_number)

    def get_ally_num_attributes(self) -> int:
        return len(self.ally_state_attr_names) + len(self.capability_attr_names)

    def build_obs_feature_names(self) -> list[str]:
        """smacv2's builder of obs_feature_names (the names are fixed at construction here)."""
        return list(self.obs_feature_names)

    def build_state_feature_names(self) -> list[str]:
        """smacv2's builder of state_feature_names."""
        return list(self.state_feature_names)

    def get_obs_ally_capability_size(self) -> int:
        """Capability features an agent observes of each ally: the unit-type bits."""
        return self.unit_type_bits

    def get_can_shoot(self, agent_id: int, t_unit: UnitView) -> bool:
        """Whether `t_unit` is within the agent's shoot range."""
        unit = self.get_unit_by_id(agent_id)
        return self.distance(*unit.pos, *t_unit.pos) <= self.unit_shoot_range(agent_id)

    def only_medivac_left(self, ally: bool) -> bool:
        """smacv2's test: on MMM and terran maps, whether a side has nothing but medivacs alive."""
        if self.map_type not in ("MMM", "terran_gen"):
            return False
        alive, medivac = self._alive_medivacs(ally)
        return not (alive & ~medivac).any()

    def get_env_info(self) -> dict[str, Any]:
        """smac's, with smacv2's cap_shape and the capability names among the agent features."""
        info = super().get_env_info()
        info["agent_features"] = self.ally_state_attr_names + self.capability_attr_names
        return {**info, "cap_shape": self.get_cap_size()}


class StarCraftCapabilityEnvWrapper(MultiAgentEnv):
    """smacv2's wrapper, keyword arguments only: `env` is a StarCraft2Env playing the capability config on the
    simulator's smaclite_<race>_<n>_vs_<m> scenario (see envs.smac.scenarios.scenario_for), which draws each
    episode's teams and start positions itself; every other method and attribute is the env's."""

    def __init__(self, **kwargs: Any) -> None:
        self.distribution_config = kwargs["capability_config"]
        self.env = SMACv2Env(**{"map_name": "10gen_protoss", **kwargs})  # first: its errors say what is simulated
        self.env_key_to_distribution_map: dict[str, Distribution] = {}
        self._parse_distribution_config(kwargs.get("seed"))

    def _parse_distribution_config(self, seed: int | None) -> None:
        """As smacv2: each distribution's config (every key but n_units and n_enemies) gets its env_key and the
        team sizes, in place, and becomes a distribution (envs.smac.compat.distributions). reset() leaves the
        drawing to the scenario, which draws the same teams and positions (and spreads units spawned on one
        point as SC2 does)."""
        sizes = {k: self.distribution_config.get(k) for k in ("n_units", "n_enemies")}
        defaults = smacv2_defaults(self.env.map_name)  # what the scenario fills in where the config is silent
        for index, (env_key, config) in enumerate(self.distribution_config.items()):
            if env_key in sizes or not isinstance(config, dict):
                continue
            config.update(env_key=env_key, **sizes)
            full = {**defaults.get(env_key, {}), **config}
            self.env_key_to_distribution_map[env_key] = get_distribution(full["dist_type"])(
                full, None if seed is None else [seed, 2, index])

    def __getattr__(self, name: str) -> Any:
        if name == "env":  # not set yet: the constructor failed
            raise AttributeError(name)
        return getattr(self.env, name)

    def reset(self) -> tuple[list[Any], Any]:
        return self.env.reset()

    def step(self, actions: Any) -> tuple[float, bool, dict[str, Any]]:
        return self.env.step(actions)

    def get_obs(self) -> list[Any]:
        return self.env.get_obs()

    def get_state(self) -> Any:
        return self.env.get_state()

    def get_avail_actions(self) -> list[list[int]]:
        return self.env.get_avail_actions()
