"""The battle engine: every env's agent step run tick by tick, unit by unit, compiled with numba.

One agent step is `TICKS_PER_STEP` ticks. Every `SENSE_EVERY` ticks units that overlap are pushed apart (a
unit walking into a standing enemy gives way alone) and the enemy AI picks its targets by SC2's rules; every
tick each unit moves (chases its target or walks to its goal, around walls where the map has them), heals or
fires when in reach and ready, the hits due land, and units regenerate. Arithmetic is float32 for positions and stats,
float64 where damage and heals are summed, and complex `abs` and products are written out with the fused
multiply-adds of numpy's vectorised loops, so that trajectories are those of the whole-batch numpy step that
this engine replaced, bit for bit.

`plain()` loads this module again with numba's JIT off: the same functions as plain Python, for tests and
debugging (`SMACBatch(..., compiled=False)`). All compiled code lives in this one file because numba's
on-disk cache is invalidated by changes to a function's own file only.
"""
from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from numba import njit
from numba.core import config as _config
from numba.extending import intrinsic

from envs.smac.battle_constants import (
    BEAM_HALF_WIDTH,
    CHASE_MARGIN,
    DENSE_COLLISION_UNITS,
    DT,
    FAR,
    MAX_PUSH,
    MOVE_AMOUNT,
    MOVE_STEPS,
    N_NON_ATTACK_ACTIONS,
    NO_THREAT_RANK,
    RANDOM_DELAY,
    SENSE_EVERY,
    TICKS_PER_STEP,
)
from envs.smac.maps import MAP_SIZE
from envs.smac.pathing import SIZE as PATH_GRID
from envs.smac.units import (
    MEDIVAC_ENERGY_REGEN,
    MEDIVAC_HP_PER_ENERGY,
    MEDIVAC_MAX_ENERGY,
    SHIELD_REGEN_DELAY,
    SHIELD_REGEN_PER_SECOND,
)

if TYPE_CHECKING:
    from envs.smac.battle import Battle
    from envs.smac.pathing import Paths

# literals of the arithmetic (the tuning constants come in `Tuning`)
F0, F1, HALF = np.float32(0.0), np.float32(1.0), np.float32(0.5)
EPS6, EPS9 = np.float32(1e-6), np.float32(1e-9)
numba_config: Any = _config  # DISABLE_JIT is set at run time, unknown to the type stubs


def _compiled(fn: Callable[..., Any]) -> Any:
    """`fn` compiled by numba (cached on disk); itself where the JIT is off."""
    return njit(cache=True, error_model="numpy")(fn)


def _inlined(fn: Callable[..., Any]) -> Any:
    """`fn` compiled by numba and inlined where it is called (small helpers of the unit loop)."""
    return njit(cache=True, error_model="numpy", inline="always")(fn)


def _unit_loop(fn: Callable[..., Any]) -> Any:
    """`fn` compiled by numba without its reference counting (NRT), for the loop over envs, ticks and units.

    The helpers read arrays through NamedTuple fields (`s.z[b, u]`); with reference counting on, numba counts a
    reference on each such read and releases it after, two calls that its pruning leaves in place across the
    helpers' branches: some 2,700 call sites in the compiled step, which took 25x as long (34 ms against 1.4 ms
    per 256-env step of 3s5z). Without it the loop may not allocate (numba refuses to compile an allocation),
    so its working arrays come from outside (`_scratch`) and arrays are copied element by element."""
    no_refcounts: dict[str, Any] = {"_nrt": False}  # numba's option, absent from its type stubs
    return njit(cache=True, error_model="numpy", **no_refcounts)(fn)



class Tuning(NamedTuple):
    """The constants of `battle_constants.py` and `units.py` that the engine uses, passed as an argument:
    numba's on-disk cache freezes a compiled function's imported globals, so a retuned constant would be missed."""

    ticks: int
    sense_every: int
    n_non_attack: int
    grid: int  # side of the padded walkable grid
    path_grid: int  # side of the path tables' grid
    walk_plane: int  # offset of the cliff walkers' walkable grid
    far: np.float32
    chase: np.float32
    no_threat: np.float32  # added to the distance of an ally that cannot hit back: threats rank first
    push_max: np.float32
    beam_half_width: np.float32
    shield_step: np.float32  # shield regenerated per tick
    shield_wait: np.float32  # ticks from a hit until shields regenerate
    energy_step: np.float32  # medivac energy regenerated per tick
    energy_max: np.float32
    hp_per_energy: np.float32
    delay_min: np.float32  # the random delay added to an attack's cooldown, in ticks: delay_min + span * U[0, 1)
    delay_span: np.float32
    move_x: np.ndarray  # float32 offsets of the four move actions (N, S, E, W)
    move_y: np.ndarray


def tuning() -> Tuning:
    """Today's constants, as float32 where they meet float32 arrays."""
    return Tuning(ticks=TICKS_PER_STEP, sense_every=SENSE_EVERY, n_non_attack=N_NON_ATTACK_ACTIONS,
                  grid=MAP_SIZE + 2, path_grid=PATH_GRID, walk_plane=(MAP_SIZE + 2) ** 2, far=np.float32(FAR),
                  chase=np.float32(CHASE_MARGIN), no_threat=np.float32(NO_THREAT_RANK),
                  push_max=np.float32(MAX_PUSH), beam_half_width=np.float32(BEAM_HALF_WIDTH),
                  shield_step=np.float32(SHIELD_REGEN_PER_SECOND * DT),
                  shield_wait=np.float32(SHIELD_REGEN_DELAY / DT),
                  energy_step=np.float32(MEDIVAC_ENERGY_REGEN * DT), energy_max=np.float32(MEDIVAC_MAX_ENERGY),
                  hp_per_energy=np.float32(MEDIVAC_HP_PER_ENERGY), delay_min=np.float32(RANDOM_DELAY[0] / DT),
                  delay_span=np.float32((RANDOM_DELAY[1] - RANDOM_DELAY[0]) / DT),
                  move_x=(np.float32(MOVE_AMOUNT) * MOVE_STEPS.real).astype(np.float32),
                  move_y=(np.float32(MOVE_AMOUNT) * MOVE_STEPS.imag).astype(np.float32))


class Routes(NamedTuple):
    """One walker kind's `pathing.Paths` as the engine reads them (empty tables where the map has none)."""

    node: np.ndarray
    centre: np.ndarray  # float32 [n_nodes, 2]
    visible: np.ndarray
    waypoint: np.ndarray
    reachable: np.ndarray


class World(NamedTuple):
    """What stays fixed in a battle: its terrain and which mechanics can occur in it."""

    use_box: bool  # the walkable area is the rectangle `box` (x0, x1, y0, y1), else the grid `walk`
    box: tuple[np.float32, np.float32, np.float32, np.float32]
    walk: np.ndarray  # Battle._walk: ground grid, then the cliff walkers' grid
    ground: Routes
    cliff: Routes
    routes: bool  # ground units walk around walls (`ground`)
    cliff_routes: bool  # cliff walkers have routes and a walkable grid of their own
    dense: bool  # few units: collisions of every pair, else of the pairs that can touch
    hunts: bool  # enemies hunt the closest ally (smacv2's script) instead of attack-moving
    shields: bool
    regen: bool
    medivacs: bool
    splash: bool  # colossus beams or banelings
    stepping_over: bool  # colossi walk over smaller units
    delays: np.ndarray  # int64 projectile flight times in ticks, sorted
    instant: bool  # no projectiles: every hit lands when fired


class Units(NamedTuple):
    """`UnitStats` fields the engine reads, [n_envs, n_units]."""

    radius: np.ndarray
    armor: np.ndarray
    attacks: np.ndarray
    speed: np.ndarray
    cooldown_ticks: np.ndarray
    regen: np.ndarray
    max_hp: np.ndarray
    max_shield: np.ndarray
    projectile_ticks: np.ndarray
    heal_per_tick: np.ndarray
    is_medivac: np.ndarray
    is_line_splash: np.ndarray
    is_suicide: np.ndarray
    splash_radius: np.ndarray
    walks_cliffs: np.ndarray
    damage_point_ticks: np.ndarray
    range_slop: np.ndarray


class Pairs(NamedTuple):
    """`PairStats` tables [n_envs, U, U] the engine reads."""

    reach: np.ndarray
    volley: np.ndarray
    hit_damage: np.ndarray
    radius_sum: np.ndarray
    collide_d2: np.ndarray
    scan_ea: np.ndarray


class State(NamedTuple):
    """`BattleState` as the engine writes it: positions as float32 (x, y) pairs [n_envs, 2 * n_units]."""

    z: np.ndarray
    hp: np.ndarray
    shield: np.ndarray
    energy: np.ndarray
    cooldown: np.ndarray
    swing_target: np.ndarray
    swing: np.ndarray
    shield_delay: np.ndarray
    alive: np.ndarray
    ai_target: np.ndarray
    last_target: np.ndarray
    hit_in: np.ndarray
    steps: np.ndarray
    attack_point: np.ndarray  # float32 [n_envs, 2]
    pending: np.ndarray


class Scratch(NamedTuple):
    """Per-unit working arrays of the env being stepped."""

    ally_target: np.ndarray  # the allies' orders: unit attacked or healed, -1 for none
    goal_x: np.ndarray
    goal_y: np.ndarray
    has_goal: np.ndarray
    target: np.ndarray  # each unit's target this tick, -1 for none
    tidx: np.ndarray  # max(target, 0)
    reach: np.ndarray  # reach against the target
    new_x: np.ndarray
    new_y: np.ndarray
    moves: np.ndarray
    ready: np.ndarray  # in reach with the weapon ready this tick
    dist: np.ndarray  # [U, U] distances before the last push (enemy rows, ally columns always filled)
    term_x: np.ndarray  # [U, U] collision pushes
    term_y: np.ndarray
    live_radius: np.ndarray
    stands: np.ndarray  # the unit attacks a target in reach or has no order to move: enemies do not push it
    pushed: np.ndarray
    shift_x: np.ndarray
    shift_y: np.ndarray
    total: np.ndarray  # float64 damage summed per target
    hits: np.ndarray
    land: np.ndarray  # float32 damage landing
    land_hits: np.ndarray
    splash_damage: np.ndarray
    splash_hits: np.ndarray
    healed: np.ndarray  # float64 hp healed per target


def routes(paths: Paths | None) -> Routes:
    """`paths` in the engine's layout; empty tables for None."""
    if paths is None:
        return Routes(np.zeros(0, np.int64), np.zeros((0, 2), np.float32), np.zeros((0, 0), bool),
                      np.zeros((0, 0), np.int64), np.zeros((0, 0), bool))
    return Routes(paths.node, paths.centre.view(np.float32).reshape(-1, 2), paths.visible, paths.waypoint,
                  paths.reachable)


def world(battle: Battle) -> World:
    """The fixed part of `battle` for the engine."""
    x0, x1, y0, y1 = battle._box or (0.0, 0.0, 0.0, 0.0)
    return World(use_box=battle._box is not None, box=(np.float32(x0), np.float32(x1), np.float32(y0), np.float32(y1)),
                 walk=battle._walk,
                 ground=routes(battle.paths), cliff=routes(battle.cliff_paths), routes=battle.paths is not None,
                 cliff_routes=battle.cliff_paths is not None, dense=battle.n_units <= DENSE_COLLISION_UNITS,
                 hunts=battle.roster.hunts_closest, shields=battle.has_shields, regen=battle.has_regen,
                 medivacs=battle.has_medivac, splash=battle.has_splash or battle.has_suicide,
                 stepping_over=battle.has_stepping_over, delays=np.array(battle.delays, np.int64),
                 instant=battle.delays == [0])


def views(battle: Battle) -> tuple[State, Units, Pairs]:
    """`battle`'s arrays as the engine reads and writes them (views, not copies)."""
    s, st, p = battle.state, battle.stats, battle.pairs
    units = Units(st.radius, st.armor, st.attacks, st.speed_per_tick, st.cooldown_ticks, st.regen_per_tick,
                  st.max_hp, st.max_shield, st.projectile_ticks, st.heal_per_tick, st.is_medivac, st.is_line_splash,
                  st.is_suicide, st.splash_radius, battle.types.walks_cliffs[st.kind],
                  st.damage_point_ticks, st.range_slop)
    pairs = Pairs(p.reach, p.volley, p.hit_damage, p.radius_sum, p.collide_d2, p.scan_ea)
    state = State(s.z.view(np.float32), s.hp, s.shield, s.energy, s.cooldown, s.swing_target, s.swing, s.shield_delay,
                  s.alive, s.ai_target,
                  s.last_target, s.hit_in, s.steps, s.attack_point.view(np.float32).reshape(-1, 2), s.pending)
    return state, units, pairs


def advance(battle: Battle, the_world: World, actions: np.ndarray) -> None:
    """One agent step of every env of `battle`, given ally actions [n_envs, n_agents] (already validated)."""
    k = tuning()
    # each unit's random attack delay this step: one draw serves every attack a unit starts in the step, and no
    # weapon completes two (the shortest period less the delay, the zergling's, is 10 ticks; an attack lost before
    # its shot frees the weapon, and a second one in the same step reuses the draw)
    delays = battle.rng.random((battle.n_envs, battle.n_units), dtype=np.float32)
    state, units, pairs = views(battle)
    _step(k, the_world, state, units, pairs, np.ascontiguousarray(actions, np.int64), battle.n_agents, delays,
          _scratch(battle.n_units))


@functools.cache
def plain() -> ModuleType:
    """This module loaded again with numba's JIT off: the same engine as plain Python (slow; for tests and
    stepping through in a debugger)."""
    spec = importlib.util.spec_from_file_location(f"{__name__}_plain", __file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    previous, numba_config.DISABLE_JIT = numba_config.DISABLE_JIT, True
    try:
        spec.loader.exec_module(module)
    finally:
        numba_config.DISABLE_JIT = previous
    return module


# -- arithmetic --------------------------------------------------------------------------------------------
if numba_config.DISABLE_JIT:
    def _fma(a, b, c):
        """a * b + c rounded once to float32 (what the compiled engine's fused multiply-add gives): the exact
        sum of the float64 product and c, corrected where rounding it to float64 first would round twice."""
        product = np.float64(a) * np.float64(b)  # exact: two 24-bit significands
        total = product + np.float64(c)
        part = total - product
        error = (product - (total - part)) + (np.float64(c) - part)  # total + error is the exact sum
        out = np.float32(total)
        if error != 0 and np.float64(out) != total:
            other = np.nextafter(out, np.float32(np.inf) if np.float64(out) < total else np.float32(-np.inf))
            if abs(np.float64(other) - total) == abs(np.float64(out) - total):  # a tie: the exact sum decides
                out = other if (np.float64(other) > total) == (error > 0) else out
        return out
else:
    def _llvm_fma_of(typingctx, a, b, c):
        """LLVM's fma: one rounding on every CPU (in hardware where it has FMA)."""
        def codegen(context, builder, signature, args):
            return builder.call(builder.module.declare_intrinsic("llvm.fma", [args[0].type] * 3), args)
        return a(a, a, a), codegen

    _llvm_fma: Any = intrinsic(_llvm_fma_of)

    @_inlined
    def _fma(a, b, c):
        """a * b + c rounded once, in a's type."""
        return _llvm_fma(a, b, c)


@_inlined
def _cabs(x, y):
    """numpy's complex64 `abs` of x + iy (its vectorised loop: max * sqrt(fma(ratio, ratio, 1))), to the last bit."""
    x, y = abs(x), abs(y)
    big, small = max(x, y), min(x, y)
    if big == F0 or small == np.float32(np.inf):
        return big
    ratio = small / big
    return np.sqrt(_fma(ratio, ratio, F1)) * big


@_compiled
def _abs_all(z):
    """`_cabs` of every element of a complex64 array."""
    out = np.empty(z.size, np.float32)
    for i in range(z.size):
        out[i] = _cabs(z[i].real, z[i].imag)
    return out


@_inlined
def _may_touch(dx, dy, reach):
    """False only where two units at offset (dx, dy) certainly do not overlap: float32 `abs` is within a few ulp
    of the exact length, which the float64 squares give to 1e-16; the margin is far above both."""
    if reach <= F0:
        return False
    bound = np.float64(reach) * (1.0 + 1e-5)
    return np.float64(dx) * dx + np.float64(dy) * dy < bound * bound


# -- terrain -----------------------------------------------------------------------------------------------
@_inlined
def _walkable(k, w, x, y, plane):
    """Whether (x, y) lies on a walkable cell of the grid at offset `plane` (0: ground, k.walk_plane: cliff
    walkers); out of bounds is not walkable."""
    if w.use_box:
        return x >= w.box[0] and x < w.box[1] and y >= w.box[2] and y < w.box[3]
    cx = min(max(int(np.floor(x)) + 1, 0), k.grid - 1)
    cy = min(max(int(np.floor(y)) + 1, 0), k.grid - 1)
    return w.walk[cx * k.grid + cy + plane]


@_inlined
def _plane(k, w, st, b, u):
    """The walkable grid unit u goes by: the cliff walkers' where they have one, else the ground's."""
    return k.walk_plane if w.cliff_routes and st.walks_cliffs[b, u] else 0


@_inlined
def _place(k, w, s, st, b, u, nx, ny):
    """Move unit u to (nx, ny) where walkable, else slide along x or y, else stay."""
    x, y, plane = s.z[b, 2 * u], s.z[b, 2 * u + 1], _plane(k, w, st, b, u)
    if _walkable(k, w, nx, ny, plane):
        s.z[b, 2 * u], s.z[b, 2 * u + 1] = nx, ny
    elif _walkable(k, w, nx, y, plane):
        s.z[b, 2 * u] = nx
    elif _walkable(k, w, x, ny, plane):
        s.z[b, 2 * u + 1] = ny


@_inlined
def _path_cell(k, x, y):
    """Index of the path tables' cell under (x, y), clamped to the map."""
    cx = min(max(int(np.floor(x)), 0), k.path_grid - 1)
    cy = min(max(int(np.floor(y)), 0), k.path_grid - 1)
    return cx * k.path_grid + cy


@_inlined
def _route_to(k, r, x, y, dest_x, dest_y):
    """Where a unit at (x, y) bound for dest walks to: dest itself when the line between their cells is clear
    or either end is off the walkable cells, else the waypoint's centre (`Paths.heading`)."""
    start, goal = r.node[_path_cell(k, x, y)], r.node[_path_cell(k, dest_x, dest_y)]
    if start >= 0 and goal >= 0 and not r.visible[start, goal] and r.reachable[goal, start]:
        node = r.waypoint[goal, start]
        return r.centre[node, 0], r.centre[node, 1]
    return dest_x, dest_y


@_inlined
def _waypoint(k, w, st, b, u, x, y, dest_x, dest_y):
    """Where unit u at (x, y) walks to on its way to dest: around walls by its kind's routes."""
    if w.cliff_routes and st.walks_cliffs[b, u]:
        return _route_to(k, w.cliff, x, y, dest_x, dest_y)
    if w.routes:
        return _route_to(k, w.ground, x, y, dest_x, dest_y)
    return dest_x, dest_y


# -- orders and targets ------------------------------------------------------------------------------------
@_inlined
def _give_orders(k, s, st, p, b, actions, n_agents, o):
    """Allies' orders from their actions (a medivac's attack action heals an ally); enemies attack-move. SC2
    rejects an order to attack a unit the weapon cannot hit (a ground-only weapon against a medivac): the ally
    carries on attacking the target of its last step if it can, else stands."""
    for u in range(s.hp.shape[1]):
        if u < n_agents:
            act = actions[b, u]
            move = min(max(act - 2, 0), 3)
            o.goal_x[u], o.goal_y[u] = s.z[b, 2 * u] + k.move_x[move], s.z[b, 2 * u + 1] + k.move_y[move]
            o.has_goal[u] = act >= 2 and act < k.n_non_attack
            first = 0 if st.is_medivac[b, u] else n_agents
            o.ally_target[u] = act - k.n_non_attack + first if act >= k.n_non_attack else -1
            if o.ally_target[u] >= 0 and not st.is_medivac[b, u] and p.volley[b, u, o.ally_target[u]] <= F0:
                last = s.last_target[b, u]
                keeps = last >= n_agents and s.alive[b, max(last, 0)] and p.volley[b, u, max(last, 0)] > F0
                o.ally_target[u] = last if keeps else -1
            if o.ally_target[u] != s.last_target[b, u]:  # a new target: no hit on it yet
                s.hit_in[b, u] = k.far
        else:
            o.goal_x[u], o.goal_y[u] = s.attack_point[b, 0], s.attack_point[b, 1]
            o.has_goal[u] = True
            o.ally_target[u] = -1


@_inlined
def _retaliates(s, o, b, ally, enemy):
    """Whether `ally` attacks `enemy` and its first hit has landed (SC2 units retaliate when hit)."""
    return o.ally_target[ally] == enemy and s.hit_in[b, ally] < 0


@_inlined
def _most_damaged_friend(k, s, st, b, n_agents):
    """The live enemy (not a medivac) with the lowest hp fraction: an enemy medivac's patient."""
    best, best_frac = n_agents, F0
    for v in range(n_agents, s.hp.shape[1]):
        frac = s.hp[b, v] / st.max_hp[b, v] if s.alive[b, v] and not st.is_medivac[b, v] else k.far
        if v == n_agents or frac < best_frac:
            best, best_frac = v, frac
    return best


@_inlined
def _acquire_targets(k, w, s, st, p, b, n_agents, o):
    """The enemy's targets from the distances before this sense's push, by SC2's automatic targeting
    (SC2_FACTS.md): among the live allies that the weapon can hit within scan range or attacking us, threats
    (allies that can hit back) before the others, then the closest; a target is kept while it lives and stays
    within reach plus the weapon's range slop or attacks us, unless it is no threat and a threat is in reach.
    Hunting (smacv2): keep a live target, else take the closest live ally. Enemy medivacs follow the most
    damaged friendly unit."""
    for u in range(n_agents, s.hp.shape[1]):
        e = u - n_agents
        current = s.ai_target[b, u]
        c = min(max(current, 0), n_agents - 1)
        keep = current >= 0 and current < n_agents and s.alive[b, c]
        if not w.hunts:
            keep = keep and (o.dist[u, c] <= p.reach[b, u, c] + st.range_slop[b, u] or _retaliates(s, o, b, c, u))
        best, best_score = 0, F0
        for i in range(n_agents):
            if w.hunts:
                score = o.dist[u, i] + (F0 if s.alive[b, i] else k.far)
            else:
                score = o.dist[u, i] if o.dist[u, i] < p.scan_ea[b, e, i] or _retaliates(s, o, b, i, u) else k.far
                score = score + (F0 if p.volley[b, i, u] > F0 else k.no_threat)
                score = score + (F0 if s.alive[b, i] and p.volley[b, u, i] > F0 else k.far)
            if i == 0 or score < best_score:
                best, best_score = i, score
        if keep and not w.hunts and p.volley[b, c, u] <= F0 and best_score < k.no_threat:
            keep = o.dist[u, best] > p.reach[b, u, best]  # a threat entered weapon range: it outranks the target
        chosen = current if keep else (best if best_score < k.far else -1)
        if w.medivacs and st.is_medivac[b, u]:
            chosen = _most_damaged_friend(k, s, st, b, n_agents)
        s.ai_target[b, u] = chosen


@_inlined
def _aim(s, p, b, o):
    """Each unit's target (the ally's order, else the enemy AI's) and its reach against it."""
    for u in range(s.hp.shape[1]):
        o.target[u] = o.ally_target[u] if o.ally_target[u] >= 0 else s.ai_target[b, u]
        o.tidx[u] = max(o.target[u], 0)
        o.reach[u] = p.reach[b, u, o.tidx[u]]


# -- collisions --------------------------------------------------------------------------------------------
@_inlined
def _find_standing(s, p, b, o):
    """o.stands: each unit attacks a live target within reach (or an attack of its is under way), or has
    neither a target nor a goal to walk to. SC2 lets no player's units push another's (SC2_FACTS.md), so an
    enemy that walks into a standing unit is stopped, not the other way round."""
    for u in range(s.hp.shape[1]):
        t = o.ally_target[u] if o.ally_target[u] >= 0 else s.ai_target[b, u]
        if t >= 0 and s.alive[b, t]:
            d = _cabs(s.z[b, 2 * t] - s.z[b, 2 * u], s.z[b, 2 * t + 1] - s.z[b, 2 * u + 1])
            o.stands[u] = d <= p.reach[b, u, t] or s.swing_target[b, u] == t
        else:
            o.stands[u] = not o.has_goal[u]


@_inlined
def _share(o, n_agents, i, j):
    """Unit i's share of resolving its overlap with unit j, in halves: teammates push each other (1 each);
    between enemies a walking unit gives way to a standing one (2 against 0), else each gives way half."""
    if (i < n_agents) == (j < n_agents) or o.stands[i] == o.stands[j]:
        return F1
    return F0 if o.stands[i] else np.float32(2.0)


@_inlined
def _limited_shift(k, w, sx, sy):
    """A collision shift, at most k.push_max long where walls lie inside the map, so that a crowd cannot push a
    unit across a one-cell wall in one resolution (where the walkable area is a rectangle nothing is needed)."""
    if not w.use_box:
        length = _cabs(sx, sy)
        if length > k.push_max:
            f = k.push_max / max(length, EPS9)
            return sx * f, sy * f
    return sx, sy


@_inlined
def _push_apart_dense(k, w, s, st, p, b, n_agents, o):
    """Push overlapping units apart, every pair considered; leaves the distances before the push in o.dist.

    Each pair is computed once (its distance and weight are symmetric to the bit; j's push on i is the exact
    negation of i's on j, each scaled by its `_share`); teammates that cannot touch are skipped, since the
    enemy AI needs no distance between them. A unit's pushes are summed in four interleaved partial sums, then
    the rest."""
    n = s.hp.shape[1]
    for i in range(n):  # units that do not collide (dead, air) overlap nothing
        o.live_radius[i] = st.radius[b, i] if s.alive[b, i] and not st.is_medivac[b, i] else -k.far
        o.pushed[i] = False
    for i in range(n):
        o.dist[i, i] = F0
        o.term_x[i, i], o.term_y[i, i] = F0, F0
        for j in range(i + 1, n):
            dx, dy = s.z[b, 2 * j] - s.z[b, 2 * i], s.z[b, 2 * j + 1] - s.z[b, 2 * i + 1]
            reach = o.live_radius[i] + o.live_radius[j]
            o.term_x[i, j], o.term_y[i, j], o.term_x[j, i], o.term_y[j, i] = F0, F0, F0, F0
            if (i < n_agents) == (j < n_agents) and not _may_touch(dx, dy, reach):
                continue
            d = _cabs(dx, dy)
            o.dist[i, j], o.dist[j, i] = d, d
            overlap = reach - d
            if overlap > F0 and not (w.stepping_over and p.collide_d2[b, i, j] < F0):
                f = overlap / max(d, EPS6)
                share_i, share_j = _share(o, n_agents, i, j), _share(o, n_agents, j, i)
                o.term_x[i, j], o.term_y[i, j] = share_i * (f * dx), share_i * (f * dy)
                o.term_x[j, i], o.term_y[j, i] = -share_j * (f * dx), -share_j * (f * dy)
                o.pushed[i], o.pushed[j] = o.pushed[i] or share_i > F0, o.pushed[j] or share_j > F0
    m = n - n % 4
    for i in range(n):
        if not o.pushed[i]:
            continue
        sx, sy = F0, F0
        if m:
            x0, x1, x2, x3 = o.term_x[i, 0], o.term_x[i, 1], o.term_x[i, 2], o.term_x[i, 3]
            y0, y1, y2, y3 = o.term_y[i, 0], o.term_y[i, 1], o.term_y[i, 2], o.term_y[i, 3]
            for j in range(4, m, 4):
                x0, x1, x2, x3 = x0 + o.term_x[i, j], x1 + o.term_x[i, j + 1], x2 + o.term_x[i, j + 2], \
                    x3 + o.term_x[i, j + 3]
                y0, y1, y2, y3 = y0 + o.term_y[i, j], y1 + o.term_y[i, j + 1], y2 + o.term_y[i, j + 2], \
                    y3 + o.term_y[i, j + 3]
            sx, sy = (x0 + x2) + (x1 + x3), (y0 + y2) + (y1 + y3)
        if m < n:
            rx, ry = o.term_x[i, m], o.term_y[i, m]
            for j in range(m + 1, n):
                rx, ry = rx + o.term_x[i, j], ry + o.term_y[i, j]
            sx, sy = (rx, ry) if m == 0 else (sx + rx, sy + ry)
        o.shift_x[i], o.shift_y[i] = _limited_shift(k, w, HALF * sx, HALF * sy)
    for i in range(n):
        if o.pushed[i]:
            _place(k, w, s, st, b, i, s.z[b, 2 * i] - o.shift_x[i], s.z[b, 2 * i + 1] - o.shift_y[i])


@_inlined
def _measure_enemy_to_ally(s, b, n_agents, o):
    """o.dist[enemy, ally] for the enemy AI, where the collisions do not compute them all."""
    for u in range(n_agents, s.hp.shape[1]):
        for i in range(n_agents):
            o.dist[u, i] = _cabs(s.z[b, 2 * i] - s.z[b, 2 * u], s.z[b, 2 * i + 1] - s.z[b, 2 * u + 1])


@_inlined
def _push_apart_sparse(k, w, s, st, p, b, n_agents, o):
    """Push overlapping units apart in large battles: only pairs that can touch are measured (the others
    contribute nothing), each unit's pushes summed in float64 in unit order."""
    n = s.hp.shape[1]
    for i in range(n):
        sx, sy, o.pushed[i] = np.float64(0.0), np.float64(0.0), False
        for j in range(n):
            if not (s.alive[b, i] and s.alive[b, j]) or p.collide_d2[b, i, j] < F0:
                continue
            dx, dy = s.z[b, 2 * j] - s.z[b, 2 * i], s.z[b, 2 * j + 1] - s.z[b, 2 * i + 1]
            if not _may_touch(dx, dy, p.radius_sum[b, i, j]):
                continue
            d = _cabs(dx, dy)
            overlap = p.radius_sum[b, i, j] - d
            share = _share(o, n_agents, i, j)
            if overlap > F0 and share > F0:
                f = (-HALF * overlap) / max(d, EPS6) * share
                sx, sy, o.pushed[i] = sx + np.float64(dx * f), sy + np.float64(dy * f), True
        o.shift_x[i], o.shift_y[i] = _limited_shift(k, w, np.float32(sx), np.float32(sy))
    for i in range(n):
        if o.pushed[i]:
            _place(k, w, s, st, b, i, s.z[b, 2 * i] + o.shift_x[i], s.z[b, 2 * i + 1] + o.shift_y[i])


@_inlined
def _sense(k, w, s, st, p, b, n_agents, o):
    """Collisions, then the enemy AI's targets from the distances before them, then every unit's aim."""
    _find_standing(s, p, b, o)
    if w.dense:
        _push_apart_dense(k, w, s, st, p, b, n_agents, o)
    else:
        _measure_enemy_to_ally(s, b, n_agents, o)
        _push_apart_sparse(k, w, s, st, p, b, n_agents, o)
    _acquire_targets(k, w, s, st, p, b, n_agents, o)
    _aim(s, p, b, o)


# -- one tick ----------------------------------------------------------------------------------------------
@_inlined
def _cancel_swing(s, b, u, o):
    """An attack under way is lost when its unit's target changes (a new order, the enemy AI's new target) or
    dies: the weapon is ready again, nothing fired."""
    t = s.swing_target[b, u]
    if t >= 0 and (t != o.target[u] or not s.alive[b, t]):
        s.swing_target[b, u], s.cooldown[b, u] = -1, F0


@_inlined
def _attack(k, s, st, b, u, t, length, reach, delays):
    """Whether unit u, in reach of its live target t or attacking it already, fires (or heals) this tick.

    An attack (SC2_FACTS.md) starts when the weapon is ready and the target in reach: the weapon's cooldown
    restarts, plus its random delay, and the shot follows after the damage point, the unit standing until
    then. The attack goes on while the target stays within reach plus the weapon's range slop, and is lost
    (the weapon ready again, nothing fired) if the target gets further away or changes (`_cancel_swing`).
    Medivacs heal every tick they are in reach."""
    if s.swing_target[b, u] == t:
        if length <= reach + st.range_slop[b, u]:
            return s.swing[b, u] <= 0
        s.swing_target[b, u], s.cooldown[b, u] = -1, F0
        return False
    if length > reach or s.cooldown[b, u] > 0:
        return False
    if st.is_medivac[b, u]:
        return True
    s.cooldown[b, u] = st.cooldown_ticks[b, u] + (k.delay_min + k.delay_span * delays[b, u])
    s.swing_target[b, u], s.swing[b, u] = t, st.damage_point_ticks[b, u]
    return s.swing[b, u] <= 0


@_inlined
def _move(k, w, s, st, b, delays, o):
    """Each live unit attacks a target in reach (`_attack`: it stands while it does), closes on one out of
    reach (to just inside it) or walks to its goal. Positions are read before anyone moves."""
    for u in range(s.hp.shape[1]):
        o.moves[u], o.ready[u] = False, False
        if not s.alive[b, u]:
            continue
        _cancel_swing(s, b, u, o)
        x, y = s.z[b, 2 * u], s.z[b, 2 * u + 1]
        t = o.tidx[u]
        if o.target[u] >= 0 and s.alive[b, t]:
            dest_x, dest_y = s.z[b, 2 * t], s.z[b, 2 * t + 1]
            length = _cabs(dest_x - x, dest_y - y)
            if length <= o.reach[u] or s.swing_target[b, u] == t:
                o.ready[u] = _attack(k, s, st, b, u, t, length, o.reach[u], delays)
                if length <= o.reach[u] or s.swing_target[b, u] == t:
                    continue
            step = length - (o.reach[u] - k.chase)
        elif o.has_goal[u]:
            dest_x, dest_y = o.goal_x[u], o.goal_y[u]
            length = _cabs(dest_x - x, dest_y - y)
            step = length
        else:
            continue
        to_x, to_y = _waypoint(k, w, st, b, u, x, y, dest_x, dest_y)
        dx, dy = to_x - x, to_y - y
        heading = _cabs(dx, dy) if w.routes or w.cliff_routes else length
        f = min(max(step, F0), st.speed[b, u]) / max(heading, EPS9)
        o.new_x[u], o.new_y[u], o.moves[u] = x + dx * f, y + dy * f, True
    for u in range(s.hp.shape[1]):
        if o.moves[u]:
            _place(k, w, s, st, b, u, o.new_x[u], o.new_y[u])


@_inlined
def _heal(k, s, st, b, o):
    """Medivacs in reach heal their target (from the hp before this tick's heals), paying energy."""
    healing = False
    for u in range(s.hp.shape[1]):
        o.healed[u] = 0.0
    for u in range(s.hp.shape[1]):
        if o.ready[u] and st.is_medivac[b, u]:
            t = o.tidx[u]
            missing = st.max_hp[b, t] - s.hp[b, t]
            amount = min(max(min(st.heal_per_tick[b, u], s.energy[b, u] * k.hp_per_energy), F0), missing)
            o.healed[t] += np.float64(amount)
            s.energy[b, u] = s.energy[b, u] - amount / k.hp_per_energy
            o.ready[u], healing = False, True
    if healing:
        for u in range(s.hp.shape[1]):
            s.hp[b, u] = np.float64(s.hp[b, u]) + o.healed[u]


@_inlined
def _apply_damage(k, w, s, st, b, total, hits, eps):
    """Shields absorb first; each hit that reaches hp is reduced by armor (SMAC_SPEC §5.2); units at 0 hp die.
    `total` and `hits` are float64 (summed as fired) or float32 (landing), `eps` of their dtype."""
    zero = eps - eps
    for j in range(s.hp.shape[1]):
        t, n = total[j], hits[j]
        if w.shields:
            absorbed = min(s.shield[b, j], t)
            overflow = t - absorbed
            on_hp = n * overflow / max(t, eps)
            s.shield[b, j] = s.shield[b, j] - absorbed
            s.hp[b, j] = s.hp[b, j] - max(overflow - st.armor[b, j] * on_hp, zero)
            if t > 0:
                s.shield_delay[b, j] = k.shield_wait
        else:
            s.hp[b, j] = s.hp[b, j] - max(t - st.armor[b, j] * n, zero)
    for j in range(s.hp.shape[1]):
        if s.alive[b, j] and s.hp[b, j] <= 0:
            s.hp[b, j], s.shield[b, j], s.alive[b, j] = F0, F0, False


@_inlined
def _splash(k, s, st, p, b, n_agents, o):
    """o.splash_damage and o.splash_hits (float32, summed in attacker order) of this tick's colossus beams
    (enemies touching a line of half-length splash_radius and half-width k.beam_half_width across the attack,
    centred on the target, the target excluded) and baneling explosions (enemies within splash_radius)."""
    n = s.hp.shape[1]
    for j in range(n):
        o.splash_damage[j], o.splash_hits[j] = F0, F0
    for i in range(n):
        line, boom = o.ready[i] and st.is_line_splash[b, i], o.ready[i] and st.is_suicide[b, i]
        if not (line or boom):
            continue
        t, radius = o.tidx[i], st.splash_radius[b, i]
        x, y, tx, ty = s.z[b, 2 * i], s.z[b, 2 * i + 1], s.z[b, 2 * t], s.z[b, 2 * t + 1]
        cx, cy = (tx, ty) if line else (x, y)
        hx, hy = tx - x, ty - y  # the attack's direction, as numpy's complex division by a real scales it
        scale = F1 / max(_cabs(hx, hy), EPS6)
        hx, hy = hx * scale, hy * scale
        for j in range(n):
            if (i < n_agents) == (j < n_agents) or not s.alive[b, j]:
                continue
            ox, oy = s.z[b, 2 * j] - cx, s.z[b, 2 * j + 1] - cy
            victim = st.radius[b, j]
            hit = boom and _cabs(ox, oy) < radius + victim
            if line and j != t:  # the offset turned into the beam's frame, as numpy's complex product rounds it
                along, across = _fma(ox, hx, -(oy * -hy)), _fma(oy, hx, ox * -hy)
                gap_across, gap_along = max(abs(across) - radius, F0), max(abs(along) - k.beam_half_width, F0)
                hit = hit or gap_across * gap_across + gap_along * gap_along < victim * victim
            if hit:
                o.splash_damage[j] += p.hit_damage[b, i, j] * st.attacks[b, i]
                o.splash_hits[j] += st.attacks[b, i]


@_inlined
def _fire(k, w, s, st, p, b, n_agents, o):
    """Units ready to fire do: damage summed per target in float64 in unit order; melee and instant hits (and
    splash) land now, projectiles after their flight (shots in flight at a target that dies are wasted, as in
    SC2); then the attacks are over and banelings die."""
    n = s.hp.shape[1]
    for d in w.delays:
        for j in range(n):
            o.total[j], o.hits[j] = 0.0, 0.0
        for u in range(n):
            if o.ready[u] and not st.is_suicide[b, u] and (w.delays.size == 1 or st.projectile_ticks[b, u] == d):
                o.total[o.tidx[u]] += np.float64(p.volley[b, u, o.tidx[u]])
                o.hits[o.tidx[u]] += np.float64(st.attacks[b, u])
        if not w.instant:
            for j in range(n):
                s.pending[d, b, j, 0] = s.pending[d, b, j, 0] + o.total[j]
                s.pending[d, b, j, 1] = s.pending[d, b, j, 1] + o.hits[j]
    if w.splash:
        _splash(k, s, st, p, b, n_agents, o)
        for j in range(n):
            if w.instant:
                o.total[j], o.hits[j] = o.total[j] + o.splash_damage[j], o.hits[j] + o.splash_hits[j]
            else:
                s.pending[0, b, j, 0] = s.pending[0, b, j, 0] + o.splash_damage[j]
                s.pending[0, b, j, 1] = s.pending[0, b, j, 1] + o.splash_hits[j]
    if w.instant:
        _apply_damage(k, w, s, st, b, o.total, o.hits, np.float64(1e-9))
    for u in range(n):
        if o.ready[u]:
            s.swing_target[b, u] = -1  # the attack is over (its cooldown runs since it started)
            if u < n_agents:
                s.hit_in[b, u] = min(s.hit_in[b, u], st.projectile_ticks[b, u])
            if st.is_suicide[b, u]:
                s.hp[b, u], s.alive[b, u] = F0, False


@_inlined
def _land_hits(k, w, s, st, b, o):
    """Damage arriving this tick hits the units still alive; projectiles in flight advance one tick."""
    n, last = s.hp.shape[1], s.pending.shape[0] - 1
    if s.pending[0, b, :, 0].any():
        for j in range(n):
            o.land[j] = s.pending[0, b, j, 0] * (F1 if s.alive[b, j] else F0)
            o.land_hits[j] = s.pending[0, b, j, 1] * (F1 if s.alive[b, j] else F0)
        _apply_damage(k, w, s, st, b, o.land, o.land_hits, EPS9)
    for d in range(last):  # element by element: a slice assignment within one array copies it to a temporary
        for j in range(n):
            s.pending[d, b, j, 0], s.pending[d, b, j, 1] = s.pending[d + 1, b, j, 0], s.pending[d + 1, b, j, 1]
    for j in range(n):
        s.pending[last, b, j, 0], s.pending[last, b, j, 1] = F0, F0


@_inlined
def _regenerate(k, w, s, st, b, n_agents):
    """Cooldowns, damage points and hit timers count down; shields (after their delay), medivac energy and zerg
    hp regrow."""
    for u in range(s.hp.shape[1]):
        s.cooldown[b, u] = s.cooldown[b, u] - F1
        if s.swing_target[b, u] >= 0:
            s.swing[b, u] = s.swing[b, u] - F1
        if u < n_agents:
            s.hit_in[b, u] = s.hit_in[b, u] - F1
        if w.shields:
            if s.alive[b, u] and s.shield_delay[b, u] <= 0:
                s.shield[b, u] = min(s.shield[b, u] + k.shield_step, st.max_shield[b, u])
            s.shield_delay[b, u] = s.shield_delay[b, u] - F1
        if w.medivacs and s.alive[b, u] and st.is_medivac[b, u]:
            s.energy[b, u] = min(s.energy[b, u] + k.energy_step, k.energy_max)
        if w.regen and s.alive[b, u]:
            s.hp[b, u] = min(s.hp[b, u] + st.regen[b, u], st.max_hp[b, u])


def _scratch(n: int) -> Scratch:
    """Working arrays for battles of n units."""
    return Scratch(np.empty(n, np.int64), np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.bool_),
                   np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.float32), np.empty(n, np.float32),
                   np.empty(n, np.float32), np.empty(n, np.bool_), np.empty(n, np.bool_), np.zeros((n, n), np.float32),
                   np.empty((n, n), np.float32), np.empty((n, n), np.float32), np.empty(n, np.float32),
                   np.empty(n, np.bool_), np.empty(n, np.bool_), np.empty(n, np.float32), np.empty(n, np.float32),
                   np.empty(n, np.float64), np.empty(n, np.float64), np.empty(n, np.float32), np.empty(n, np.float32),
                   np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.float64))


@_unit_loop
def _step(k, w, s, st, p, actions, n_agents, delays, o):
    """One agent step of every env: orders, then each tick sense (every k.sense_every ticks), move (and
    attack), heal and fire, land hits, regenerate. `delays`: each unit's draw in [0, 1) [n_envs, n_units]
    for the random delay of an attack it starts this step; `o`: the working arrays (`_scratch`)."""
    for b in range(s.hp.shape[0]):
        _give_orders(k, s, st, p, b, actions, n_agents, o)
        for tick in range(k.ticks):
            if tick % k.sense_every == 0:
                _sense(k, w, s, st, p, b, n_agents, o)
            _move(k, w, s, st, b, delays, o)
            if w.medivacs:
                _heal(k, s, st, b, o)
            if o.ready.any():
                _fire(k, w, s, st, p, b, n_agents, o)
            if not w.instant:
                _land_hits(k, w, s, st, b, o)
            _regenerate(k, w, s, st, b, n_agents)
        for u in range(s.hp.shape[1]):
            s.last_target[b, u] = o.target[u]
        s.steps[b] += 1
