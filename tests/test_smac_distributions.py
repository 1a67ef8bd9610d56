"""smacv2's episode distributions (envs.smac.compat.distributions) against smacv2's definitions, and the
scenario's own draws against them."""
import math
from collections import Counter
from typing import Any

import numpy as np
import pytest

from core.errors import UserError
from envs.smac.compat.api import SMACv2Env, StarCraftCapabilityEnvWrapper
from envs.smac.compat.distributions import get_distribution

TERRAN = {"dist_type": "weighted_teams", "unit_types": ["marine", "marauder", "medivac"], "weights": [0.45, 0.45, 0.1],
          "exception_unit_types": ["medivac"], "env_key": "team_gen", "n_units": 10, "n_enemies": 11}
POSITIONS = {"dist_type": "surrounded_and_reflect", "p": 0.5, "map_x": 32, "map_y": 32, "n_units": 10, "n_enemies": 11}


def draws(key: str, config: dict[str, Any], n: int = 2000) -> list[dict[str, Any]]:
    dist = get_distribution(key)(config, seed=0)
    return [dist.generate() for _ in range(n)]


def test_weighted_teams_follow_the_weights_and_extend_the_enemy_team():
    teams = [d["team_gen"] for d in draws("weighted_teams", TERRAN)]
    assert all(len(t["ally_team"]) == 10 and len(t["enemy_team"]) == 11 for t in teams)
    assert all(t["enemy_team"][:10] == t["ally_team"] for t in teams)
    assert not any(set(t["ally_team"]) == {"medivac"} or set(t["enemy_team"][10:]) == {"medivac"} for t in teams)
    counts = Counter(u for t in teams for u in t["ally_team"])
    assert counts["medivac"] / 20_000 == pytest.approx(0.1, abs=0.01)
    fewer = draws("weighted_teams", {**TERRAN, "n_enemies": 3}, 50)
    assert all(d["team_gen"]["enemy_team"] == d["team_gen"]["ally_team"][:3] for d in fewer)


def test_positions_are_surrounded_or_reflected():
    surrounded = reflected = 0
    for d in draws("surrounded_and_reflect", POSITIONS):
        allies, enemies = d["ally_start_positions"]["item"], d["enemy_start_positions"]["item"]
        assert allies.shape == (10, 2) and enemies.shape == (11, 2)
        if (allies == 16.0).all():  # surrounded: enemy groups on the diagonals, between a corner and centre +- 2
            surrounded += 1
            offset = enemies - 16.0
            assert np.allclose(np.abs(offset[:, 0]), np.abs(offset[:, 1])) and (np.abs(offset) >= 2 - 1e-9).all()
            # 1-4 groups of consecutive enemies, each group on its own diagonal
            groups = [tuple(p) for i, p in enumerate(enemies) if i == 0 or (p != enemies[i - 1]).any()]
            assert len(groups) == len(set(groups)) <= 4
            assert len({tuple(np.sign(np.array(g) - 16.0)) for g in groups}) == len(groups)
        else:  # reflected in x = 16; the extra enemies anywhere in the right half
            reflected += 1
            assert (allies[:, 0] < 15).all()
            np.testing.assert_allclose(enemies[:10], np.stack([32 - allies[:, 0], allies[:, 1]], 1))
            assert (enemies[10:, 0] >= 16).all()
    assert surrounded / 2000 == pytest.approx(0.5, abs=0.05) and surrounded + reflected == 2000


def test_the_other_distributions():
    fixed = get_distribution("fixed")({"env_key": "team_gen", "test_mode": True, "items": [["a"], ["b"], ["c"]]})
    assert [fixed.generate()["team_gen"]["id"] for _ in range(4)] == [0, 1, 2, 0] and fixed.n_tasks == 3
    every = get_distribution("all_teams")({"env_key": "team_gen", "unit_types": ["x", "y", "z"], "n_units": 4,
                                           "exception_unit_types": ["z"]}, seed=0)
    assert every.n_tasks == math.comb(3 + 4 - 1, 4)
    teams = [every.generate()["team_gen"] for _ in range(300)]
    assert all(len(t["ally_team"]) == 4 and t["enemy_team"] == t["ally_team"] for t in teams)
    assert all(set(t["ally_team"]) != {"z"} for t in teams) and len({t["id"] for t in teams}) == 14  # 15 - zzzz
    mask = draws("mask", {"mask_probability": 0.3, "n_units": 5, "n_enemies": 6}, 500)
    assert np.mean([1 - d["enemy_mask"]["item"] for d in mask]) == pytest.approx(0.3, abs=0.02)
    uniform = draws("per_agent_uniform", {"env_key": "attack", "n_units": 5, "lower_bound": [0.5],
                                          "upper_bound": [1.0]})
    items = np.array([d["attack"]["item"] for d in uniform])
    assert items.shape == (2000, 5, 1) and items.min() >= 0.5 and items.max() < 1.0
    with pytest.raises(UserError, match="unknown distribution 'nope'"):
        get_distribution("nope")


def test_the_scenarios_teams_are_drawn_as_weighted_teams_draws_them():
    """The wrapper leaves the drawing to the smaclite scenario; over many episodes its teams have the same unit
    mix as the distribution's."""
    config = {"n_units": 10, "n_enemies": 11, "team_gen": {k: v for k, v in TERRAN.items() if k != "env_key"},
              "start_positions": {"dist_type": "surrounded_and_reflect", "p": 0.5, "map_x": 32, "map_y": 32}}
    env = StarCraftCapabilityEnvWrapper(capability_config=config, map_name="10gen_terran", seed=0)
    assert set(env.env_key_to_distribution_map) == {"team_gen", "start_positions"}
    ours: Counter[str] = Counter()
    for _ in range(400):
        env.reset()
        ours.update(u.name for u in env.agents.values())
    drawn = Counter(u for d in draws("weighted_teams", TERRAN, 400) for u in d["team_gen"]["ally_team"])
    for unit in ("marine", "marauder", "medivac"):
        assert ours[unit] / 4000 == pytest.approx(drawn[unit] / 4000, abs=0.04)


def test_a_draw_is_an_episode_config():
    env = SMACv2Env(map_name="10gen_terran", capability_config={"n_units": 10, "n_enemies": 11}, seed=0)
    for key, config in (("weighted_teams", TERRAN), ("surrounded_and_reflect", POSITIONS)):
        draw = get_distribution(key)(config, seed=1).generate()
        env.reset(episode_config=draw)
        if "team_gen" in draw:
            assert sorted(u.name for u in env.agents.values()) == sorted(draw["team_gen"]["ally_team"])
        else:  # the agents start there, inside the walkable area (x, y in 2-29)
            np.testing.assert_array_equal(env.ally_start_positions, draw["ally_start_positions"]["item"])
            np.testing.assert_allclose(sorted([u.pos.x, u.pos.y] for u in env.agents.values()),
                                       sorted(np.clip(draw["ally_start_positions"]["item"], 2.5, 29.5).tolist()),
                                       atol=1e-5)
