"""The enemies' slot order: drawn at every reset, as smac's raw unit order changes between episodes
(envs/smac/SC2_FACTS.md), or fixed with env.fixed_enemy_order=true."""
import numpy as np
import pytest

import envs
from envs.smac import SMACVecEnv
from envs.smac.batch import make_batch
from envs.smac.maps import get_map
from tests.test_smac_engine import run

MMM2 = get_map("MMM2")


def medivac_slots(batch) -> np.ndarray:
    """Each env's enemy slot holding the medivac (MMM2 has one)."""
    a = batch.n_agents
    return np.argmax(batch.battle.stats.is_medivac[:, a:], axis=1)


def test_each_reset_draws_the_enemy_slots_uniformly_and_keeps_the_allies():
    batch = make_batch("MMM2", 2400, seed=0, episode_limit=None, flags={})
    batch.reset(np.ones(2400, bool))
    counts = np.bincount(medivac_slots(batch), minlength=MMM2.n_enemies)
    # 200 expected per slot; a binomial's standard deviation is about 13.5
    assert counts.min() > 140 and counts.max() < 260, counts
    kinds = batch.battle.stats.kind
    names = batch.battle.roster.type_names
    assert all(names[k] == n for k, n in zip(kinds[0, :MMM2.n_agents], MMM2.ally_names, strict=True))
    assert (kinds[:, :MMM2.n_agents] == kinds[0, :MMM2.n_agents]).all()
    # a unit keeps its type with its position: each slot's stats are its kind's
    enemy_kinds = np.sort(kinds[:, MMM2.n_agents:], axis=1)
    assert (enemy_kinds == enemy_kinds[0]).all()
    pairs = batch.battle.pairs  # and the pairwise tables follow the units (medivacs have no weapon)
    assert (pairs.volley[np.arange(2400), MMM2.n_agents + medivac_slots(batch)] == 0).all()
    before = medivac_slots(batch).copy()
    batch.reset(np.ones(2400, bool))
    assert (medivac_slots(batch) != before).mean() > 0.85  # 11/12 expected


def test_a_fixed_order_numbers_the_enemies_alike_and_runs_its_recorded_trajectories():
    batch = make_batch("MMM2", 64, seed=0, episode_limit=None, flags={"fixed_enemy_order": True})
    for _ in range(3):
        batch.reset(np.ones(64, bool))
        assert (medivac_slots(batch) == MMM2.enemy_names.index("medivac")).all()
    # recorded with the order fixed at dynamics version 4 (until then, the digest of before the shuffle existed)
    venv = envs.make_vec("smac_3m", n_envs=8, seed=11, fixed_enemy_order=True)
    assert isinstance(venv, SMACVecEnv)
    assert run(venv, 60)[0] == "8d8f5a072cdbbf4c"


@pytest.mark.parametrize("saved_fixed", [True, False])
def test_a_battle_saved_with_the_other_order_is_refused_naming_the_option(saved_fixed):
    flags = {"fixed_enemy_order": saved_fixed}
    saved = make_batch("3m", 4, seed=0, episode_limit=None, flags=flags)
    saved.reset(np.ones(4, bool))
    state = saved.state_dict()
    other = make_batch("3m", 4, seed=0, episode_limit=None, flags={"fixed_enemy_order": not saved_fixed})
    with pytest.raises(ValueError, match=f"env.fixed_enemy_order={str(saved_fixed).lower()}"):
        other.load_state_dict(state)
    if saved_fixed:  # a checkpoint from before the shuffle has no order: it was fixed
        del state["enemy_order"]
        make_batch("3m", 4, seed=0, episode_limit=None, flags=flags).load_state_dict(state)
