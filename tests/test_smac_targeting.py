"""The enemy AI's automatic targeting (issue 43, envs/smac/SC2_FACTS.md): threats before units that cannot hit
back, then the closest, with no random choice; a target that cannot hit back gives way to a threat that enters
weapon range. Each test fails without its rule."""
import numpy as np
import pytest

from envs.smac.batch import SMACBatch
from envs.smac.features import FeatureFlags
from envs.smac.maps import get_map

STOP = 1


def placed(map_name: str, n_envs: int, where: dict[int, complex], compiled: bool = True) -> SMACBatch:
    """`map_name` in the map's unit order with the units of `where` at their places and every other unit dead."""
    core = SMACBatch(get_map(map_name), n_envs, seed=0, flags=FeatureFlags(), compiled=compiled,
                     fixed_enemy_order=True)
    core.reset(np.ones(n_envs, bool))
    s = core.battle.state
    for u in range(s.z.shape[1]):
        if u in where:
            s.z[:, u] = where[u]
        else:
            s.z[:, u], s.hp[:, u], s.shield[:, u], s.alive[:, u] = complex(2.0 + u, 30.0), 0.0, 0.0, False
    s.cooldown[:] = 0.0
    return core


def test_an_enemy_takes_the_closest_ally_in_every_env():
    """Enemy marine 3 of 3m has ally 0 at 5.0 and ally 1 at 5.1, both inside its scan range (5.75): in each of
    64 envs it takes ally 0 (a random tie-break within 0.1 would take ally 1 in some)."""
    core = placed("3m", 64, {0: 11.0 + 16.0j, 1: 16.0 + 10.9j, 3: 16.0 + 16.0j})
    core.step(np.full((64, 3), STOP))
    assert (core.battle.state.ai_target[:, 3] == 0).all()


@pytest.mark.parametrize("compiled", [True, False])
def test_a_threat_outranks_a_closer_medivac_and_takes_over_when_it_enters_weapon_range(compiled):
    """MMM2 (allies 2 a marine, 9 the medivac; enemy 13 a marine). The enemy marine, 3 from the medivac and 5.5
    from the ally marine, takes the marine: it can hit back. With the marine out of scan range it takes the
    medivac, and drops it for the marine once the marine stands within its weapon's reach."""
    near = {9: 13.0 + 16.0j, 13: 16.0 + 16.0j}
    core = placed("MMM2", 1, {**near, 2: 16.0 + 21.5j}, compiled)
    actions = np.full((1, 10), STOP)
    core.step(actions)
    s = core.battle.state
    assert s.ai_target[0, 13] == 2
    core = placed("MMM2", 1, {**near, 2: 16.0 + 28.0j}, compiled)
    s = core.battle.state
    core.step(actions)
    assert s.ai_target[0, 13] == 9
    s.z[0, 2] = s.z[0, 13] + 4.5j  # reach: 5 plus both radii (0.375 each)
    core.step(actions)
    assert s.ai_target[0, 13] == 2
