"""The battles of one SMAC map: n_envs battles' unit stats, pairwise tables and state, their resets and saving.

Arrays are shaped [n_envs, n_units] with allies first (agent ids 0..A-1) and enemies after; positions are
complex numbers (x + iy). One agent step runs 8 ticks of 1/16 normal-speed second (SMAC's step_mul=8);
`Battle.step` hands it to the engine it was built with (`engine.py`, compiled or as plain Python), chosen by
SMACBatch, which composes the battle.

A `Battle` holds its arrays in three typed containers: `stats` (each unit slot's stats), `pairs` (pairwise
stat tables) and `state` (what changes as the battles run).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from envs.smac.battle_constants import (
    D2_MARGIN,
    DT,
    FAR,
    MIN_SCAN_RANGE,
)
from envs.smac.maps import MAP_SIZE, SMACMap
from envs.smac.pathing import map_paths
from envs.smac.roster import FixedRoster, Roster
from envs.smac.units import (
    MEDIVAC_START_ENERGY,
    UnitTable,
)

if TYPE_CHECKING:
    from typing_extensions import Self

WALK_PLANE = (MAP_SIZE + 2) ** 2  # offset of the cliff walkers' grid in Battle._walk
# map constants that checkpoints saved before the typed containers also hold; loading ignores them
RETIRED_STATE_KEYS = frozenset({"is_ally", "enemy_of"})
# state that checkpoints saved before it existed lack; loading one fills it with its value at a reset
ADDED_STATE_KEYS = {"hit_in": FAR}
# arrays that came with SC2's weapon mechanics (a0eb112): a battle saved before them ran other dynamics (and
# another marine period), so it is refused rather than continued as a mix of the two
WEAPON_MECHANICS_KEYS = frozenset({"swing_target", "swing", "damage_point_ticks", "range_slop"})
# the version of the battle dynamics since then, saved with every battle: a battle saved under another version
# (or before versions were saved) is refused rather than continued as a mix of two dynamics. 3: enemies do not
# push each other (1f59a3f) and ground-only weapons do not hit air units; 4: the enemy AI targets by SC2's rules
# (threats first, then the closest, no random jitter)
DYNAMICS = 4


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
    damage_point_ticks: np.ndarray  # ticks from an attack's start to its shot
    range_slop: np.ndarray  # an attack under way goes on while its target is within reach plus this

    @classmethod
    def of(cls, t: UnitTable, kinds: np.ndarray) -> UnitStats:
        """Stats of units whose types are `kinds` [n, U] (new arrays)."""
        return cls(
            kind=np.array(kinds, np.int64, order="C"), max_hp=t.hp[kinds], max_shield=t.shield[kinds],
            armor=t.armor[kinds], attacks=t.attacks[kinds], range=t.range[kinds], radius=t.radius[kinds],
            cooldown_ticks=t.cooldown_ticks[kinds], speed_per_tick=t.speed_per_tick[kinds],
            armored=t.armored[kinds], light=t.light[kinds], obs_max_cooldown=t.obs_max_cooldown[kinds],
            heal_per_tick=t.heal_per_tick[kinds], is_medivac=t.is_medivac[kinds],
            is_line_splash=t.is_line_splash[kinds], is_suicide=t.is_suicide[kinds],
            splash_radius=t.splash_radius[kinds], regen_per_tick=t.regen_per_tick[kinds],
            projectile_ticks=t.projectile_ticks[kinds], damage_point_ticks=t.damage_point_ticks[kinds],
            range_slop=t.range_slop[kinds])


@dataclass(slots=True)
class PairStats(_Arrays):
    """Pairwise stat tables [n_envs, U, U]: [b, i, j] is unit i's value against unit j.

    A fixed roster's tables are one env's [U, U] block broadcast read-only over the envs (`shared`); a
    generated roster's rows are refilled at each reset."""

    reach: np.ndarray  # weapon range plus both radii
    radius_sum: np.ndarray
    volley: np.ndarray  # damage of one volley: hit damage x attacks (0: i's weapon cannot hit j)
    hit_damage: np.ndarray  # damage of one hit, the bonus against the target's armour included
    scan_reach: np.ndarray  # enemy auto-acquire distance: scan range (at least the weapon's range) plus both radii
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
        # a weapon that hits ground only deals nothing to air units (SC2_FACTS.md): no damage, never a target
        hit = np.where(t.hits_air[kinds][:, :, None] | ~t.air[kinds][:, None, :], hit, np.float32(0.0))
        ground, over = ~t.is_medivac[kinds], t.steps_over_ground[kinds]
        collide = ground[:, :, None] & ground[:, None, :] & ~np.eye(u, dtype=bool) \
            & (over[:, :, None] == over[:, None, :])  # a colossus walks over the others
        scan_reach = np.maximum(t.range[kinds], np.float32(MIN_SCAN_RANGE))[:, :, None] + radius_sum
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
    swing_target: np.ndarray  # the target of the attack under way (its damage point not yet over), -1 for none
    swing: np.ndarray  # ticks until that attack's shot
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
                   cooldown=np.zeros(shape, np.float32), swing_target=np.full(shape, -1),
                   swing=np.zeros(shape, np.float32), shield_delay=np.zeros(shape, np.float32),
                   alive=np.zeros(shape, bool), ai_target=np.full(shape, -1), last_target=np.full(shape, -1),
                   hit_in=np.full((n_envs, n_agents), FAR, np.float32),
                   steps=np.zeros(n_envs, np.int64), attack_point=np.full(n_envs, attack_point, np.complex64),
                   pending=np.zeros((max_delay + 1, *shape, 2), np.float32))


class Engine(Protocol):
    """What steps the battles: envs/smac/engine.py, compiled or its plain-Python run (`engine.plain()`)."""

    def world(self, battle: Battle) -> Any:
        """The battle's constant tables as the engine reads them."""
        ...

    def advance(self, battle: Battle, world: Any, actions: np.ndarray) -> None:
        """One agent step of every env, in place."""
        ...


class Battle:
    """State and dynamics of `n_envs` battles on `smac_map`; see module docstring. `roster` draws each new
    episode's unit types and positions (default: the map's fixed teams); `engine` steps them (envs/smac/engine.py,
    compiled or its plain-Python run, as SMACBatch chooses)."""

    def __init__(self, smac_map: SMACMap, n_envs: int, rng: np.random.Generator, engine: Engine,
                 roster: Roster | None = None, fixed_enemy_order: bool = False) -> None:
        self.map = smac_map
        self.n_envs = n_envs
        self.rng = rng
        self.roster: Roster = roster or FixedRoster(smac_map)
        self.n_agents, self.n_enemies = a, e = smac_map.n_agents, smac_map.n_enemies
        self.n_units = n_units = a + e
        self.types = t = UnitTable.build(self.roster.type_names, DT)  # stats per unit type
        self.is_ally = np.arange(n_units) < a
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
        # A fixed roster's stats are the same in every env (if its enemies are shuffled, only where they are all
        # of one type): its pairwise tables are one [U, U] block broadcast read-only. Otherwise stats are drawn
        # per env at each reset (type 0 until then).
        fixed = self.roster.kinds if isinstance(self.roster, FixedRoster) else None
        # smac numbers a map's enemies in the order SC2's raw observation lists them, which changes between
        # episodes (SC2_FACTS.md): each reset draws their slot order unless it is fixed. Generated scenarios keep
        # the order smacv2 creates its units in (how SC2 lists those is not documented). One enemy has one order.
        self.shuffles_enemies = fixed is not None and not fixed_enemy_order and e > 1
        self._fixed = fixed is not None and not (self.shuffles_enemies and np.unique(fixed[a:]).size > 1)
        if fixed is not None and self._fixed:
            kinds = fixed[None]
            self.stats = UnitStats.of(t, np.broadcast_to(kinds, (n_envs, n_units)))
            self.pairs = PairStats.of(t, kinds, a).shared(n_envs)
        else:
            kinds = np.zeros((n_envs, n_units), np.int64)
            self.stats, self.pairs = UnitStats.of(t, kinds), PairStats.of(t, kinds, a)
        self.state = BattleState.empty(n_envs, n_units, a, max(self.delays), complex(*smac_map.attack_point))
        self._engine = engine
        self._world = engine.world(self)

    # -- saving -----------------------------------------------------------------------------------------
    def _changing(self) -> Iterator[tuple[str, np.ndarray]]:
        """(name, array) of every array that can change during battles: the state, and the stats (a fixed
        roster's pairwise tables are shared read-only views; scratch buffers and indices are not held here)."""
        for part in (self.stats, self.pairs, self.state):
            for name, value in part.arrays().items():
                if value.flags.writeable:
                    yield name, value

    def state_dict(self) -> dict[str, np.ndarray]:
        """Copies of every array that can change during battles, by field name, and the dynamics' version."""
        return {"dynamics": np.array(DYNAMICS), **{name: value.copy() for name, value in self._changing()}}

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        """Copy a `state_dict()` into this battle's arrays (their dtypes kept)."""
        state = {k: v for k, v in state.items() if k not in RETIRED_STATE_KEYS}
        mine = dict(self._changing())
        if WEAPON_MECHANICS_KEYS - set(state):
            raise ValueError("its battles were saved before SC2's weapon mechanics entered the simulator (a0eb112) "
                             "and cannot continue on today's dynamics: start a new run, or resume with a checkout "
                             "from before them")
        saved = state.pop("dynamics", None)
        if saved is None or int(saved) != DYNAMICS:
            when = "before versions were saved" if saved is None else f"under version {int(saved)}"
            raise ValueError(f"its battles were saved {when} of the simulator's dynamics, and this checkout runs "
                             f"version {DYNAMICS} (envs/smac/SC2_FACTS.md): start a new run, or resume with the "
                             f"checkout that saved it")
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
        if self.shuffles_enemies:
            kinds, positions = self._shuffled_enemies(kinds, positions)
        if not self._fixed:
            st.set_envs(idx, UnitStats.of(self.types, kinds))
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
        s.swing_target[idx] = -1
        s.swing[idx] = 0.0
        s.shield_delay[idx] = 0.0
        s.alive[idx] = True
        s.ai_target[idx] = -1
        s.last_target[idx] = -1
        s.hit_in[idx] = FAR
        s.pending[:, idx] = 0.0
        s.steps[idx] = 0

    def _shuffled_enemies(self, kinds: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Teams [n, U] and positions [n, U, 2] with each env's enemies in a uniformly drawn slot order."""
        a = self.n_agents
        order = a + np.argsort(self.rng.random((len(kinds), self.n_enemies)), axis=1)
        order = np.concatenate([np.broadcast_to(np.arange(a), (len(kinds), a)), order], axis=1)
        return np.take_along_axis(kinds, order, axis=1), np.take_along_axis(positions, order[..., None], axis=1)

    # -- one agent step -------------------------------------------------------------------------------
    def step(self, actions: np.ndarray) -> None:
        """Advance every env by one agent step given ally actions [n_envs, n_agents] (already validated)."""
        self._engine.advance(self, self._world, actions)

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
