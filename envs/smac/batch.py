"""Episode logic shared by every face of the simulator: rewards, battle end, timeouts, last actions.

`SMACBatch` owns a Battle (the dynamics) and its Features (what agents see); it does not auto-reset (the
vector env does that). `make_batch` builds one from SMAC-style keyword flags.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import UserError
from envs.smac import engine
from envs.smac.battle import Battle
from envs.smac.features import FeatureFlags, Features
from envs.smac.heuristic import HeuristicPolicy
from envs.smac.maps import SMACMap, get_map
from envs.smac.roster import Roster
from envs.smac.scenarios import SCENARIOS
from envs.smac.sighting import EnemySighting

OBS_BLOCK_BYTES = 1 << 20  # observations of this many bytes are computed at once (fits in L2)


@dataclass(frozen=True)
class RewardConfig:
    """SMAC's reward flags (SMAC_SPEC.md §4)."""

    reward_sparse: bool = False  # +1 for a win, -1 for a loss, nothing else
    reward_only_positive: bool = True  # pay only the damage dealt and kills, not the damage and deaths taken
    reward_positive_part: bool = False  # with reward_only_positive: max(r, 0) as smacv2, not |r| as smac v1
    reward_death_value: float = 10.0  # paid per enemy killed
    reward_win: float = 200.0  # paid for a win
    reward_defeat: float = 0.0  # paid for a defeat
    reward_negative_scale: float = 0.5  # weight of the damage and deaths taken (without reward_only_positive)
    reward_scale: bool = True  # divide rewards by the largest episode reward over reward_scale_rate
    reward_scale_rate: float = 20.0  # a perfect episode's scaled return


@dataclass(frozen=True)
class SimulatorOptions:
    """Options of the built-in simulator beside smac's flags."""

    heuristic_ai: bool = False  # smac's: the SMAC paper's heuristic plays the allies, whatever actions are passed
    # number the enemies in the map's order every episode (smac lists them in SC2's raw order, which changes
    # between episodes; envs/smac/SC2_FACTS.md)
    fixed_enemy_order: bool = False
    compiled: bool = True  # false: the engine runs as plain Python, slowly, for debugging


@dataclass
class StepOutcome:
    reward: np.ndarray  # [B] team reward
    ended: np.ndarray  # [B] battle over (win, loss or draw)
    timeout: np.ndarray  # [B] episode limit reached without an end
    won: np.ndarray  # [B]
    dead_allies: np.ndarray
    dead_enemies: np.ndarray
    orders: np.ndarray  # [B, A] the actions the units carried out (with heuristic_ai, the heuristic's)


class UnavailableActionError(ValueError, AssertionError):
    """An action the agent cannot take now: a ValueError, and an AssertionError where smac's assert raises one."""


class SMACBatch:
    """n_envs SMAC episodes of one map: step with validated actions, observe, reset chosen envs."""

    def __init__(self, smac_map: SMACMap, n_envs: int, seed: int | None = None,
                 flags: FeatureFlags | None = None, rewards: RewardConfig | None = None,
                 episode_limit: int | None = None, heuristic_ai: bool = False, roster: Roster | None = None,
                 compiled: bool = True, fixed_enemy_order: bool = False) -> None:
        self.map = smac_map
        self.n_envs = n_envs
        self.rng = np.random.default_rng(seed)
        self.battle = Battle(smac_map, n_envs, self.rng, engine if compiled else engine.plain(), roster,
                             fixed_enemy_order)
        self.features = Features(self.battle, flags or FeatureFlags())
        self.rewards = rewards = rewards or RewardConfig()
        if episode_limit is not None and episode_limit < 1:
            raise UserError(f"episode limit must be at least 1 step, got {episode_limit}")
        self.limit = episode_limit if episode_limit is not None else smac_map.limit
        self.n_agents, self.n_enemies = smac_map.n_agents, smac_map.n_enemies
        self.n_actions = self.features.n_actions
        self.last_action = np.zeros((n_envs, self.n_agents, self.n_actions), np.float32)
        self.max_reward: float | None = None  # set from the first episode's enemy team, as SMAC/smacv2 do
        self.all = np.arange(n_envs)
        # SMAC's heuristic_ai: the built-in heuristic replaces whatever actions are passed to step()
        self.heuristic = HeuristicPolicy(self.battle) if heuristic_ai else None
        self.sighting = EnemySighting(n_envs, self.n_enemies, seed) if self.features.flags.sighted_enemies else None

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)
        self.battle.rng = self.rng
        if self.sighting is not None:
            self.sighting.seed(seed)

    def state_dict(self) -> dict[str, Any]:
        """Everything that changes while battles run: battle arrays, random stream, last actions."""
        state: dict[str, Any] = {"battle": self.battle.state_dict(), "rng": self.rng.bit_generator.state,
                                 "last_action": self.last_action.copy(), "max_reward": self.max_reward,
                                 "enemy_order": self._enemy_order()}
        if self.heuristic is not None:
            state["heuristic_target"] = self.heuristic.target.copy()
        if self.sighting is not None:
            state["sighting"] = {"owner": self.sighting.owner.copy(), "rng": self.sighting.rng.bit_generator.state}
        return state

    def _enemy_order(self) -> str:
        return "shuffled" if self.battle.shuffles_enemies else "fixed"

    def load_state_dict(self, state: dict[str, Any]) -> None:
        saved = state.get("enemy_order", "fixed")  # before enemies were shuffled, their order was fixed
        if saved != self._enemy_order():
            raise ValueError(f"its battles were saved with the enemies' order {saved} between episodes, and this "
                             f"env has it {self._enemy_order()}: resume with env.fixed_enemy_order="
                             f"{str(saved == 'fixed').lower()}")
        self.battle.load_state_dict(state["battle"])
        self.rng.bit_generator.state = state["rng"]
        self.last_action[...] = state["last_action"]
        self.max_reward = state["max_reward"]
        if self.heuristic is not None:
            self.heuristic.target = state["heuristic_target"].copy()
        if self.sighting is not None and "sighting" in state:  # checkpoints from before it remember nothing
            self.sighting.owner[...] = state["sighting"]["owner"]
            self.sighting.rng.bit_generator.state = state["sighting"]["rng"]

    def reset(self, mask: np.ndarray, drawn: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """New episodes where `mask` is true; `drawn` as in Battle.reset."""
        self.battle.reset(mask, drawn)
        self.last_action[mask] = 0.0
        if self.max_reward is None and mask.any():
            b, first, cfg = self.battle, int(np.flatnonzero(mask)[0]), self.rewards
            enemy = b.stats.max_hp[first, self.n_agents:] + b.stats.max_shield[first, self.n_agents:]
            enemy_hs = float(enemy.sum())
            self.max_reward = self.n_enemies * cfg.reward_death_value + cfg.reward_win + enemy_hs
            if cfg.reward_scale and not cfg.reward_scale_rate > 0:
                raise UserError(f"reward_scale_rate must be > 0, got {cfg.reward_scale_rate:g}")
            if not math.isfinite(self.max_reward / cfg.reward_scale_rate) or self.max_reward <= 0:
                raise UserError(f"the reward options make the largest episode reward {self.max_reward:g} (scaled by "
                                f"reward_scale_rate {cfg.reward_scale_rate:g}); it must be positive and finite")
        if self.heuristic is not None:
            self.heuristic.reset(mask)
        if self.sighting is not None:
            self.sighting.reset(mask)

    def step(self, actions: np.ndarray) -> StepOutcome:
        """Advance every env one agent step; `actions` [n_envs, n_agents] must be available actions."""
        s, a, cfg = self.battle.state, self.n_agents, self.rewards
        prev_alive = s.alive.copy()
        prev_hs = s.hp + s.shield
        self.last_action[...] = 0.0  # the actions passed, also with heuristic_ai (as smac records them)
        np.put_along_axis(self.last_action, actions[..., None], 1.0, axis=2)
        orders = actions if self.heuristic is None else self.heuristic.orders()
        self.battle.step(orders)
        if self.sighting is not None:
            self.sighting.forget(s.alive, a)
        died = prev_alive & ~s.alive
        dead_allies = died[:, :a].sum(1)
        dead_enemies = died[:, a:].sum(1)
        allies_left, enemies_left = self._fighting(s.alive[:, :a], a=True), self._fighting(s.alive[:, a:], a=False)
        won = allies_left & ~enemies_left
        lost = ~allies_left & enemies_left
        ended = ~(allies_left & enemies_left)
        timeout = ~ended & (s.steps >= self.limit)
        if cfg.reward_sparse:  # scaled below like the dense reward, as smac does
            reward = won.astype(np.float64) - lost
        else:
            damage = prev_hs - (s.hp + s.shield)
            delta_enemy = (damage[:, a:] * prev_alive[:, a:]).sum(1)
            delta_deaths = cfg.reward_death_value * dead_enemies
            if cfg.reward_only_positive:  # smac v1's abs() pays for enemy shield regeneration; smacv2 clips
                positive = delta_enemy + delta_deaths
                reward = np.maximum(positive, 0.0) if cfg.reward_positive_part else np.abs(positive)
            else:
                delta_ally = cfg.reward_negative_scale * (damage[:, :a] * prev_alive[:, :a]).sum(1)
                reward = delta_enemy + delta_deaths - delta_ally \
                    - cfg.reward_death_value * cfg.reward_negative_scale * dead_allies
            reward = reward + cfg.reward_win * won + cfg.reward_defeat * lost
        if cfg.reward_scale:
            assert self.max_reward is not None, "step() before the first reset()"
            reward = reward / (self.max_reward / cfg.reward_scale_rate)
        return StepOutcome(reward, ended, timeout, won, dead_allies, dead_enemies, orders)

    def _fighting(self, alive: np.ndarray, a: bool) -> np.ndarray:
        """A side is still in the fight if any unit lives (on MMM maps, medivacs alone do not count)."""
        side = slice(None, self.n_agents) if a else slice(self.n_agents, None)
        return (alive & ~self.battle.stats.is_medivac[:, side]).any(1)

    def observe(self, idx: np.ndarray | None = None, obs_out: np.ndarray | None = None,
                turns: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(obs [n, A, obs], state [n, state], avail [n, A, n_actions]) for envs `idx` (default: all);
        observations are written into `obs_out` when given. With smacv2's sighting memory each call is one
        smacv2 get_obs(): the agents sight enemies in the order of `turns` [n, A] (default: a random order;
        see envs.smac.sighting).

        Large batches are observed in blocks of envs whose observations fit in a CPU cache: each feature
        is written as a separate strided pass, which would otherwise go out to memory every time."""
        idx = self.all if idx is None else idx
        n, f = len(idx), self.features
        if self.sighting is not None and turns is None:
            turns = self.sighting.random_turns(n, self.n_agents)
        block = max(1, OBS_BLOCK_BYTES // (4 * f.obs_size * self.n_agents))
        if n <= block:
            return self._observe(slice(None) if idx is self.all else idx, obs_out, turns)
        obs = np.empty((n, self.n_agents, f.obs_size), np.float32) if obs_out is None else obs_out
        state = np.empty((n, f.state_size), np.float32)
        avail = np.empty((n, self.n_agents, self.n_actions), bool)
        for start in range(0, n, block):
            part = slice(start, start + block)
            sub = part if idx is self.all else idx[part]  # a slice reads views, not copies
            _, state[part], avail[part] = self._observe(sub, obs[part], None if turns is None else turns[part])
        return obs, state, avail

    def _observe(self, idx: np.ndarray | slice, obs_out: np.ndarray | None, turns: np.ndarray | None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        f, a = self.features, self.n_agents
        rel = f.relative(idx)
        dist = np.abs(rel)
        avail = f.avail(idx, dist)
        shown = None
        if self.sighting is not None:
            assert turns is not None
            sight, _ = f.ranges(idx)
            in_sight = (dist[:, :, a:] < sight) & self.battle.state.alive[idx, :a, None]
            shown = self.sighting.shown(self.sighting.sight(idx, in_sight, turns))
        last = self.last_action[idx]
        steps = self.battle.state.steps
        obs = f.obs(idx, rel, dist, avail, last, steps, self.limit, obs_out, shown)
        state = f.state(idx, obs, last, steps, self.limit)
        return obs, state, avail

    def check_actions(self, actions: np.ndarray, avail: np.ndarray) -> None:
        """Raise ValueError naming the first bad action (UnavailableActionError where smac asserts); with heuristic_ai
        the passed actions only need to be action numbers (the heuristic's orders replace them)."""
        if actions.shape != (self.n_envs, self.n_agents):
            raise ValueError(f"expected actions of shape ({self.n_envs}, {self.n_agents}), got {actions.shape}")
        if (actions < 0).any() or (actions >= self.n_actions).any():
            raise ValueError(f"actions must lie in [0, {self.n_actions}); got {actions.min()}..{actions.max()}")
        if self.heuristic is not None:
            return
        ok = np.take_along_axis(avail, actions[..., None], axis=2)[..., 0]
        if not ok.all():
            env, agent = map(int, np.argwhere(~ok)[0])
            action = int(actions[env, agent])
            raise UnavailableActionError(f"agent {agent} cannot perform action {action} in env {env}; "
                                         f"available: {np.flatnonzero(avail[env, agent]).tolist()}")


# accepted and ignored: settings of the SC2 engine or its client, meaningless without it
# (num_fov_actions only matters with conic_fov, which must be False)
IGNORED = frozenset({"difficulty", "game_version", "replay_dir", "replay_prefix",
                     "window_size_x", "window_size_y", "debug", "kill_unit_step_mul", "num_fov_actions"})
# accepted at the one value the simulator honours (smac's/smacv2's default); any other value is an error
ONLY_DEFAULT: dict[str, tuple[Any, str]] = {
    "step_mul": (8, "one agent step is 8 game steps"),
    "move_amount": (2, "moves, can_move and the pathing and height probes use smac's move amount 2"),
    "conic_fov": (False, "smacv2's conic field of view and look actions are not simulated"),
    "prob_obs_enemy": (1.0, "every agent sees every enemy in its sight range"),
    "action_mask": (True, "attack actions are always masked by shoot range"),
    "fully_observable": (False, "observations always respect sight ranges"),
}
REWARD_KEYS = frozenset(RewardConfig.__dataclass_fields__)
FLAG_KEYS = frozenset(FeatureFlags.__dataclass_fields__)
SIMULATOR_KEYS = frozenset(SimulatorOptions.__dataclass_fields__)


def make_batch(map_name: str, n_envs: int, seed: int | None, episode_limit: int | None, flags: dict[str, Any]
               ) -> SMACBatch:
    """SMACBatch from SMAC-style keyword flags (FeatureFlags, RewardConfig) and SimulatorOptions (smac's engine
    settings are accepted and ignored, smacv2's unsupported ones only at their defaults); unknown flags raise
    UserError naming them.
    `map_name` is a SMAC map or a generated scenario (smaclite_<race>_<n>_vs_<m>, see envs.smac.scenarios)."""
    for key, (default, why) in ONLY_DEFAULT.items():
        if key in flags and flags[key] != default:
            raise UserError(f"{key}={flags[key]!r} is not supported by the built-in SMAC simulator ({why}); "
                            f"accepted: {default!r}")
    flags = {k: v for k, v in flags.items() if k not in IGNORED and k not in ONLY_DEFAULT}
    sim = SimulatorOptions(**{k: bool(flags.pop(k)) for k in SIMULATOR_KEYS if k in flags})
    roster: Roster | None
    if map_name in SCENARIOS:
        smac_map, roster, defaults = SCENARIOS[map_name].build()
        flags = {**defaults, **flags}
    else:
        smac_map, roster = get_map(map_name), None
    unknown = sorted(set(flags) - REWARD_KEYS - FLAG_KEYS)
    if unknown:
        raise UserError(f"unknown SMAC option(s) {', '.join(unknown)}; valid: "
                        f"{', '.join(sorted(REWARD_KEYS | FLAG_KEYS | SIMULATOR_KEYS))}")
    if flags.get("obs_instead_of_state") and flags.get("sighted_enemies"):
        raise UserError(f"obs_instead_of_state is not available on {map_name}: its observations remember sighted "
                        f"enemies as smacv2's do (sighted_enemies), and smacv2 does not implement it")
    return SMACBatch(smac_map, n_envs, seed,
                     FeatureFlags(**{k: v for k, v in flags.items() if k in FLAG_KEYS}),
                     RewardConfig(**{k: v for k, v in flags.items() if k in REWARD_KEYS}), episode_limit,
                     sim.heuristic_ai, roster, sim.compiled, sim.fixed_enemy_order)
