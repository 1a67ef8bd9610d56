"""Built-in simulator details checked against smac/smacv2 (issue 17): sparse reward scaling, smacv2's positive
part of the dense reward, unit attributes and the Colossus's collisions and beam."""
import numpy as np
import pytest

from envs.smac.batch import RewardConfig, SMACBatch
from envs.smac.battle_constants import DT
from envs.smac.engine import plain
from envs.smac.features import FeatureFlags
from envs.smac.maps import get_map
from envs.smac.units import UNIT_TYPES, UnitTable


def won_3m(rewards: RewardConfig) -> SMACBatch:
    """A 3m battle one step before a win: the last enemy at 1 hp, next to every ally."""
    core = SMACBatch(get_map("3m"), 1, seed=0, flags=FeatureFlags(), rewards=rewards)
    core.reset(np.ones(1, bool))
    s = core.battle.state
    for u in range(6):
        s.z[0, u] = complex(10.0 + 0.8 * u, 16.0)
    s.hp[0, 4:] = 0.0
    s.alive[0, 4:] = False
    s.hp[0, 3] = 1.0
    s.cooldown[0] = 0.0
    return core


def test_sparse_reward_is_scaled_like_smac():
    """smac divides every reward by max_reward / reward_scale_rate when reward_scale is on, the sparse +-1 too."""
    core = won_3m(RewardConfig(reward_sparse=True))
    out = core.step(np.array([[6, 6, 6]]))
    assert out.won[0]
    assert out.reward[0] == pytest.approx(1.0 / ((3 * 10 + 200 + 3 * 45) / 20))
    unscaled = won_3m(RewardConfig(reward_sparse=True, reward_scale=False))
    assert unscaled.step(np.array([[6, 6, 6]])).reward[0] == 1.0


@pytest.mark.parametrize("positive_part", [False, True])
def test_enemy_regeneration_pays_under_smac_v1_only(positive_part):
    """A step in which an enemy only regenerates has a negative damage delta: smac v1 takes its absolute value
    (the regeneration is paid as reward), smacv2 its positive part (nothing)."""
    core = SMACBatch(get_map("2s3z"), 1, seed=0, flags=FeatureFlags(),
                     rewards=RewardConfig(reward_positive_part=positive_part, reward_scale=False))
    core.reset(np.ones(1, bool))
    s = core.battle.state
    enemy = core.n_agents
    s.shield[0, enemy] -= 10.0  # a damaged shield whose regeneration delay is over
    s.shield_delay[0, enemy] = 0.0
    before = float(s.shield[0, enemy])
    out = core.step(np.zeros((1, core.n_agents), np.int64) + 1)  # every ally stops, far from the enemy
    assert s.shield[0, enemy] > before  # it regenerated
    expected = 0.0 if positive_part else float(s.shield[0, enemy]) - before
    assert out.reward[0] == pytest.approx(expected, abs=1e-5)


def test_unit_attributes_match_sc2():
    assert UNIT_TYPES["hydralisk"].light and not UNIT_TYPES["hydralisk"].armored
    assert UNIT_TYPES["baneling"].damage + UNIT_TYPES["baneling"].bonus_light == 35  # against a hydralisk


def battle_1c3s5z() -> SMACBatch:
    """1c3s5z: units 0 (colossus), 1-3 (stalkers), 4-8 (zealots) are allies, 9-17 the same enemies (in the map's
    order: fixed)."""
    core = SMACBatch(get_map("1c3s5z"), 1, seed=0, flags=FeatureFlags(), fixed_enemy_order=True)
    core.reset(np.ones(1, bool))
    return core


def test_the_colossus_walks_over_small_units_but_collides_with_a_colossus():
    core = battle_1c3s5z()
    z = core.battle.state.z
    z[0, 0], z[0, 4] = complex(8.0, 12.0), complex(8.1, 12.0)  # colossus on a zealot
    z[0, 5], z[0, 1] = complex(8.0, 20.0), complex(8.1, 20.0)  # zealot on a stalker
    z[0, 9] = complex(8.0, 16.0)  # the enemy colossus, overlapping nothing yet
    core.step(np.ones((1, 9), np.int64))  # every ally stops
    z = core.battle.state.z  # positions after the step (moves may place them in a new array)
    assert abs(z[0, 4] - z[0, 0]) < 0.2  # the colossus stands over the zealot
    assert abs(z[0, 5] - z[0, 1]) > 0.9  # small units push apart
    pairs = core.battle.pairs.collide_d2[0]
    assert pairs[0, 9] > 0 and pairs[0, 4] < 0 and pairs[4, 0] < 0 and pairs[1, 5] > 0


def test_the_colossus_beam_is_a_line_across_the_attack():
    """The beam hits enemies beside the target across the line of fire, not those behind it, nor the target
    again (its damage is the primary attack's)."""
    core = battle_1c3s5z()
    battle, z = core.battle, core.battle.state.z
    for u in range(18):
        z[0, u] = complex(2.0 + u, 28.0)  # everyone out of the way
    z[0, 0] = complex(10.0, 16.0)  # the colossus fires along +x at the enemy zealot 13
    z[0, 13] = complex(16.0, 16.0)
    z[0, 14] = complex(16.0, 17.3)  # beside the target, across the line of fire: inside the beam's 1.4
    z[0, 15] = complex(17.0, 16.0)  # 1 behind the target along the line of fire
    z[0, 16] = complex(16.0, 18.5)  # beyond the beam's end
    engine = plain()
    state, units, pairs = engine.views(battle)
    fired = engine._scratch(18)
    fired.ready[:], fired.tidx[:] = False, 13
    fired.ready[0] = True
    engine._splash(engine.tuning(), state, units, pairs, 0, battle.n_agents, fired)
    assert fired.splash_hits.nonzero()[0].tolist() == [14]
    assert fired.splash_damage[14] == pytest.approx(20)  # Liberty's ThermalLances: 20 once, no bonus (SC2_FACTS.md)


def test_stalker_colossus_and_baneling_fire_liberty_weapons():
    """SMAC's maps load only the Liberty mod (envs/smac/SC2_FACTS.md): its stalker, colossus and baneling weapons,
    not the ladder's, in game loops (16 per normal second) and damage per hit."""
    table = UnitTable.build(["stalker", "colossus", "baneling", "zealot"], DT)
    assert table.cooldown_ticks[:2] == pytest.approx([1.44 * 16, 2.2 * 16])
    assert (table.damage_vs_armored[0], table.damage_vs_light[0]) == (14, 10)  # 10 (+4 armored)
    assert (table.damage_vs_armored[1], table.damage_vs_light[1], table.attacks[1], table.range[1]) == (20, 20, 1, 6)
    assert (table.damage_vs_light[2], table.damage_vs_armored[2]) == (35, 20)  # 20 (+15 light)


def test_generated_smacv2_scenarios_clip_the_dense_reward_at_zero():
    from envs.smac.batch import make_batch
    assert make_batch("smaclite_protoss_5_vs_5", 1, 0, None, {}).rewards.reward_positive_part
    assert not make_batch("3m", 1, 0, None, {}).rewards.reward_positive_part


def test_smacv2_own_features_are_health_shield_position_type():
    from envs.smac.batch import make_batch
    core = make_batch("smaclite_protoss_5_vs_5", 2, 0, None, {})
    core.reset(np.ones(2, bool))
    obs = core.observe()[0]  # [n_envs, n_agents, 92]; the own features are the last 7
    s = core.battle.state
    own = obs[:, :, -7:]
    np.testing.assert_allclose(own[..., 0], s.hp[:, :5] / core.battle.stats.max_hp[:, :5], atol=1e-6)
    np.testing.assert_allclose(own[..., 2] + 1j * own[..., 3], s.z[:, :5] / 32, atol=1e-6)
    np.testing.assert_array_equal(own[..., 4:].argmax(-1), core.battle.stats.kind[:, :5])
    assert (own[..., 4:].sum(-1) == 1).all()
    from envs.smac import StarCraft2Env
    names = StarCraft2Env(map_name="smaclite_protoss_5_vs_5").get_obs_feature_names()
    assert names[-7:] == ["own_health", "own_shield", "own_pos_x", "own_pos_y",
                          *(f"own_unit_type_bit_{i}" for i in range(3))]
