"""Drop-in replacement for smac's `StarCraft2Env` on the built-in simulator (no StarCraft II needed).

The constructor takes smac's and smacv2's arguments and the env has their methods and attributes, so pymarl,
EPyMARL and smacv2 client code runs unchanged:

    env = StarCraft2Env(map_name="3m")
    env.reset()
    reward, terminated, info = env.step([...])   # one int per agent; unavailable actions raise

Where smac hands out SC2 protobuf objects (units, raw commands) this env returns the read-only views of
`envs.smac.unit_view`. README.md ("smac drop-in: API surface") lists what is honoured and what is ignored.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any, NamedTuple

import numpy as np

from core.errors import UserError
from envs.smac.batch import UnavailableActionError, make_batch
from envs.smac.battle_constants import MOVE_AMOUNT, MOVE_STEPS, N_NON_ATTACK_ACTIONS
from envs.smac.compat.feature_names import (
    ally_state_attributes,
    enemy_state_attributes,
    obs_feature_names,
    state_feature_names,
)
from envs.smac.features import N_HEIGHT, N_PATHING, Features
from envs.smac.heuristic import HeuristicPolicy
from envs.smac.maps import MAP_SIZE
from envs.smac.render import render_frame
from envs.smac.roster import ProceduralRoster
from envs.smac.scenarios import SCENARIOS, scenario_for
from envs.smac.sighting import NO_TURN
from envs.smac.unit_view import (
    RL_UNIT_NAMES,
    RL_UNIT_TYPE_BASE,
    SC2_UNIT_TYPE_IDS,
    AgentCommand,
    Direction,
    Point,
    UnitView,
)

DEFAULT_MAX_COOLDOWN = 15  # smac's unit_max_cooldown for a unit type it does not list
# smac's settings for StarCraft II itself: accepted, ignored, readable as attributes (window_size_x/_y aside)
ENGINE_SETTINGS: dict[str, Any] = {"debug": False, "replay_dir": "", "replay_prefix": ""}


class Seen(NamedTuple):
    """What the agents see at the current step."""

    obs: np.ndarray  # [n_agents, obs_size]
    state: np.ndarray  # [state_size]
    avail: np.ndarray  # [n_agents, n_actions] bool


class MultiAgentEnv:
    """smac's base class of multi-agent envs (pymarl and EPyMARL import it from smac.env)."""

    def step(self, actions: Any) -> Any:
        raise NotImplementedError

    def get_obs(self) -> Any:
        raise NotImplementedError

    def get_state(self) -> Any:
        raise NotImplementedError

    def get_avail_actions(self) -> Any:
        raise NotImplementedError

    def reset(self) -> Any:
        raise NotImplementedError


class StarCraft2Env(MultiAgentEnv):
    """One battle (a SMACBatch of one env) behind smac's methods; it does not auto-reset."""

    n_actions_no_attack = N_NON_ATTACK_ACTIONS
    n_actions_move = 4
    map_x = map_y = max_distance_x = max_distance_y = MAP_SIZE

    def __init__(self, map_name: str = "8m", step_mul: int = 8, move_amount: int = 2, difficulty: str = "7",
                 game_version: str | None = None, seed: int | None = None, continuing_episode: bool = False, *,
                 episode_limit: int | None = None, heuristic_rest: bool = False,
                 capability_config: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        """smac's and smacv2's arguments, the first seven also positionally in their order (plus
        `episode_limit`, which overrides the map's limit)."""
        kwargs = {"step_mul": step_mul, "move_amount": move_amount, "difficulty": difficulty,
                  "game_version": game_version, **kwargs}
        self.capability_config = dict(capability_config or {})
        scenario = scenario_for(map_name, self.capability_config) if capability_config else map_name
        self.core = make_batch(scenario, 1, seed, episode_limit, kwargs)
        f = self.core.features
        self.map_name = map_name
        # smacv2 names its generated maps' types <race>_gen
        self.map_type = self.core.map.map_type + "_gen" * (self.core.map.name in SCENARIOS)
        self._seed = seed
        self.continuing_episode = continuing_episode
        self.heuristic_rest = heuristic_rest
        self.heuristic_ai = self.core.heuristic is not None
        self.step_mul, self.move_amount, self.difficulty, self.game_version = step_mul, move_amount, difficulty, \
            game_version
        self.n_agents, self.n_enemies = self.core.n_agents, self.core.n_enemies
        self.n_actions = self.core.n_actions
        self.episode_limit = self.core.limit
        self.unit_type_bits, self.shield_bits_ally, self.shield_bits_enemy = f.bits, f.ally_shield, f.enemy_shield
        self.ally_state_attr_names = ally_state_attributes(f)
        self.enemy_state_attr_names = enemy_state_attributes(f)
        self.obs_feature_names, self.state_feature_names = obs_feature_names(f), state_feature_names(f)  # smacv2's
        # get_state_dict needs the state layout even when the state is the concatenated observations
        self._state_features = Features(self.core.battle, replace(f.flags, obs_instead_of_state=False)) \
            if f.flags.obs_instead_of_state else f
        self._heuristic = HeuristicPolicy(self.core.battle)
        # smac's option attributes, as in effect (obs_all_health implies obs_own_health, as in smac); they are
        # read here once, so setting one afterwards changes nothing
        for name, value in {**asdict(f.flags), **asdict(self.core.rewards)}.items():
            setattr(self, name, value)
        self.obs_own_health = f.flags.obs_own_health or f.flags.obs_all_health
        self.n_obs_pathing, self.n_obs_height = N_PATHING, N_HEIGHT
        terrain = self.core.map.terrain()  # smac's layout: pathing_grid[x, y], terrain_height flipped along y
        self.pathing_grid, self.terrain_height = terrain.walkable.copy(), terrain.height.copy()
        # the agents' unit-type ids, as smac numbers them (envs.smac.unit_view.RL_UNIT_NAMES): <name>_id
        # attributes, 0 for types the map's agents do not have
        self._generated = self.core.map.name in SCENARIOS  # a smaclite_* scenario: new teams every episode
        ranked = RL_UNIT_NAMES if self._generated else sorted(set(self.core.map.ally_names))
        self._ally_type_ids = {name: RL_UNIT_TYPE_BASE + rank for rank, name in enumerate(ranked)}
        self._min_unit_type = RL_UNIT_TYPE_BASE
        (self.baneling_id, self.colossus_id, self.hydralisk_id, self.marauder_id, self.marine_id, self.medivac_id,
         self.stalker_id, self.zealot_id, self.zergling_id) = (self._ally_type_ids.get(n, 0) for n in RL_UNIT_NAMES)
        # engine-only settings, accepted and ignored, readable as in smac
        self.debug, self.replay_dir, self.replay_prefix = (kwargs.get(k, d) for k, d in ENGINE_SETTINGS.items())
        self.window_size = (kwargs.get("window_size_x", 1920), kwargs.get("window_size_y", 1200))
        self.renderer = None
        self.battles_won = self.battles_game = self.timeouts = self.force_restarts = 0
        self.last_stats: dict[str, float] | None = None  # smac sets it to None and never changes it
        self.win_counted = self.defeat_counted = False
        self._previous: list[np.ndarray] | None = None  # the unit columns before the last step
        self.reward = 0.0
        self._battle_reward = 0.0
        self._episode_steps = 0
        self._episode_count = 0  # episodes ended, as smac counts them
        self._done = True
        self._seen: Seen | None = None

    def reseed(self, seed: int) -> None:
        """Restart the simulator's random stream from `seed` (not in smac, whose seed is fixed at construction;
        the PettingZoo face's reset(seed) uses it)."""
        self.core.seed(seed)

    # -- episode ----------------------------------------------------------------------------------------
    def reset(self, episode_config: Mapping[str, Any] | None = None) -> tuple[list[np.ndarray], np.ndarray]:
        """Start a new battle; returns (obs list, state) like smac. On a generated (smaclite_*) scenario, smacv2's
        `episode_config` may give this episode's teams (`team_gen`: ally_team, enemy_team, unit type names)
        and start positions (`ally_start_positions`, `enemy_start_positions`: {"item": [[x, y], ...]}), as
        smacv2's distributions draw them; what it leaves out the scenario draws. Allies are then numbered as
        smacv2 numbers them (by unit type, x, y)."""
        everything = np.ones(1, bool)
        counted = self.core.max_reward
        self.core.reset(everything, self._episode_draw(episode_config) if episode_config else None)
        if counted is not None and self._episode_count == 0:
            # smac adds the enemies' health and shields to max_reward at each reset until an episode has ended, so
            # a second reset before then (smacv2's random_agents example does one) counts them again
            stats = self.core.battle.stats
            self.core.max_reward = counted + float((stats.max_hp[0] + stats.max_shield[0])[self.n_agents:].sum())
        self._heuristic.reset(everything)
        self._done = False
        self._episode_steps = 0
        self._battle_reward = 0.0
        self.win_counted = self.defeat_counted = False
        self._previous = None
        self._observe()
        return self.get_obs(), self.get_state()

    def _episode_draw(self, config: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """One episode's unit-type indices [1, U] and start positions [1, U, 2] from smacv2's episode config."""
        roster = self.core.battle.roster
        if not isinstance(roster, ProceduralRoster):
            raise UserError(f"reset(episode_config) with keys {sorted(config)}: {self.map_name} has fixed teams and "
                            f"start positions; episode configs need a smaclite_<race>_<n>_vs_<m> scenario")
        unknown = sorted(set(config) - {"team_gen", "ally_start_positions", "enemy_start_positions"})
        if unknown:
            raise UserError(f"reset(episode_config) keys {unknown} are not simulated (supported: team_gen, "
                            f"ally_start_positions, enemy_start_positions)")
        kinds, positions = roster.draw(self.core.rng, 1)
        a, names = self.n_agents, roster.type_names
        team = config.get("team_gen", {})
        if not isinstance(team, Mapping):
            raise UserError(f"team_gen must be a mapping with ally_team and/or enemy_team, got {team!r}")
        for side, first, count in (("ally", 0, a), ("enemy", a, self.n_enemies)):
            units = slice(first, first + count)
            if f"{side}_team" in team:
                given = [str(n).lower() for n in team[f"{side}_team"]]
                if len(given) != count or not set(given) <= set(names):
                    raise UserError(f"team_gen {side}_team {team[f'{side}_team']} must name {count} units of {names}")
                kinds[0, units] = [names.index(n) for n in given]
            if f"{side}_start_positions" in config:
                given_at = config[f"{side}_start_positions"]
                try:
                    item = np.asarray(given_at.get("item") if isinstance(given_at, Mapping) else given_at, float)
                except (TypeError, ValueError):
                    item = np.full(0, np.nan)
                if item.shape != (count, 2) or not np.isfinite(item).all():
                    raise UserError(f"{side}_start_positions item must be {count} finite [x, y] pairs, "
                                    f"got shape {item.shape}")
                positions[0, units] = item
        return roster.placed(kinds, positions)

    def full_restart(self) -> None:
        """smac relaunches StarCraft II here; with no process to relaunch it counts a restart (get_stats) and
        ends the episode, so the next call must be reset()."""
        self.force_restarts += 1
        self._done = True

    def step(self, actions: Sequence[int] | np.ndarray) -> tuple[float, bool, dict[str, Any]]:
        """Returns (reward, terminated, info) like smac; timeouts are terminal, as in smac's default.
        info's dead_allies/dead_enemies count the units dead so far this episode. With heuristic_ai, as in
        smac, last_action keeps the actions passed and a mutable `actions` is overwritten with the
        heuristic's."""
        if self._done:
            raise RuntimeError("the episode is over; call reset()")
        acts = np.asarray([int(a) for a in actions], dtype=np.int64).reshape(1, -1)
        self.core.check_actions(acts, self._current().avail[None])
        self._previous = self._unit_columns()
        out = self.core.step(acts)
        if self.core.heuristic is not None and hasattr(actions, "__setitem__"):
            for a_id, order in enumerate(out.orders[0].tolist()):
                actions[a_id] = order
        self._done = bool(out.ended[0] or out.timeout[0])
        self._observe()
        self._episode_steps += 1
        alive, a = self.core.battle.state.alive[0], self.n_agents
        info: dict[str, Any] = {"battle_won": False, "dead_allies": int(a - alive[:a].sum()),
                                "dead_enemies": int(self.n_enemies - alive[a:].sum())}
        terminated, won = bool(out.ended[0]), bool(out.won[0])
        lost = terminated and not won and bool(alive.any())
        if terminated:
            self.battles_game += 1
            if won:
                self.battles_won += 1
                info["battle_won"] = True
            self.win_counted, self.defeat_counted = won, lost
        elif out.timeout[0]:
            terminated = True
            self.battles_game += 1
            self.timeouts += 1
            if self.continuing_episode:
                info["episode_limit"] = True
        self._episode_count += terminated
        self.reward = float(out.reward[0])
        self._battle_reward = self._unscaled_battle_reward(self.reward, won, lost)
        return self.reward, terminated, info

    def _unscaled_battle_reward(self, reward: float, won: bool, lost: bool) -> float:
        """The step's reward before scaling and without the win/defeat bonus (smac's reward_battle)."""
        cfg = self.core.rewards
        if cfg.reward_sparse:
            return 0.0
        if cfg.reward_scale:
            reward *= self.max_reward / cfg.reward_scale_rate
        return reward - cfg.reward_win * won - cfg.reward_defeat * lost

    def reward_battle(self) -> float:
        """The last step's damage-and-kill reward, unscaled and without the win bonus (0 with reward_sparse or
        before the first step). smac recomputes it from unit snapshots; here it is read back, so calling it
        changes nothing."""
        return self._battle_reward

    def _observe(self) -> None:
        """Cache what the agents see now (with smacv2's sighting memory no agent sights anything here: as in
        smacv2, only get_obs and get_obs_agent do)."""
        turns = None if self.core.sighting is None else np.full((1, self.n_agents), NO_TURN)
        obs, state, avail = self.core.observe(turns=turns)
        self._seen = Seen(obs[0], state[0], avail[0])

    def _sighting_pass(self, turns: np.ndarray) -> np.ndarray:
        """Observations [n_agents, obs_size] from one of smacv2's sighting passes (agents in `turns` order)."""
        self._current()
        return self.core.observe(turns=turns)[0][0]

    def _current(self) -> Seen:
        if self._seen is None:
            raise RuntimeError("no battle yet; call reset()")
        return self._seen

    def _agent(self, agent_id: int) -> int:
        """`agent_id` as an int, checked to name an agent."""
        if not 0 <= int(agent_id) < self.n_agents:
            raise ValueError(f"agent_id must lie in [0, {self.n_agents}), got {agent_id}")
        return int(agent_id)

    # -- observations -----------------------------------------------------------------------------------
    def get_obs(self) -> list[np.ndarray]:
        """Every agent's observation. With smacv2's sighting memory (smaclite_* maps) each call is one of
        smacv2's get_obs passes: the agents take turns in a random order to sight enemies, so a second call in
        the same step can show enemies the first did not (see envs.smac.sighting)."""
        if self.core.sighting is not None:
            return list(self._as_smac(self._sighting_pass(self.core.sighting.random_turns(1, self.n_agents))))
        return list(self._as_smac(self._current().obs))

    def get_obs_agent(self, agent_id: int, fully_observable: bool = False) -> np.ndarray:
        """One agent's observation (with smacv2's sighting memory, a pass in which only this agent sights);
        smacv2's `fully_observable` is accepted at False only."""
        if fully_observable:
            raise UserError("fully_observable=True is not supported by the built-in SMAC simulator (observations "
                            "always respect sight ranges)")
        agent_id = self._agent(agent_id)
        if self.core.sighting is not None:
            turns = np.full((1, self.n_agents), NO_TURN)
            turns[0, agent_id] = 0.0
            return self._as_smac(self._sighting_pass(turns)[agent_id])
        return self._as_smac(self._current().obs[agent_id])

    def _as_smac(self, obs: np.ndarray) -> np.ndarray:
        """A copy of observations as smac's: float32, or float64 with obs_timestep_number, whose last column smac
        appends in float64 with np.append."""
        if not self.core.features.flags.obs_timestep_number:
            return obs.astype(np.float32)
        out = obs.astype(np.float64)
        out[..., -1] = self._timestep()
        return out

    def _timestep(self) -> float:
        """The timestep feature, in float64 as smac computes it."""
        return self._episode_steps / self.episode_limit

    def get_obs_size(self) -> int:
        return self.core.features.obs_size

    def get_obs_move_feats_size(self) -> int:
        """Movement features: the 4 move-availability flags, then the pathing and height values if on."""
        return self.core.features.n_move

    def get_obs_enemy_feats_size(self) -> tuple[int, int]:
        """(n_enemies, features per enemy)."""
        return self.n_enemies, self.core.features.nf_en

    def get_obs_ally_feats_size(self) -> tuple[int, int]:
        """(n_agents - 1, features per ally)."""
        return self.n_agents - 1, self.core.features.nf_al

    def get_obs_own_feats_size(self) -> int:
        """Own features, the timestep included when obs_timestep_number (as smac counts it)."""
        f = self.core.features
        return f.nf_own + int(f.flags.obs_timestep_number)

    def get_obs_feature_names(self) -> list[str]:
        """smacv2's names of the observation columns (allies as agent 0 sees them)."""
        return list(self.obs_feature_names)

    def get_state(self) -> np.ndarray:
        return self._current().state.copy()

    def get_state_size(self) -> int:
        return self.core.features.state_size

    def get_state_feature_names(self) -> list[str]:
        """smacv2's names of the state columns."""
        return list(self.state_feature_names)

    def get_state_dict(self) -> dict[str, Any]:
        """The state in parts, as smac: allies [n_agents, nf], enemies [n_enemies, nf] (float64), plus
        last_action [n_agents, n_actions] with state_last_action and timestep (float) with
        state_timestep_number. Computed from the units even when obs_instead_of_state."""
        seen, core, f = self._current(), self.core, self._state_features
        state = seen.state if f is core.features else \
            f.state(slice(None), seen.obs[None], core.last_action, core.battle.state.steps, core.limit)[0]
        a, e = self.n_agents, self.n_enemies
        cut = a * f.nf_al_state
        state = state.astype(np.float64)
        out: dict[str, Any] = {"allies": state[:cut].reshape(a, f.nf_al_state),
                               "enemies": state[cut:cut + e * f.nf_en_state].reshape(e, f.nf_en_state)}
        cut += e * f.nf_en_state
        if f.flags.state_last_action:
            out["last_action"] = state[cut:cut + a * self.n_actions].reshape(a, self.n_actions)
            cut += a * self.n_actions
        if f.flags.state_timestep_number:
            out["timestep"] = self._timestep()
        return out

    def get_ally_num_attributes(self) -> int:
        return len(self.ally_state_attr_names)

    def get_enemy_num_attributes(self) -> int:
        return len(self.enemy_state_attr_names)

    def get_avail_actions(self) -> list[list[int]]:
        return [row.astype(int).tolist() for row in self._current().avail]

    def get_avail_agent_actions(self, agent_id: int) -> list[int]:
        return self._current().avail[self._agent(agent_id)].astype(int).tolist()

    def get_true_avail_agent_actions(self, agent_id: int) -> list[int]:
        """smacv2: availability ignoring action_mask=False; the same as get_avail_agent_actions here."""
        return self.get_avail_agent_actions(agent_id)

    def get_total_actions(self) -> int:
        return self.n_actions

    def get_capabilities_agent(self, agent_id: int) -> np.ndarray:
        """smacv2: the agent's capability vector, its unit-type one-hot [get_cap_size()] (float32)."""
        return self.get_capabilities().reshape(self.n_agents, -1)[self._agent(agent_id)].copy()

    def get_capabilities(self) -> np.ndarray:
        """smacv2: every agent's capability vector, concatenated [n_agents * get_cap_size()] (float32)."""
        if not self.unit_type_bits:
            return np.zeros(0, np.float32)
        return self.core.features.onehot(slice(None))[0, : self.n_agents].ravel()

    def get_cap_size(self) -> int:
        """smacv2: capability features per agent (the unit-type bits; no stochastic attack or health)."""
        return self.unit_type_bits

    def get_env_info(self) -> dict[str, Any]:
        return {"state_shape": self.get_state_size(), "obs_shape": self.get_obs_size(), "n_actions": self.n_actions,
                "n_agents": self.n_agents, "episode_limit": self.episode_limit,
                "agent_features": list(self.ally_state_attr_names),
                "enemy_features": list(self.enemy_state_attr_names)}

    def get_stats(self) -> dict[str, float]:
        """smac's statistics; as in smac, battles_draw counts the timeouts (a battle where both sides die counts
        only as a game)."""
        return {"battles_won": self.battles_won, "battles_game": self.battles_game,
                "battles_draw": self.timeouts, "win_rate": self.battles_won / max(self.battles_game, 1),
                "timeouts": self.timeouts, "restarts": self.force_restarts}

    def get_visibility_matrix(self) -> np.ndarray:
        """bool [n_agents, n_agents + n_enemies], as smac fills it: the alive enemies within each alive agent's
        sight range; a pair of alive allies sees each other when the lower-numbered one sees the other (its sight
        range, both ways); no agent sees itself."""
        s, a = self.core.battle.state, self.n_agents
        sight, _ = self._agent_ranges()
        dist = np.abs(s.z[0, None, :] - s.z[0, :a, None])
        seen = (dist < sight[:, None]) & s.alive[0, None, :] & s.alive[0, :a, None]
        allies = np.triu(seen[:, :a], k=1)
        seen[:, :a] = allies | allies.T
        return seen

    # -- units ------------------------------------------------------------------------------------------
    @property
    def last_action(self) -> np.ndarray:
        """One-hot actions of the last step [n_agents, n_actions] (float64, as smac's; zeros after reset)."""
        return self.core.last_action[0].astype(np.float64)

    @property
    def max_reward(self) -> float:
        """The reward scale's denominator: kills, win bonus and the enemies' health and shields, added at each
        reset until the first episode ends, as smac adds them (before the first reset, without that term)."""
        if self.core.max_reward is not None:
            return self.core.max_reward
        cfg = self.core.rewards
        return self.n_enemies * cfg.reward_death_value + cfg.reward_win

    @property
    def agents(self) -> dict[int, UnitView]:
        """Agent id -> its unit now (empty before the first reset, as in smac)."""
        return dict(enumerate(self._units(0, self.n_agents)))

    @property
    def enemies(self) -> dict[int, UnitView]:
        """Enemy id -> its unit now (empty before the first reset)."""
        return dict(enumerate(self._units(self.n_agents, self.n_agents + self.n_enemies)))

    @property
    def previous_ally_units(self) -> dict[int, UnitView] | None:
        """The agents' units before the last step (None after reset, as in smac)."""
        return None if self._previous is None else dict(enumerate(self._units(0, self.n_agents, self._previous)))

    @property
    def previous_enemy_units(self) -> dict[int, UnitView] | None:
        """The enemies' units before the last step (None after reset)."""
        if self._previous is None:
            return None
        return dict(enumerate(self._units(self.n_agents, self.n_agents + self.n_enemies, self._previous)))

    @property
    def death_tracker_ally(self) -> np.ndarray:
        """1.0 for each dead agent [n_agents] (float64, as smac's)."""
        return self._death_tracker(slice(0, self.n_agents))

    @property
    def death_tracker_enemy(self) -> np.ndarray:
        """1.0 for each dead enemy [n_enemies]."""
        return self._death_tracker(slice(self.n_agents, None))

    def _death_tracker(self, side: slice) -> np.ndarray:
        """The dead units of one side; all zeros before the first reset and with reward_sparse (smac updates its
        trackers only while computing the dense reward)."""
        dead = ~self.core.battle.state.alive[0, side]
        if self._seen is None or self.core.rewards.reward_sparse:
            dead[:] = False
        return dead.astype(np.float64)

    def only_medivac_left(self, ally: bool) -> bool:
        """smac's test on MMM maps that a side has nothing but medivacs alive (for the enemies smac asks for
        exactly one alive unit, a medivac)."""
        if self.map_type != "MMM":
            return False
        alive, medivac = self._alive_medivacs(ally)
        if ally:
            return not (alive & ~medivac).any()
        return int(alive.sum()) == 1 and bool(medivac[alive].all())

    def _alive_medivacs(self, ally: bool) -> tuple[np.ndarray, np.ndarray]:
        """(alive, is a medivac) of each unit on one side."""
        side = slice(0, self.n_agents) if ally else slice(self.n_agents, None)
        return self.core.battle.state.alive[0, side], self.core.battle.stats.is_medivac[0, side]

    def get_unit_by_id(self, a_id: int) -> UnitView:
        """Agent `a_id`'s unit now."""
        self._current()
        return self._units(self._agent(a_id), self._agent(a_id) + 1)[0]

    def get_unit_type_id(self, unit: UnitView, ally: bool) -> int:
        """The unit's index in the unit-type one-hot, in the allies' or the enemies' order (0 without bits)."""
        f = self.core.features
        onehot = (f.ally_onehot if ally else f.enemy_onehot)[self.core.battle.stats.kind[0, unit.tag]]
        return int(onehot.argmax()) if f.bits else 0

    def get_unit_types(self) -> list[int]:
        """Unit-type ids of the agents (their RL types), then the enemies (SC2's), as smac lists them."""
        return [u.unit_type for u in self._units(0, self.n_agents + self.n_enemies)]

    def _unit_columns(self) -> list[np.ndarray]:
        """Every unit's UnitView fields now, one array per field (copies)."""
        s, st = self.core.battle.state, self.core.battle.stats
        return [arr[0].copy() for arr in (st.kind, s.z.real, s.z.imag, s.hp * s.alive, st.max_hp, s.shield * s.alive,
                                          st.max_shield, s.energy, np.maximum(s.cooldown, 0.0), st.radius)]

    def _units(self, start: int, stop: int, columns: list[np.ndarray] | None = None) -> list[UnitView]:
        """Units `start`..`stop` now, or in `columns` (from _unit_columns)."""
        if self._seen is None:
            return []
        names = self.core.battle.roster.type_names
        cols = [arr[start:stop].tolist() for arr in columns or self._unit_columns()]
        ally = self.n_agents
        return [UnitView(tag, (self._ally_type_ids if tag < ally else SC2_UNIT_TYPE_IDS)[names[kind]], names[kind],
                         1 if tag < ally else 2, Point(x, y), hp, hp_max, sh, sh_max, energy, cooldown, radius)
                for tag, (kind, x, y, hp, hp_max, sh, sh_max, energy, cooldown, radius)
                in enumerate(zip(*cols, strict=True), start)]

    def unit_shoot_range(self, agent_id: int) -> float:
        """Attack actions are available within this distance: 6, or with use_unit_ranges the unit's own (an int
        where whole, as smac's)."""
        return _number(self._agent_ranges()[1][self._agent(agent_id)])

    def unit_sight_range(self, agent_id: int) -> float:
        """Units closer than this are visible: 9, or with use_unit_ranges the unit's own (an int where whole)."""
        return _number(self._agent_ranges()[0][self._agent(agent_id)])

    def _agent_ranges(self) -> tuple[np.ndarray, np.ndarray]:
        """(sight, shoot) range of each agent [n_agents] (Features.ranges, which may give one number for all)."""
        a = self.n_agents
        sight, shoot = self.core.features.ranges(slice(None))
        return np.broadcast_to(sight, (1, a, 1))[0, :, 0], np.broadcast_to(shoot, (1, a, 1))[0, :, 0]

    def unit_max_cooldown(self, unit: UnitView) -> float:
        """smac's normaliser of the state's cooldown feature (a medivac's: its maximum energy; an int where
        whole). smac keys it by the agents' unit types, so every enemy reads its default, 15."""
        if unit.owner != 1:
            return DEFAULT_MAX_COOLDOWN
        return _number(self.core.battle.stats.obs_max_cooldown[0, unit.tag])

    @staticmethod
    def unit_max_shield(unit: UnitView) -> float | None:
        """The unit's maximum shield; None for units without shields, as in smac."""
        return _number(unit.shield_max) if unit.shield_max else None

    @staticmethod
    def distance(x1: float, y1: float, x2: float, y2: float) -> float:
        return math.hypot(x2 - x1, y2 - y1)

    def check_bounds(self, x: float, y: float) -> bool:
        """Whether a point lies on the map."""
        return 0 <= x < self.map_x and 0 <= y < self.map_y

    def can_move(self, unit: UnitView, direction: Direction | int) -> bool:
        """Whether the cell one unit away in `direction` is walkable (what move availability tests)."""
        z = np.complex64(complex(*unit.pos)) + MOVE_STEPS[Direction(direction)]
        return bool(self.core.battle.walkable(np.array([z.real]), np.array([z.imag]))[0])

    def get_surrounding_points(self, unit: UnitView, include_self: bool = False) -> list[tuple[int, int]]:
        """The 8 integer points at 2 * move_amount along the axes and move_amount along the diagonals
        (smac's pathing/height probes), then the unit's own cell if `include_self`."""
        x, y, m = int(unit.pos.x), int(unit.pos.y), int(MOVE_AMOUNT)
        points = [(x, y + 2 * m), (x, y - 2 * m), (x + 2 * m, y), (x - 2 * m, y),
                  (x + m, y + m), (x - m, y - m), (x + m, y - m), (x - m, y + m)]
        return points + [(x, y)] * include_self

    def get_surrounding_pathing(self, unit: UnitView) -> list[int]:
        """1 where the 8 surrounding points are walkable or off the map (as smac), else 0."""
        pathing, _ = self.core.features.surrounding(np.array(complex(*unit.pos), np.complex64))
        return pathing.astype(int).tolist()

    def get_surrounding_height(self, unit: UnitView) -> list[float]:
        """smac's terrain height (byte / 255, its layout) at the 8 surrounding points and the unit's own cell
        (1 off the map, as smac)."""
        _, height = self.core.features.surrounding(np.array(complex(*unit.pos), np.complex64))
        return height.astype(float).tolist()

    # -- actions ----------------------------------------------------------------------------------------
    def get_agent_action(self, a_id: int, action: int) -> AgentCommand | None:
        """The order `action` gives agent `a_id` (None for the no-op); raises UnavailableActionError (a ValueError
        and, as smac's assert, an AssertionError) if unavailable."""
        avail = self._current().avail[self._agent(a_id)]
        if not 0 <= int(action) < self.n_actions or not avail[int(action)]:
            raise UnavailableActionError(f"agent {a_id} cannot perform action {action}; "
                                         f"available: {np.flatnonzero(avail).tolist()}")
        return self._command(a_id, int(action))

    def get_agent_action_heuristic(self, a_id: int, action: int) -> tuple[AgentCommand | None, int]:
        """(order, action index) of SMAC's heuristic for agent `a_id`: attack the nearest enemy and keep it
        until it dies; with heuristic_rest only available actions (moving toward the target). `action` is
        ignored, as in smac."""
        a_id = self._agent(a_id)
        seen = self._current()
        chosen = self._heuristic.act(seen.avail[None]) if self.heuristic_rest else self._heuristic.orders()
        number = int(chosen[0, a_id])
        return self._command(a_id, number), number

    def _command(self, a_id: int, action: int) -> AgentCommand | None:
        if action == 0:
            return None
        if action == 1:
            return AgentCommand("stop", a_id)
        if action < N_NON_ATTACK_ACTIONS:
            z = complex(self.core.battle.state.z[0, a_id]) + MOVE_AMOUNT * complex(MOVE_STEPS[action - 2])
            return AgentCommand("move", a_id, target_pos=Point(z.real, z.imag))
        target = action - N_NON_ATTACK_ACTIONS
        if self.core.battle.stats.is_medivac[0, a_id]:
            return AgentCommand("heal", a_id, target_tag=target)
        return AgentCommand("attack", a_id, target_tag=self.n_agents + target)

    # -- the rest -----------------------------------------------------------------------------------------
    def seed(self) -> int | None:
        return self._seed

    def render(self, mode: str = "rgb_array") -> np.ndarray:
        return render_frame(self.core.battle, 0)

    def close(self) -> None:
        pass

    def save_replay(self) -> None:
        """No-op: the simulator has no SC2 replays (use envs.smac.render.save_gif)."""


def _number(value: float) -> float:
    """`value` as smac returns such numbers: an int where whole, else a float."""
    value = float(value)
    return int(value) if value.is_integer() else value
