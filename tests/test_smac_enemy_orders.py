"""The enemy's orders as each map's script gives them: attack-move to the map's point with SC2's default
behaviour (acquire in range, retaliate), smacv2's closest-ally hunt, 2m_vs_1z's random point."""
from __future__ import annotations

import numpy as np
import pytest

from envs.smac.batch import SMACBatch, make_batch
from envs.smac.battle import DYNAMICS
from envs.smac.battle_constants import FAR
from envs.smac.features import FeatureFlags
from envs.smac.maps import get_map


def started(core: SMACBatch) -> SMACBatch:
    core.reset(np.ones(core.n_envs, bool))
    return core


def test_an_attack_order_alone_does_not_turn_a_far_enemy():
    core = started(SMACBatch(get_map("3m"), 1, seed=0, flags=FeatureFlags()))
    s, a = core.battle.state, core.n_agents
    s.z[0] = [10 + 10j, 10 + 20j, 4 + 16j, 26 + 10j, 26 + 20j, 28 + 16j]  # 16+ apart: out of scan range
    core.battle.step(np.ones((1, a), np.int64))  # allies stop
    assert (s.ai_target[0, a:] == -1).all()
    actions = np.ones((1, a), np.int64)
    actions[0, 0] = 6 + 1  # agent 0 attacks enemy 1: it walks toward it, still far, and has not hit it
    core.battle.step(actions)
    assert (s.ai_target[0, a:] == -1).all()


def test_an_enemy_retaliates_when_the_first_hit_lands_not_when_it_is_targeted():
    """A stalker (reach 7.1 against a zealot) fires from beyond the zealot's scan range (6.1): the zealot turns
    on it once the first shot lands (its attack starts at tick 7, the shot follows the damage point at tick 10,
    3 ticks of flight), not when the order is given."""
    core = started(SMACBatch(get_map("3s_vs_3z"), 1, seed=0, flags=FeatureFlags()))
    s, a = core.battle.state, core.n_agents
    s.z[0] = [10 + 16j, 3 + 8j, 3 + 23j, 16.8 + 16j, 28 + 8j, 28 + 23j]  # zealot 0 is 6.8 from stalker 0
    s.attack_point[0] = s.z[0, a]  # zealot 0 stands where it is
    s.cooldown[0, 0] = 7.0  # stalker 0's weapon is ready at tick 7, its shot lands in the second step
    actions = np.ones((1, a), np.int64)
    actions[0, 0] = 6 + 0  # stalker 0 attacks zealot 0, in reach: it stands and waits for its weapon
    core.battle.step(actions)
    assert (s.ai_target[0, a:] == -1).all() and s.shield[0, a] == 50  # ordered, in reach, not hit yet
    core.battle.step(actions)
    assert s.shield[0, a] < 50 and s.ai_target[0, a] == 0  # hit: it turns on its attacker
    assert (s.ai_target[0, a + 1:] == -1).all()
    actions[0, 0] = 1  # the stalker stops: it no longer attacks, and stands beyond the zealot's scan range
    core.battle.step(actions)
    assert s.ai_target[0, a] == -1


def test_hunting_enemies_take_the_closest_ally_anywhere_and_keep_it():
    core = started(make_batch("smaclite_terran_5_vs_5", 1, 0, None, {}))
    s, a = core.battle.state, core.n_agents
    s.z[0, :a] = [3 + 3j, 3 + 6j, 3 + 9j, 3 + 12j, 3 + 15j]
    s.z[0, a:] = [28 + 3j, 28 + 6j, 28 + 9j, 28 + 12j, 28 + 15j]  # 25 apart: far beyond any scan range
    fighters = ~core.battle.stats.is_medivac[0, a:]
    closest = np.abs(s.z[0, a:, None] - s.z[0, None, :a]).argmin(1)  # enemy k: ally k
    core.battle.step(np.ones((1, a), np.int64))
    assert (s.ai_target[0, a:][fighters] == closest[fighters]).all()
    s.z[0, a:] = s.z[0, a:][::-1].copy()  # every enemy now nearest another ally: the targets are kept
    core.battle.step(np.ones((1, a), np.int64))
    assert (s.ai_target[0, a:][fighters] == closest[fighters]).all()


def test_the_2m_vs_1z_zealot_attack_moves_to_a_random_point_between_the_marines():
    core = started(SMACBatch(get_map("2m_vs_1z"), 64, seed=0, flags=FeatureFlags()))
    point = core.battle.state.attack_point
    assert (point.imag == 12).all() and (point.real >= 13).all() and (point.real <= 19).all()
    assert np.ptp(point.real) > 4  # drawn per episode, not one point


def test_on_the_smac_maps_the_enemy_attack_moves_to_the_scripts_point():
    """The attack-move target of each map's script (its named point; SMAC_SPEC.md §5.3), e.g. corridor's
    'Attack Point' in the lower-left chamber and 6h_vs_8z's 'Hydralisks' spawn."""
    simple = ("3m", "8m", "25m", "5m_vs_6m", "8m_vs_9m", "10m_vs_11m", "27m_vs_30m", "MMM", "MMM2", "2s3z", "3s5z",
              "3s5z_vs_3s6z", "1c3s5z", "3s_vs_3z", "3s_vs_4z", "3s_vs_5z")  # 'Team 1', the allies' spawn
    points = {**{name: 9 + 16j for name in simple}, "corridor": 4.47 + 4.33j, "6h_vs_8z": 14.60 + 9.49j,
              "bane_vs_bane": 16 + 8j, "so_many_baneling": 4.47 + 4.33j,
              "2c_vs_64zg": 16 + 16j}  # its script targets the colossi, which stand at their spawn
    for name, point in points.items():
        core = started(SMACBatch(get_map(name), 2, seed=0, flags=FeatureFlags()))
        assert np.allclose(core.battle.state.attack_point, point, atol=1e-4), name


def test_the_order_is_issued_again_after_every_respawn():
    core = started(SMACBatch(get_map("3m"), 2, seed=0, flags=FeatureFlags()))
    s, a = core.battle.state, core.n_agents
    for _ in range(30):  # allies stop: the enemy arrives and acquires them
        core.battle.step(np.ones((2, a), np.int64))
        if (s.ai_target[:, a:] >= 0).any(1).all():
            break
    assert (s.ai_target[:, a:] >= 0).any(1).all()
    core.reset(np.array([True, False]))  # env 0 respawns: its enemies start over on the script's order
    assert (s.ai_target[0, a:] == -1).all() and (s.ai_target[1, a:] >= 0).any()
    assert np.allclose(s.attack_point, 9 + 16j)


def test_a_battle_saved_before_retaliation_on_hit_loads_with_no_hit_landed():
    core = started(SMACBatch(get_map("3m"), 2, seed=0, flags=FeatureFlags()))
    for _ in range(5):
        core.battle.step(np.full((2, core.n_agents), 6, np.int64))  # every agent attacks enemy 0
    saved = core.battle.state_dict()
    del saved["hit_in"]
    core.battle.load_state_dict(saved)
    assert (core.battle.state.hit_in == FAR).all()


def test_a_battle_saved_before_the_weapon_mechanics_is_refused_in_one_line():
    """Its battles ran other dynamics (no damage points, another marine period): continuing them on today's would
    mix the two, so loading says why instead (the trainer turns it into one error line)."""
    core = started(SMACBatch(get_map("3m"), 2, seed=0, flags=FeatureFlags()))
    saved = core.battle.state_dict()
    for key in ("swing_target", "swing", "damage_point_ticks", "range_slop"):
        del saved[key]
    with pytest.raises(ValueError, match=r"^its battles were saved before SC2's weapon mechanics"):
        core.battle.load_state_dict(saved)


@pytest.mark.parametrize("saved", [None, DYNAMICS - 1])
def test_a_battle_saved_under_other_dynamics_is_refused_in_one_line(saved):
    core = started(SMACBatch(get_map("3m"), 2, seed=0, flags=FeatureFlags()))
    state = core.battle.state_dict()
    if saved is None:
        del state["dynamics"]
    else:
        state["dynamics"] = np.array(saved)
    with pytest.raises(ValueError, match=rf"^its battles were saved .* runs version {DYNAMICS} "):
        core.battle.load_state_dict(state)
    core.battle.load_state_dict(core.battle.state_dict())  # its own version loads
