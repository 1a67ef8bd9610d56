"""SC2's weapon mechanics in the simulator (issue 43, envs/smac/SC2_FACTS.md): damage points, random attack
delays, range slop and the scan range of automatic targeting. Each test fails without its mechanic."""
import numpy as np
import pytest

from envs.smac.batch import SMACBatch
from envs.smac.battle_constants import DT, MIN_SCAN_RANGE, RANDOM_DELAY
from envs.smac.engine import plain
from envs.smac.features import FeatureFlags
from envs.smac.maps import get_map
from envs.smac.units import UNIT_TYPES, UnitTable

STOP, EAST, WEST, ATTACK_FIRST = 1, 4, 5, 6


def duel(n_envs: int = 1, compiled: bool = True) -> SMACBatch:
    """3s_vs_3z with one stalker (unit 0) 5 from one zealot (unit 3), the others dead; the stalker's weapon is
    ready and the zealot in its reach (6 plus both radii)."""
    core = SMACBatch(get_map("3s_vs_3z"), n_envs, seed=0, flags=FeatureFlags(), compiled=compiled)
    core.reset(np.ones(n_envs, bool))
    s = core.battle.state
    for u in range(6):
        s.z[:, u] = complex(2.0 + 4 * u, 28.0)
    s.z[:, 0], s.z[:, 3] = complex(10.0, 16.0), complex(15.0, 16.0)
    for u in (1, 2, 4, 5):
        s.hp[:, u], s.shield[:, u], s.alive[:, u] = 0.0, 0.0, False
    s.cooldown[:] = 0.0
    return core


def zealot_health(core: SMACBatch) -> np.ndarray:
    s = core.battle.state
    return s.hp[:, 3] + s.shield[:, 3] + core.battle.state.pending[:, :, 3, 0].sum(0)


@pytest.mark.parametrize("compiled", [True, False])
def test_a_unit_that_moves_during_its_damage_point_deals_no_damage(compiled):
    """The stalker's weapon is ready on the last tick of a step: its attack starts, and its shot would follow
    0.167 s (2.7 ticks) later. Moving away in the next step loses the shot and leaves the weapon ready; attacking
    on fires it."""
    outcomes = {}
    for second in (WEST, ATTACK_FIRST):
        core = duel(compiled=compiled)
        s = core.battle.state
        s.cooldown[:, 0] = 6.5  # ready at the 8th tick
        full = zealot_health(core).copy()
        core.step(np.array([[ATTACK_FIRST, STOP, STOP]]))
        assert s.swing_target[0, 0] == 3 and 0 < s.swing[0, 0] < UNIT_TYPES["stalker"].damage_point / DT
        assert zealot_health(core) == pytest.approx(full)  # no shot yet
        core.step(np.array([[second, STOP, STOP]]))
        outcomes[second] = (full - zealot_health(core))[0], s.cooldown[0, 0], s.swing_target[0, 0]
    lost, fired = outcomes[WEST], outcomes[ATTACK_FIRST]
    assert lost[0] == 0 and lost[1] <= 0 and lost[2] == -1  # no damage, the weapon ready again
    assert fired[0] == pytest.approx(UNIT_TYPES["stalker"].damage) and fired[1] > 0 and fired[2] == -1


def test_each_attack_adds_a_random_delay_within_sc2s_bounds():
    """Cooldowns after one attack started on the first tick: the period plus a delay uniform in
    [-0.0625, +0.125] s (core RandomDelayMin/Max), spread over the whole interval across envs."""
    core = duel(n_envs=512)
    core.step(np.tile([[ATTACK_FIRST, STOP, STOP]], (512, 1)))
    ticks_since = 8  # the attack started on the first tick; each tick counted the cooldown down by one
    delay = (core.battle.state.cooldown[:, 0] + ticks_since - UNIT_TYPES["stalker"].cooldown / DT) * DT
    lo, hi = RANDOM_DELAY
    assert delay.min() >= lo - 1e-4 and delay.max() < hi + 1e-4
    assert delay.min() < lo + 0.01 and delay.max() > hi - 0.01 and delay.std() > 0.04  # uniform: std 0.054


def test_an_attack_goes_on_within_range_slop_and_is_lost_beyond_it():
    core = duel(compiled=False)
    engine = plain()
    state, units, _ = engine.views(core.battle)
    k = engine.tuning()
    state.swing_target[0, 0], state.swing[0, 0], state.cooldown[0, 0] = 3, 1.0, 20.0
    reach = np.float32(6 + 0.625 + 0.5)
    delays = np.zeros((1, 6), np.float32)
    assert not engine._attack(k, state, units, 0, 0, 3, reach + np.float32(0.9), reach, delays)
    assert state.swing_target[0, 0] == 3  # 0.9 beyond reach: the attack goes on (range slop 1)
    state.swing[0, 0] = 0.0
    assert engine._attack(k, state, units, 0, 0, 3, reach + np.float32(0.9), reach, delays)  # and fires
    state.swing[0, 0] = 1.0
    assert not engine._attack(k, state, units, 0, 0, 3, reach + np.float32(1.1), reach, delays)
    assert state.swing_target[0, 0] == -1 and state.cooldown[0, 0] == 0  # 1.1 beyond: lost, weapon ready
    assert UnitTable.build(["colossus", "stalker"], DT).range_slop.tolist() == [0, 1]  # ThermalLances: no slop


def test_enemies_keep_a_target_until_it_leaves_range_slop():
    """An enemy marine (5m_vs_6m) with a target 0.5 beyond its reach keeps it though another ally is nearer;
    1.5 beyond, it takes the nearer one."""
    core = SMACBatch(get_map("5m_vs_6m"), 1, seed=0, flags=FeatureFlags(), compiled=False)
    core.reset(np.ones(1, bool))
    engine = plain()
    state, units, pairs = engine.views(core.battle)
    world, k = engine.world(core.battle), engine.tuning()
    o = engine._scratch(11)
    o.ally_target[:] = -1
    reach = pairs.reach[0, 5, 0]
    chosen = {}
    for beyond in (0.5, 1.5):
        state.ai_target[0, 5] = 0
        o.dist[5, :5] = reach + 3.0
        o.dist[5, 0], o.dist[5, 1] = reach + beyond, reach - 1.0
        engine._acquire_targets(k, world, state, units, pairs, 0, 5, o)
        chosen[beyond] = int(state.ai_target[0, 5])
    assert chosen == {0.5: 0, 1.5: 1}


def test_automatic_targeting_scans_at_least_the_weapons_range():
    """core MinScanRange 5: a stalker (range 6) acquires from 6 plus both radii, a marine (range 5) from 5."""
    core = SMACBatch(get_map("3s_vs_3z"), 1, seed=0, flags=FeatureFlags())
    radius_sum = core.battle.pairs.radius_sum[0]
    assert core.battle.pairs.scan_reach[0, 0, 3] == pytest.approx(6 + radius_sum[0, 3])
    marines = SMACBatch(get_map("3m"), 1, seed=0, flags=FeatureFlags())
    assert marines.battle.pairs.scan_reach[0, 3, 0] == pytest.approx(MIN_SCAN_RANGE + 0.75)


def test_a_unit_stands_through_its_damage_point_while_its_target_stays_within_slop():
    """The zealot steps 0.5 beyond the stalker's reach (and walks on away) while the stalker's attack is under
    way: the stalker stands until its shot, which still fires (on the step's third tick), and only then chases,
    for the five ticks left."""
    core = duel()
    s = core.battle.state
    s.cooldown[:, 0] = 6.5  # the attack starts on the last tick of the first step
    core.step(np.array([[ATTACK_FIRST, STOP, STOP]]))
    assert s.swing_target[0, 0] == 3
    reach = 6 + 0.625 + 0.5
    s.z[0, 3] = s.z[0, 0] + (reach + 0.5)
    s.attack_point[0] = 31 + 16j  # the zealot walks away from the stalker
    before, full = complex(s.z[0, 0]), zealot_health(core).copy()
    core.step(np.array([[ATTACK_FIRST, STOP, STOP]]))
    chased = abs(complex(s.z[0, 0]) - before)
    assert chased == pytest.approx(5 * UNIT_TYPES["stalker"].speed * DT, rel=1e-5)
    assert (full - zealot_health(core))[0] == pytest.approx(UNIT_TYPES["stalker"].damage)


def test_an_attack_is_lost_when_its_target_dies_or_changes():
    engine = plain()
    core = duel(compiled=False)
    state, _, _ = engine.views(core.battle)
    o = engine._scratch(6)
    for target_now, target_alive in ((3, False), (4, True)):  # the target died; the unit was ordered elsewhere
        state.swing_target[0, 0], state.cooldown[0, 0] = 3, 20.0
        state.alive[0, 3] = target_alive if target_now == 3 else True
        o.target[0] = target_now
        engine._cancel_swing(state, 0, 0, o)
        assert state.swing_target[0, 0] == -1 and state.cooldown[0, 0] == 0
    state.swing_target[0, 0], state.cooldown[0, 0], state.alive[0, 3], o.target[0] = 3, 20.0, True, 3
    engine._cancel_swing(state, 0, 0, o)
    assert state.swing_target[0, 0] == 3 and state.cooldown[0, 0] == 20  # same live target: it goes on


@pytest.mark.parametrize("compiled", [True, False])
def test_a_unit_walking_into_a_standing_enemy_gives_way_alone(compiled):
    """SC2 lets no player's units push another's (the `Pushable` alliance aspect, off between enemies): the
    zealot attacking stalker 1 stands its ground while stalker 0 walks into it, and stalker 0 does not pass."""
    core = duel(compiled=compiled)
    s = core.battle.state
    s.alive[:, 1], s.hp[:, 1], s.shield[:, 1] = True, 80.0, 80.0
    s.z[:, 1], s.z[:, 0] = complex(16.175, 16.0), complex(13.0, 16.0)  # the zealot's target; the walker, west
    zealot = s.z[0, 3]
    for _ in range(4):
        core.step(np.array([[EAST, STOP, STOP]]))
        assert s.ai_target[0, 3] == 1 and s.z[0, 3] == zealot
    # pressed against it from the west, overlapping it by at most the two ticks walked since the last push
    st = core.battle.stats
    assert s.z[0, 0].real < zealot.real
    assert abs(s.z[0, 0] - zealot) > st.radius[0, 0] + st.radius[0, 3] - 2 * st.speed_per_tick[0, 0] - 1e-3


def mmm2_few(compiled: bool = True) -> SMACBatch:
    """MMM2 in the map's order (allies: 0-1 marauders, 2-8 marines, 9 medivac; enemies 10-12 marauders, 13-20
    marines, 21 medivac) with every unit dead but ally marauder 0, ally medivac 9, enemy marauder 10, enemy
    marine 13 and the enemy medivac 21, placed in each other's reach."""
    core = SMACBatch(get_map("MMM2"), 1, seed=0, flags=FeatureFlags(), compiled=compiled, fixed_enemy_order=True)
    core.reset(np.ones(1, bool))
    s = core.battle.state
    live = (0, 9, 10, 13, 21)
    for u in range(22):
        s.z[0, u] = complex(2.0 + u, 30.0)
        if u not in live:
            s.hp[0, u], s.alive[0, u] = 0.0, False
    s.z[0, 0], s.z[0, 9] = complex(12.0, 16.0), complex(11.0, 16.0)
    s.z[0, 10], s.z[0, 13], s.z[0, 21] = complex(16.0, 16.0), complex(16.0, 17.0), complex(16.0, 15.0)
    return core


@pytest.mark.parametrize("compiled", [True, False])
def test_ground_only_weapons_neither_hit_nor_target_air_units(compiled):
    """The marauder's weapon hits ground only (Liberty's PunisherGrenades: TargetFilters Ground): SC2 rejects an
    order to attack the medivac, so ally marauder 0 keeps attacking the marine it attacked the step before, and
    the enemy's marauder takes the ally marauder, not the ally medivac nearer to hand."""
    core = mmm2_few(compiled)
    s, n_actions = core.battle.state, core.n_actions
    marine, medivac = ATTACK_FIRST + 13 - 10, ATTACK_FIRST + 21 - 10
    actions = np.zeros((1, 10), np.int64)
    actions[0, 9] = 1  # the ally medivac stops
    actions[0, 0] = marine
    core.step(actions)
    s.energy[0, 21] = 0.0  # the enemy medivac has next to no energy to heal the marine with
    marine_hp = s.hp[0, 13]
    for _ in range(6):
        actions[0, 0] = medivac
        core.step(actions)
        assert s.last_target[0, 0] == 13
    assert s.hp[0, 13] <= marine_hp - 15  # two of the marauder's 10-damage shots at least, less a little healing
    assert s.hp[0, 21] == core.battle.stats.max_hp[0, 21]
    assert s.ai_target[0, 10] == 0 and s.hp[0, 9] == core.battle.stats.max_hp[0, 9]
    assert n_actions == ATTACK_FIRST + 12  # the action stays available, as smac masks by range only
