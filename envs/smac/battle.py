"""Batched battle dynamics for SMAC scenarios: n_envs battles of one map advanced by whole-batch numpy calls.

Arrays are shaped [n_envs, n_units] with allies first (agent ids 0..A-1) and enemies after; positions are
complex numbers (x + iy), so a distance is one `abs` and a displacement one multiplication. One agent step
runs 8 ticks of 1/16 normal-speed second (SMAC's step_mul=8). Every tick each unit closes on its target or
goal, fires when its weapon is ready and in reach, and regenerates; every `SENSE_EVERY` ticks the pairwise
view is refreshed: enemy target selection (attack-move AI) and collision push-apart. The numpy step here
(`Battle.step_reference`) has no Python loop over envs or units; where it covers the battle, `Battle.step`
runs its compiled twin in `battle_fused.py` instead (chosen by whoever builds the battle, `SMACBatch`), equal to
it bit for bit.

A `Battle` holds its arrays in three typed containers: `stats` (each unit slot's stats), `pairs` (pairwise
stat tables) and `state` (what changes as the battles run).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import numpy as np

from envs.smac import engine
from envs.smac.battle_constants import (
    AI_TARGET_JITTER,
    BEAM_HALF_WIDTH,
    CHASE_MARGIN,
    D2_MARGIN,
    DENSE_COLLISION_UNITS,
    DT,
    FAR,
    MAX_PUSH,
    MEDIVAC_TARGET_PENALTY,
    MOVE_AMOUNT,
    MOVE_STEPS,
    N_NON_ATTACK_ACTIONS,
    RETARGET_EVERY,
    SCAN_RANGE,
    SENSE_EVERY,
    TICKS_PER_STEP,
)
from envs.smac.maps import MAP_SIZE, SMACMap
from envs.smac.pathing import map_paths
from envs.smac.roster import FixedRoster, Roster
from envs.smac.units import (
    MEDIVAC_ENERGY_REGEN,
    MEDIVAC_HP_PER_ENERGY,
    MEDIVAC_MAX_ENERGY,
    MEDIVAC_START_ENERGY,
    SHIELD_REGEN_DELAY,
    SHIELD_REGEN_PER_SECOND,
    UnitTable,
)

if TYPE_CHECKING:
    from typing_extensions import Self

WALK_PLANE = (MAP_SIZE + 2) ** 2  # offset of the cliff walkers' grid in Battle._walk
# map constants that checkpoints saved before the typed containers also hold; loading ignores them
RETIRED_STATE_KEYS = frozenset({"is_ally", "enemy_of"})
# state that checkpoints saved before it existed lack; loading one fills it with its value at a reset
ADDED_STATE_KEYS = {"hit_in": FAR}


@dataclass(slots=True)
class _Arrays:
    """Base of the battle's array containers: what treats every field alike (saving, loading, refilling envs)."""

    def arrays(self) -> dict[str, np.ndarray]:
        """Every field by name: the arrays themselves, not copies."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def set_envs(self, idx: np.ndarray, rows: Self) -> None:
        """Overwrite envs `idx` (the first axis) of every field with the same container for those envs."""
        for mine, new in zip(self.arrays().values(), rows.arrays().values(), strict=True):
            mine[idx] = new


@dataclass(slots=True)
class UnitStats(_Arrays):
    """Stats of each env's unit slots [n_envs, n_units], copied from the unit-type table when a team is drawn.

    Per env so that generated rosters can give every episode its own team; contiguous, because numpy is
    several times slower on broadcast operands with a short inner axis."""

    kind: np.ndarray  # int64 index into the roster's type_names
    max_hp: np.ndarray
    max_shield: np.ndarray
    armor: np.ndarray
    attacks: np.ndarray  # hits per volley
    range: np.ndarray
    radius: np.ndarray
    cooldown_ticks: np.ndarray  # ticks between volleys
    speed_per_tick: np.ndarray
    armored: np.ndarray  # bool
    light: np.ndarray  # bool
    obs_max_cooldown: np.ndarray  # scales the global state's cooldown feature
    heal_per_tick: np.ndarray  # medivacs
    is_medivac: np.ndarray
    is_line_splash: np.ndarray  # colossus beam
    is_suicide: np.ndarray  # baneling
    splash_radius: np.ndarray
    regen_per_tick: np.ndarray  # zerg hp regeneration
    projectile_ticks: np.ndarray  # int64 ticks from firing to the hit landing
    target_penalty: np.ndarray  # [n_envs, n_agents] float32: added to an ally's distance by the enemy AI

    @classmethod
    def of(cls, t: UnitTable, kinds: np.ndarray, n_agents: int) -> UnitStats:
        """Stats of units whose types are `kinds` [n, U] (new arrays)."""
        return cls(
            kind=np.array(kinds, np.int64, order="C"), max_hp=t.hp[kinds], max_shield=t.shield[kinds],
            armor=t.armor[kinds], attacks=t.attacks[kinds], range=t.range[kinds], radius=t.radius[kinds],
            cooldown_ticks=t.cooldown_ticks[kinds], speed_per_tick=t.speed_per_tick[kinds],
            armored=t.armored[kinds], light=t.light[kinds], obs_max_cooldown=t.obs_max_cooldown[kinds],
            heal_per_tick=t.heal_per_tick[kinds], is_medivac=t.is_medivac[kinds],
            is_line_splash=t.is_line_splash[kinds], is_suicide=t.is_suicide[kinds],
            splash_radius=t.splash_radius[kinds], regen_per_tick=t.regen_per_tick[kinds],
            projectile_ticks=t.projectile_ticks[kinds],
            target_penalty=np.where(t.is_medivac[kinds[:, :n_agents]], np.float32(MEDIVAC_TARGET_PENALTY),
                                    np.float32(0.0)))


@dataclass(slots=True)
class PairStats(_Arrays):
    """Pairwise stat tables [n_envs, U, U]: [b, i, j] is unit i's value against unit j.

    A fixed roster's tables are one env's [U, U] block broadcast read-only over the envs (`shared`); a
    generated roster's rows are refilled at each reset."""

    reach: np.ndarray  # weapon range plus both radii
    radius_sum: np.ndarray
    volley: np.ndarray  # damage of one volley: hit damage x attacks
    hit_damage: np.ndarray  # damage of one hit, the bonus against the target's armour included
    scan_reach: np.ndarray  # enemy auto-acquire distance: scan range plus both radii
    collide_d2: np.ndarray  # pairs closer than this squared distance may overlap (-1: never collide)
    scan_ea: np.ndarray  # [n_envs, E, A] scan_reach of enemies against allies, contiguous: always its own array

    @classmethod
    def of(cls, t: UnitTable, kinds: np.ndarray, n_agents: int) -> PairStats:
        """Tables of units whose types are `kinds` [n, U] (new arrays)."""
        a, u = n_agents, kinds.shape[1]
        radius = t.radius[kinds]
        radius_sum = radius[:, :, None] + radius[:, None, :]
        armored, light = t.armored[kinds][:, None, :], t.light[kinds][:, None, :]
        hit = np.where(armored, t.damage_vs_armored[kinds][:, :, None],
                       np.where(light, t.damage_vs_light[kinds][:, :, None], t.damage_vs_other[kinds][:, :, None]))
        ground, over = ~t.is_medivac[kinds], t.steps_over_ground[kinds]
        collide = ground[:, :, None] & ground[:, None, :] & ~np.eye(u, dtype=bool) \
            & (over[:, :, None] == over[:, None, :])  # a colossus walks over the others
        scan_reach = SCAN_RANGE + radius_sum
        return cls(reach=t.range[kinds][:, :, None] + radius_sum, radius_sum=radius_sum,
                   volley=hit * t.attacks[kinds][:, :, None], hit_damage=hit, scan_reach=scan_reach,
                   # large battles pre-select colliding pairs on approximate squared distances
                   collide_d2=np.where(collide, (radius_sum + D2_MARGIN) ** 2, -1.0),
                   scan_ea=np.ascontiguousarray(scan_reach[:, a:, :a]))

    def shared(self, n_envs: int) -> PairStats:
        """These tables of one env as read-only views over `n_envs` envs (scan_ea: a contiguous copy)."""

        def view(table: np.ndarray) -> np.ndarray:
            return np.broadcast_to(table, (n_envs, *table.shape[1:]))

        return PairStats(reach=view(self.reach), radius_sum=view(self.radius_sum), volley=view(self.volley),
                         hit_damage=view(self.hit_damage), scan_reach=view(self.scan_reach),
                         collide_d2=view(self.collide_d2), scan_ea=np.ascontiguousarray(view(self.scan_ea)))


@dataclass(slots=True)
class BattleState(_Arrays):
    """What changes as the battles run, [n_envs, n_units] unless noted."""

    z: np.ndarray  # complex64 positions x + iy (float32 precision is ample on a 32 x 32 map)
    hp: np.ndarray
    shield: np.ndarray
    energy: np.ndarray  # medivacs
    cooldown: np.ndarray  # ticks until the weapon is ready
    shield_delay: np.ndarray  # ticks until shields regenerate
    alive: np.ndarray
    ai_target: np.ndarray  # the enemy AI's target unit, -1 for none
    last_target: np.ndarray  # what each unit attacked/healed in the last step (rendering)
    hit_in: np.ndarray  # [n_envs, n_agents] ticks until an ally's first hit on its attack target lands: < 0 landed
    # (its target retaliates), FAR none fired since it took that target (float32 FAR - 1 == FAR)
    steps: np.ndarray  # [n_envs] agent steps into the episode
    attack_point: np.ndarray  # [n_envs] complex64: the enemy's attack-move goal
    pending: np.ndarray  # [delays, n_envs, n_units, (damage, hits)]: pending[k] lands k ticks from now

    @classmethod
    def empty(cls, n_envs: int, n_units: int, n_agents: int, max_delay: int, attack_point: complex) -> BattleState:
        """Zeroed state before the first reset (no unit alive, no target)."""
        shape = (n_envs, n_units)
        return cls(z=np.zeros(shape, np.complex64), hp=np.zeros(shape, np.float32),
                   shield=np.zeros(shape, np.float32), energy=np.zeros(shape, np.float32),
                   cooldown=np.zeros(shape, np.float32), shield_delay=np.zeros(shape, np.float32),
                   alive=np.zeros(shape, bool), ai_target=np.full(shape, -1), last_target=np.full(shape, -1),
                   hit_in=np.full((n_envs, n_agents), FAR, np.float32),
                   steps=np.zeros(n_envs, np.int64), attack_point=np.full(n_envs, attack_point, np.complex64),
                   pending=np.zeros((max_delay + 1, *shape, 2), np.float32))


class Battle:
    """State and dynamics of `n_envs` battles on `smac_map`; see module docstring. `roster` draws each new
    episode's unit types and positions (default: the map's fixed teams); `compiled=False` runs the engine as
    plain Python (slow; for tests and debugging)."""

    def __init__(self, smac_map: SMACMap, n_envs: int, rng: np.random.Generator, roster: Roster | None = None,
                 compiled: bool = True) -> None:
        self.map = smac_map
        self.n_envs = n_envs
        self.rng = rng
        self.roster: Roster = roster or FixedRoster(smac_map)
        self.n_agents, self.n_enemies = a, e = smac_map.n_agents, smac_map.n_enemies
        self.n_units = n_units = a + e
        self.types = t = UnitTable.build(self.roster.type_names, DT)  # stats per unit type
        self.is_ally = np.arange(n_units) < a
        self.enemy_of = self.is_ally[:, None] != self.is_ally[None, :]
        terrain = smac_map.terrain()
        # cliff walkers (the Colossus) go where others cannot only on maps with cliffs (2c_vs_64zg)
        cliffs = bool(t.walks_cliffs.any()) and not np.array_equal(terrain.cliff_walkable, terrain.walkable)
        padded = np.zeros((2, MAP_SIZE + 2, MAP_SIZE + 2), bool)
        padded[0, 1:-1, 1:-1] = terrain.walkable
        padded[1, 1:-1, 1:-1] = terrain.cliff_walkable
        self._walk = padded.ravel()  # cell (cx, cy) -> index (cx + 1) * (MAP_SIZE + 2) + cy + 1 (+ WALK_PLANE
        # for cliff walkers)
        self._box = None if cliffs else terrain.rectangle()
        paths = None if self._box is not None else map_paths(terrain.name)
        self.paths = None if paths is None or paths.visible.all() else paths  # None: every straight line is clear
        # None where no cliff walker has a cliff to cross
        self.cliff_paths = map_paths(terrain.name, cliff_walkers=True) if cliffs else None
        if self._box is not None:  # bounds of interleaved (x, y) floats, long enough for [n, 4 * n_units] points
            x0, x1, y0, y1 = self._box
            self._box_lo = np.tile(np.array([x0, y0], np.float32), 4 * n_units)
            self._box_hi = np.tile(np.array([x1, y1], np.float32), 4 * n_units)
        self.has_shields = bool((t.shield > 0).any())
        self.has_splash = bool(t.is_line_splash.any())
        self.has_suicide = bool(t.is_suicide.any())
        self.has_medivac = bool(t.is_medivac.any())
        self.has_regen = bool((t.regen_per_tick > 0).any())
        self.has_stepping_over = bool(t.steps_over_ground.any())
        self.delays = sorted(set(t.projectile_ticks.tolist()))
        # A fixed roster's stats are the same in every env: its pairwise tables are one [U, U] block broadcast
        # read-only. A generated roster's stats are drawn per env at each reset (type 0 until then).
        self._fixed = isinstance(self.roster, FixedRoster)
        if isinstance(self.roster, FixedRoster):
            kinds = self.roster.kinds[None]
            self.stats = UnitStats.of(t, np.broadcast_to(kinds, (n_envs, n_units)), a)
            self.pairs = PairStats.of(t, kinds, a).shared(n_envs)
        else:
            kinds = np.zeros((n_envs, n_units), np.int64)
            self.stats, self.pairs = UnitStats.of(t, kinds, a), PairStats.of(t, kinds, a)
        self.state = BattleState.empty(n_envs, n_units, a, max(self.delays), complex(*smac_map.attack_point))
        self._units = np.arange(n_units)
        # flat indices: unit (b, j) is z.ravel()[_flat_base[b] + j]; pair (b, u, j) of a [B, U, U] array is
        # [_pair_env[b, u] + j], of a pairwise stat [_pair_stat[b, u] + j] (stat tables: see _pairwise)
        self._flat_base = np.arange(n_envs)[:, None] * n_units
        self._agent_base = np.arange(n_envs)[:, None] * a  # the same for [B, A] arrays
        if n_units > DENSE_COLLISION_UNITS:  # scratch buffers of _push_apart_sparse
            self._d2 = np.empty((n_envs, n_units, n_units), np.float32)
            self._close = np.empty((n_envs, n_units, n_units), bool)
        self._pair_env = (self._flat_base + self._units) * n_units
        self._pair_stat = self._units[None] * n_units if self._fixed else self._pair_env
        self._pair_ea = self._pair_env[:, a:, None] + np.arange(a)  # [B, E, A]: pairs (enemy, ally)
        self._ea_base = np.arange(n_envs * e).reshape(n_envs, e) * a  # [B, E, A] array: row (b, e) starts here
        self._engine = engine if compiled else engine.plain()
        self._world = self._engine.world(self)

    # -- saving -----------------------------------------------------------------------------------------
    def _changing(self) -> Iterator[tuple[str, np.ndarray]]:
        """(name, array) of every array that can change during battles: the state, and the stats (a fixed
        roster's pairwise tables are shared read-only views; scratch buffers and indices are not held here)."""
        for part in (self.stats, self.pairs, self.state):
            for name, value in part.arrays().items():
                if value.flags.writeable:
                    yield name, value

    def state_dict(self) -> dict[str, np.ndarray]:
        """Copies of every array that can change during battles, by field name."""
        return {name: value.copy() for name, value in self._changing()}

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        """Copy a `state_dict()` into this battle's arrays (their dtypes kept)."""
        state = {k: v for k, v in state.items() if k not in RETIRED_STATE_KEYS}
        mine = dict(self._changing())
        for name, fill in ADDED_STATE_KEYS.items():
            state.setdefault(name, np.full_like(mine[name], fill))
        if set(state) != set(mine) or any(state[k].shape != v.shape for k, v in mine.items()):
            raise ValueError("saved battle state does not match this map and number of envs")
        for name, value in mine.items():
            value[...] = state[name]

    # -- episodes ---------------------------------------------------------------------------------------
    def reset(self, mask: np.ndarray, drawn: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Start new episodes in the envs where `mask` is true, with the roster's draw or with `drawn`: unit-type
        indices [n, U] and start positions [n, U, 2] for those envs (a generated roster's only)."""
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            return
        s, st, a = self.state, self.stats, self.n_agents
        kinds, positions = self.roster.sample(self.rng, idx.size) if drawn is None else drawn
        if not self._fixed:
            st.set_envs(idx, UnitStats.of(self.types, kinds, a))
            self.pairs.set_envs(idx, PairStats.of(self.types, kinds, a))
        s.z[idx] = positions @ np.array([1, 1j])
        if self.roster.hunts_closest:  # no map point: an enemy without a target walks toward the allies' start
            s.attack_point[idx] = s.z[idx, :a].mean(1)
        elif self.map.attack_spread:  # a point drawn on a horizontal segment at each spawn (2m_vs_1z)
            x, y = self.map.attack_point
            s.attack_point[idx] = x + self.rng.uniform(-1, 1, idx.size) * self.map.attack_spread + 1j * y
        s.hp[idx] = st.max_hp[idx]
        s.shield[idx] = st.max_shield[idx]
        s.energy[idx] = np.where(st.is_medivac[idx], MEDIVAC_START_ENERGY, 0.0)
        s.cooldown[idx] = self.rng.uniform(0, 1, (idx.size, self.n_units))
        s.shield_delay[idx] = 0.0
        s.alive[idx] = True
        s.ai_target[idx] = -1
        s.last_target[idx] = -1
        s.hit_in[idx] = FAR
        s.pending[:, idx] = 0.0
        s.steps[idx] = 0

    # -- one agent step -------------------------------------------------------------------------------
    def step(self, actions: np.ndarray) -> None:
        """Advance every env by one agent step given ally actions [n_envs, n_agents] (already validated): the
        fast step chosen at construction where there is one, else the numpy reference below."""
        self._engine.advance(self, self._world, actions)

    def step_reference(self, actions: np.ndarray) -> None:
        """`step` in whole-batch numpy: the readable reference that the compiled step is tested equal to."""
        s, a, shape = self.state, self.n_agents, (self.n_envs, self.n_units)
        attack = actions >= N_NON_ATTACK_ACTIONS
        j = actions - N_NON_ATTACK_ACTIONS
        ally_target = np.full(shape, -1)
        ally_target[:, :a] = np.where(attack, np.where(self.stats.is_medivac[:, :a], j, j + a), -1)
        moving = (actions >= 2) & ~attack
        goal = np.empty(shape, np.complex64)
        goal[:, :a] = s.z[:, :a] + MOVE_AMOUNT * MOVE_STEPS[np.clip(actions - 2, 0, 3)]
        goal[:, a:] = s.attack_point[:, None]
        has_goal = np.ones(shape, bool)
        has_goal[:, :a] = moving
        s.hit_in[ally_target[:, :a] != s.last_target[:, :a]] = FAR  # a new target: no hit on it yet
        for tick in range(TICKS_PER_STEP):
            if tick % SENSE_EVERY == 0:
                retarget = tick % RETARGET_EVERY == 0
                self._sense(ally_target, retarget)
                if retarget:
                    target = np.where(ally_target >= 0, ally_target, s.ai_target)
                    tidx = np.maximum(target, 0)
                    targeting = target >= 0
                    flat_t, pair_t = self._flat_base + tidx, self._pair_stat + tidx
                    reach = self._pairwise(self.pairs.reach, pair_t)
            self._tick(flat_t, pair_t, targeting, reach, goal, has_goal)
        s.last_target = target
        s.steps += 1

    def _pairwise(self, table: np.ndarray, pair: np.ndarray) -> np.ndarray:
        """table[b, u, j] of a pairwise stat table [B, U, U] at flat pair indices (from `_pair_stat`); a fixed
        roster's table is one broadcast [U, U] block."""
        return np.take(table[0] if self._fixed else table, pair)

    def _sense(self, ally_target: np.ndarray, retarget: bool = True) -> None:
        """Collision push-apart, then (when `retarget`) enemy target selection from the distances before it."""
        if self.n_units <= DENSE_COLLISION_UNITS:
            to_ally = self._push_apart_dense()
        elif retarget:
            a = self.n_agents
            to_ally = np.abs(self.state.z[:, None, :a] - self.state.z[:, a:, None])
            self._push_apart_sparse()
        else:
            self._push_apart_sparse()
        if retarget:
            self._enemy_ai(to_ally, ally_target)

    def _push_apart_dense(self) -> np.ndarray:
        """Collisions from all pairwise distances; returns the enemy-to-ally distances [B, E, A]."""
        s, st, u = self.state, self.stats, self.n_units
        diff = _cols(s.z, u) - _rows(s.z, u)  # [B, i, j] = z_j - z_i
        dist = np.abs(diff)
        # units that do not collide (dead, air) get a hugely negative radius, so they never overlap;
        # a unit's pair with itself has diff 0, so it pushes nothing
        live = s.alive & ~st.is_medivac if self.has_medivac else s.alive
        radius = np.where(live, st.radius, -FAR)
        overlap = _rows(radius, u) + _cols(radius, u) - dist
        w = np.maximum(overlap, 0.0) / np.maximum(dist, 1e-6)
        if self.has_stepping_over:  # pairs that never collide (a colossus and a smaller ground unit)
            w *= self.pairs.collide_d2 >= 0
        push = _sum_last(w * diff)
        self._place(s.z - self._limit_push(0.5 * push))
        return np.take(dist, self._pair_ea)

    def _push_apart_sparse(self) -> None:
        """Collisions in large battles: approximate squared distances of all pairs from one batched matmul,
        [x, y, |z|^2, 1] . [-2x, -2y, 1, |z|^2], pre-select the few pairs that may overlap; exact distances
        decide among those."""
        s, z, u = self.state, self.state.z, self.n_units
        x, y = z.real, z.imag
        norm, ones = x * x + y * y, np.ones_like(x)
        d2 = np.matmul(np.stack([x, y, norm, ones], -1), np.stack([-2 * x, -2 * y, ones, norm], 1), out=self._d2)
        close = np.less(d2, self.pairs.collide_d2, out=self._close)  # reused buffers: no page faults on fresh MBs
        pair = np.flatnonzero(close)  # (b * U + i) * U + j; far cheaper than nonzero() here
        unit_i, j = np.divmod(pair, u)  # flat indices b * U + i of the first unit
        i = unit_i % u
        unit_j = unit_i - i + j
        diff = np.take(z, unit_j) - np.take(z, unit_i)
        d = np.abs(diff)
        overlap = self._pairwise(self.pairs.radius_sum, pair if not self._fixed else i * u + j) - d
        hit = (overlap > 0) & np.take(s.alive, unit_i) & np.take(s.alive, unit_j)
        if hit.any():
            push = diff[hit] * (-0.5 * overlap[hit] / np.maximum(d[hit], 1e-6))
            unit_i, size = unit_i[hit], self.n_envs * u
            shift = np.bincount(unit_i, push.real, size) + 1j * np.bincount(unit_i, push.imag, size)
            self._place(z + self._limit_push(shift.reshape(z.shape).astype(np.complex64)))

    def _enemy_ai(self, to_ally: np.ndarray, ally_target: np.ndarray) -> None:
        """The enemy's targets. Under an attack-move (SMAC maps, SMAC_SPEC §5.5/5.7): keep a live target that is
        in reach or attacking us, else acquire the nearest ally within scan range or attacking us (medivacs
        last), where an ally counts as attacking an enemy once its first hit on it lands (SC2 units retaliate
        when hit, not when targeted: `BattleState.hit_in`). Hunting (smacv2's script): keep a live target,
        else take the closest live ally. Enemy medivacs follow the most damaged friendly unit. `to_ally`
        [B, E, A] distances (contiguous); `ally_target` [B, U] the allies' attack orders."""
        s, st, a, e = self.state, self.stats, self.n_agents, self.n_enemies
        current = s.ai_target[:, a:]
        # enemy medivacs hold friendly targets (>= a): never kept here
        cidx = np.minimum(np.maximum(current, 0), a - 1)
        keep = (current >= 0) & (current < a) & np.take(s.alive, self._flat_base + cidx)
        if self.roster.hunts_closest:
            score = to_ally + _cols(np.where(s.alive[:, :a], np.float32(0.0), np.float32(FAR)), e)
        else:
            hitting = np.where(s.hit_in < 0, ally_target[:, :a], -1)  # [B, A]: the enemy each ally has hit
            attacked_by = hitting[:, None, :] == self._units[a:, None]  # [B, E, A]
            keep &= (np.take(to_ally, self._ea_base + cidx)
                     <= self._pairwise(self.pairs.reach, self._pair_stat[:, a:] + cidx)) \
                | (np.take(hitting, self._agent_base + cidx) == self._units[a:])
            # candidates (live allies in scan range or attacking us) score distance + penalty + jitter < FAR
            score = np.where((to_ally < self.pairs.scan_ea) | attacked_by, to_ally, FAR)
            score += _cols(np.where(s.alive[:, :a], st.target_penalty, FAR), e)  # dead allies: FAR
            score += AI_TARGET_JITTER * self.rng.random(score.shape, dtype=np.float32)
        best = score.argmin(axis=2)
        found = np.take(score, self._ea_base + best) < FAR
        chosen = np.where(keep, current, np.where(found, best, -1))
        if self.has_medivac:
            frac = np.where(s.alive[:, a:] & ~st.is_medivac[:, a:], s.hp[:, a:] / st.max_hp[:, a:], FAR)
            chosen = np.where(st.is_medivac[:, a:], frac.argmin(axis=1)[:, None] + a, chosen)
        s.ai_target[:, a:] = chosen

    def _tick(self, flat_t: np.ndarray, pair_t: np.ndarray, targeting: np.ndarray, reach: np.ndarray,
              goal: np.ndarray, has_goal: np.ndarray) -> None:
        """One world tick; each unit's target is at flat index `flat_t` (pair index `pair_t`)."""
        s, st = self.state, self.stats
        has_target = targeting & s.alive & np.take(s.alive, flat_t)
        tz = np.take(s.z, flat_t)
        in_range = has_target & (np.abs(tz - s.z) <= reach)
        # move: chase a target out of reach, else head for the goal (move order / attack-move point), around
        # obstacles on maps that have them
        chase = has_target & ~in_range
        dest = np.where(chase, tz, goal)
        offset = dest - s.z
        length = np.abs(offset)
        heading = length
        if self.paths is not None or self.cliff_paths is not None:  # walk toward a waypoint, as far as the
            # destination allows
            waypoint = dest.copy() if self.paths is None else self.paths.heading(s.z, dest)
            if self.cliff_paths is not None:  # the few cliff walkers have paths of their own
                walkers = self._walks_cliffs()
                waypoint[walkers] = self.cliff_paths.heading(s.z[walkers], dest[walkers])
            offset = waypoint - s.z
            heading = np.abs(offset)
        wants = s.alive & (chase | (~has_target & has_goal))
        step = np.minimum(np.maximum(length - (reach - CHASE_MARGIN) * chase, 0.0), st.speed_per_tick) * wants \
            / np.maximum(heading, 1e-9)
        self._place(s.z + offset * step)
        # fire (or heal) when in reach and ready
        ready = in_range & (s.cooldown <= 0)
        if self.has_medivac:
            self._heal(ready & st.is_medivac, flat_t)
            ready &= ~st.is_medivac
        if ready.any():
            self._attack(ready, flat_t, pair_t)
        self._land_hits()
        self._regenerate()

    def _limit_push(self, shift: np.ndarray) -> np.ndarray:
        """Collision shifts [B, U], at most MAX_PUSH long where walls lie inside the map, so that a crowd cannot
        push a unit across a one-cell wall in one resolution (where the walkable area is one rectangle, a
        shift out of it is refused anyway)."""
        if self._box is not None:
            return shift
        length = np.abs(shift)
        return np.where(length > MAX_PUSH, shift * (MAX_PUSH / np.maximum(length, 1e-9)), shift)

    def _place(self, new: np.ndarray) -> None:
        """Move to `new` where walkable; blocked units slide along x or y, else stay."""
        s = self.state
        new = np.ascontiguousarray(new, np.complex64)
        if self._box is not None and self._inside_xy(new).all():  # the common case, without a per-unit reduction
            s.z = new
            return
        plane = self._walks_cliffs() * WALK_PLANE if self.cliff_paths is not None else 0
        ok = self.walkable_at(new, plane)
        if ok.all():
            s.z = new
            return
        x, y = s.z.real, s.z.imag
        slide_x = ~ok & self.walkable(new.real, y, plane)
        slide_y = ~ok & ~slide_x & self.walkable(x, new.imag, plane)
        s.z = np.where(ok, new, np.where(slide_x, new.real + 1j * y, np.where(slide_y, x + 1j * new.imag, s.z)))

    def walkable_at(self, z: np.ndarray, plane: np.ndarray | int = 0) -> np.ndarray:
        """walkable() of contiguous complex positions [n, m] (up to 4 * n_units per row), on `plane` as there."""
        if self._box is None:
            return self.walkable(z.real, z.imag, plane)
        return self._inside_xy(z).view(np.uint16) == 0x0101  # both x and y inside (one byte each)

    def _inside_xy(self, z: np.ndarray) -> np.ndarray:
        """[n, 2m] bools: each interleaved x and y of contiguous complex positions [n, m] lies within the
        walkable rectangle (faster than comparing strided .real/.imag views)."""
        xy = z.view(np.float32)
        width = xy.shape[-1]
        return (xy >= self._box_lo[:width]) & (xy < self._box_hi[:width])

    def walkable(self, x: np.ndarray, y: np.ndarray, plane: np.ndarray | int = 0) -> np.ndarray:
        """Whether points lie on walkable in-bounds cells (out of bounds is not walkable); `plane`: 0 for the
        ground grid, WALK_PLANE where the cliff walkers' grid applies."""
        if self._box is not None:  # the walkable area is one rectangle: four comparisons
            x0, x1, y0, y1 = self._box
            return (x >= x0) & (x < x1) & (y >= y0) & (y < y1)
        cx = np.clip(np.floor(x) + 1, 0, MAP_SIZE + 1)
        cy = np.clip(np.floor(y) + 1, 0, MAP_SIZE + 1)
        return self._walk[(cx * (MAP_SIZE + 2) + cy).astype(np.int64) + plane]

    def _walks_cliffs(self) -> np.ndarray:
        """[B, U] bools: the unit walks up and down cliffs."""
        return self.types.walks_cliffs[self.stats.kind]

    def _attack(self, fire: np.ndarray, flat_t: np.ndarray, pair_t: np.ndarray) -> None:
        """Fire: melee and instant hits land now, projectiles after their travel time (so shots already in
        flight at a target that dies are wasted, as in SC2)."""
        s, st, size = self.state, self.stats, self.n_envs * self.n_units
        direct = fire & ~st.is_suicide if self.has_suicide else fire
        volley = self._pairwise(self.pairs.volley, pair_t)
        if self.delays == [0]:  # no projectiles on this map: every hit lands now
            flat = flat_t[direct]
            total = np.bincount(flat, volley[direct], size).reshape(fire.shape)
            n_hits = np.bincount(flat, st.attacks[direct], size).reshape(fire.shape)
            if self.has_splash or self.has_suicide:
                splash_dmg, splash_hits = self._splash(fire, flat_t)
                total, n_hits = total + splash_dmg, n_hits + splash_hits
            self._apply_damage(total, n_hits)
            self._after_firing(fire)
            return
        for delay in self.delays:
            shots = direct & (st.projectile_ticks == delay) if len(self.delays) > 1 else direct
            if not shots.any():
                continue
            flat = flat_t[shots]
            slot = s.pending[delay]
            slot[..., 0] += np.bincount(flat, volley[shots], size).reshape(fire.shape)
            slot[..., 1] += np.bincount(flat, st.attacks[shots], size).reshape(fire.shape)
        if self.has_splash or self.has_suicide:
            splash_dmg, splash_hits = self._splash(fire, flat_t)
            s.pending[0, ..., 0] += splash_dmg
            s.pending[0, ..., 1] += splash_hits
        self._after_firing(fire)

    def _after_firing(self, fire: np.ndarray) -> None:
        s, st, a = self.state, self.stats, self.n_agents
        s.cooldown = np.where(fire, st.cooldown_ticks, s.cooldown)
        np.minimum(s.hit_in, st.projectile_ticks[:, :a], out=s.hit_in, where=fire[:, :a])
        if self.has_suicide:
            boom = fire & st.is_suicide
            s.hp[boom] = 0.0
            s.alive &= ~boom

    def _land_hits(self) -> None:
        """Apply the damage arriving this tick, then advance the projectiles in flight by one tick."""
        if self.delays == [0]:
            return
        s = self.state
        arriving = s.pending[0]
        if arriving[..., 0].any():
            self._apply_damage(arriving[..., 0] * s.alive, arriving[..., 1] * s.alive)
        if len(s.pending) > 1:
            s.pending[:-1] = s.pending[1:]
        s.pending[-1] = 0.0

    def _splash(self, fire: np.ndarray, flat_t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Colossus beam (enemies touching a line of half-length splash_radius and half-width BEAM_HALF_WIDTH
        across the attack, centred on the primary target, primary excluded) and baneling explosions (enemies
        within splash_radius of the baneling): damage [B, U] and hit counts [B, U]."""
        s, st = self.state, self.stats
        line = fire & st.is_line_splash
        boom = fire & st.is_suicide
        radius, victim_radius = st.splash_radius[:, :, None], st.radius[:, None, :]
        target = np.take(s.z, flat_t)
        centre = np.where(line, target, s.z)  # the target (beam) or the baneling itself
        offset = s.z[:, None, :] - centre[:, :, None]  # [B, attacker, victim]
        hit = boom[..., None] & (np.abs(offset) < radius + victim_radius)
        if line.any():  # the victim's circle meets the beam's thin rectangle
            heading = target - s.z
            heading /= np.maximum(np.abs(heading), 1e-6)
            local = offset * np.conj(heading)[:, :, None]  # real part: along the attack; imaginary: along the beam
            gap_across = np.maximum(np.abs(local.imag) - radius, 0.0)
            gap_along = np.maximum(np.abs(local.real) - BEAM_HALF_WIDTH, 0.0)
            touches = gap_across ** 2 + gap_along ** 2 < victim_radius ** 2
            hit |= line[..., None] & touches & (self._flat_base[..., None] + self._units != flat_t[..., None])
        hit &= self.enemy_of[None] & s.alive[:, None, :]
        hits = hit * st.attacks[:, :, None]
        return (self.pairs.hit_damage * hits).sum(1), hits.sum(1)

    def _apply_damage(self, total: np.ndarray, n_hits: np.ndarray) -> None:
        """Shields absorb first; each hit that reaches hp is reduced by armor (SMAC_SPEC §5.2)."""
        s, st = self.state, self.stats
        if not self.has_shields:
            s.hp -= np.maximum(total - st.armor * n_hits, 0.0)
            self._deaths()
            return
        hit = total > 0
        absorbed = np.minimum(s.shield, total)
        overflow = total - absorbed
        hits_on_hp = n_hits * overflow / np.maximum(total, 1e-9)
        s.shield -= absorbed
        s.hp -= np.maximum(overflow - st.armor * hits_on_hp, 0.0)
        s.shield_delay = np.where(hit, SHIELD_REGEN_DELAY / DT, s.shield_delay)
        self._deaths()

    def _deaths(self) -> None:
        s = self.state
        died = s.alive & (s.hp <= 0)
        if died.any():
            s.hp[died] = 0.0
            s.shield[died] = 0.0
            s.alive &= ~died

    def _heal(self, healing: np.ndarray, flat_t: np.ndarray) -> None:
        if not healing.any():
            return
        s, st = self.state, self.stats
        missing = np.take(st.max_hp, flat_t) - np.take(s.hp, flat_t)
        amount = np.clip(np.minimum(st.heal_per_tick, s.energy * MEDIVAC_HP_PER_ENERGY), 0.0, missing) * healing
        s.hp += np.bincount(flat_t.ravel(), amount.ravel(), self.n_envs * self.n_units).reshape(s.hp.shape)
        s.energy -= amount / MEDIVAC_HP_PER_ENERGY

    def _regenerate(self) -> None:
        s, st = self.state, self.stats
        s.cooldown -= 1.0
        s.hit_in -= 1.0
        if self.has_shields:
            regen = s.alive & (s.shield_delay <= 0)
            s.shield = np.where(regen, np.minimum(s.shield + SHIELD_REGEN_PER_SECOND * DT, st.max_shield), s.shield)
            s.shield_delay -= 1.0
        if self.has_medivac:
            s.energy = np.where(s.alive & st.is_medivac,
                                np.minimum(s.energy + MEDIVAC_ENERGY_REGEN * DT, MEDIVAC_MAX_ENERGY), s.energy)
        if self.has_regen:
            s.hp = np.where(s.alive, np.minimum(s.hp + st.regen_per_tick, st.max_hp), s.hp)


def _rows(x: np.ndarray, n: int) -> np.ndarray:
    """[B, U] -> [B, U, n] with [b, i, j] = x[b, i], contiguous (faster to compute on than a broadcast)."""
    return np.repeat(x, n, axis=1).reshape(*x.shape, n)


def _cols(x: np.ndarray, n: int) -> np.ndarray:
    """[B, U] -> [B, n, U] with [b, i, j] = x[b, j], contiguous."""
    return np.repeat(x[:, None, :], n, axis=1)


def _sum_last(x: np.ndarray) -> np.ndarray:
    """Sums over the last axis in one fixed order: the largest multiple of four terms as four interleaved
    partial sums added as (p0 + p2) + (p1 + p3), then the remaining terms in order. This is the order of
    OpenBLAS's matrix-vector product, which computed these sums before (trajectories kept bit for bit); written
    out, it depends on no CPU's BLAS kernel, and the compiled step (`battle_fused`) can equal it."""
    n = x.shape[-1]
    m = n - n % 4
    sums = []
    if m:
        part = x[..., 0:4]
        for k in range(4, m, 4):
            part = part + x[..., k:k + 4]
        sums.append((part[..., 0] + part[..., 2]) + (part[..., 1] + part[..., 3]))
    if m < n:
        tail = x[..., m]
        for k in range(m + 1, n):
            tail = tail + x[..., k]
        sums.append(tail)
    return sums[0] if len(sums) == 1 else sums[0] + sums[1]
