"""The real maps' terrain: walkable grids and heights as the map files hold them, spawns on walkable ground,
walls that stop units, paths around obstacles, and smac's pathing/height observation features."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from envs.smac import StarCraft2Env
from envs.smac.batch import SMACBatch
from envs.smac.battle import WALK_PLANE
from envs.smac.features import FeatureFlags
from envs.smac.maps import MAPS, get_map
from envs.smac.pathing import build_paths
from envs.smac.roster import FixedRoster
from envs.smac.scenarios import MAP_FILE, SCENARIOS
from envs.smac.terrain import load_terrain, map_files

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "smac_maps"  # the extracted map data, where this checkout has it

# walkable cells and bounding box (x0, x1, y0, y1 inclusive) of each kind of map (shared/smac_maps/README.md)
LAYOUTS = {"3m": (504, (2, 29, 7, 24)), "MMM2": (504, (2, 29, 7, 24)), "3s_vs_5z": (784, (2, 29, 2, 29)),
           "32x32_flat": (784, (2, 29, 2, 29)), "2m_vs_1z": (444, (5, 26, 5, 26)), "corridor": (418, None),
           "6h_vs_8z": (212, None), "so_many_baneling": (394, None), "2c_vs_64zg": (408, None),
           "2s_vs_1sc": (232, None), "bane_vs_bane": (444, (5, 26, 5, 26))}


def test_every_map_and_scenario_has_its_map_files_terrain():
    assert set(MAPS) | {MAP_FILE} <= set(map_files())
    assert len(map_files()) == 28  # the 23 SMAC maps and smacv2's 5 base maps
    for name, (cells, box) in LAYOUTS.items():
        walk = load_terrain(name).walkable
        assert walk.sum() == cells, name
        if box is not None:
            xs, ys = np.nonzero(walk)
            assert (xs.min(), xs.max(), ys.min(), ys.max()) == box, name


@pytest.mark.skipif(not SOURCE.is_dir(), reason="the extracted map data (../shared/smac_maps) is not beside this "
                    "checkout")
@pytest.mark.parametrize("name", map_files())
def test_grids_equal_the_extracted_map_data(name):
    source = json.loads((SOURCE / f"{name}.json").read_text())
    terrain = load_terrain(name)
    assert terrain.walkable.T.tolist() == [[c == "1" for c in row] for row in source["walkable"]]
    # cliff walkers: every cell above the void, 2 cells or more from the map's edges
    inside = np.zeros((32, 32), bool)
    inside[2:30, 2:30] = True
    above_void = np.array([[c != "0" for c in row] for row in source["cliff_level"]]).T
    assert (terrain.cliff_walkable == (above_void & inside)).all()
    assert np.allclose(terrain.height.T, source["terrain_height"], atol=6e-4)


def test_only_2c_vs_64zg_has_cliffs_that_the_colossus_alone_crosses():
    for name in map_files():
        terrain = load_terrain(name)
        assert (terrain.cliff_walkable >= terrain.walkable).all(), name
        if name != "2c_vs_64zg":
            assert (terrain.cliff_walkable == terrain.walkable).all(), name
    terrain = load_terrain("2c_vs_64zg")
    extra = terrain.cliff_walkable & ~terrain.walkable
    assert extra[5:27, 12].all()  # the foot of the plateau's south cliff
    assert extra.sum() == 36  # and the ramps' side walls


def test_a_colossus_walks_down_the_cliff_that_zerglings_go_around():
    """2c_vs_64zg: a colossus ordered south from the plateau goes straight down its cliff (the Colossus mover
    walks cliffs), where a ground unit's grid is blocked; the zerglings take the ramps (the test below)."""
    core = SMACBatch(get_map("2c_vs_64zg"), 1, seed=0, flags=FeatureFlags())
    core.reset(np.ones(1, bool))
    battle, a = core.battle, core.n_agents
    battle.state.alive[0, a:] = False  # no enemies in the way
    battle.state.hp[0, a:] = 0.0
    start = battle.state.z[0, 0]
    assert start.imag > 13  # on the plateau, above the cliff foot at y 12
    x, foot = np.array([start.real]), np.array([12.5])
    assert not battle.walkable(x, foot)[0] and battle.walkable(x, foot, WALK_PLANE)[0]
    for _ in range(5):
        battle.step(np.full((1, a), 3))  # action 3: move south
    z = battle.state.z[0, 0]
    assert z.imag < 11 and abs(z.real - start.real) < 1e-3  # across the cliff in a straight line


def test_heights_are_held_upside_down_as_smac_holds_them():
    """On 2c_vs_64zg the level-2 plateau (byte 207) spans world y 13-20: smac's [x, j] is world (x, 31 - j)."""
    height = load_terrain("2c_vs_64zg").height
    assert height[16, 31 - 16] == 207 / 255  # world (16, 16): on the plateau
    assert height[16, 31 - 8] == 191 / 255  # world (16, 8): the low ground around it
    assert height[16, 19] == 191 / 255  # world (16, 12), the cliff foot, though world (16, 19) is plateau


@pytest.mark.parametrize("name", sorted(MAPS))
def test_units_spawn_on_walkable_ground(name):
    walk = load_terrain(get_map(name).map_file or name).walkable
    cells = np.floor(FixedRoster(get_map(name)).positions).astype(int)
    assert walk[cells[:, 0], cells[:, 1]].all()


def test_generated_scenarios_start_every_unit_on_walkable_ground():
    walk = load_terrain(MAP_FILE).walkable
    for name in ("smaclite_protoss_5_vs_5", "smaclite_zerg_10_vs_11"):
        _, roster, _ = SCENARIOS[name].build()
        _, positions = roster.sample(np.random.default_rng(0), 200)
        cells = np.floor(positions).astype(int)
        assert walk[cells[..., 0], cells[..., 1]].all()


def test_a_unit_ordered_into_a_wall_stops_at_it():
    core = SMACBatch(get_map("3m"), 1, seed=0, flags=FeatureFlags())
    core.reset(np.ones(1, bool))
    south = np.full((1, 3), 3)  # action 3: move south, into the void below y = 7
    for _ in range(20):
        core.step(np.where(core.observe()[2][..., 3], south, 1))
    y = core.battle.state.z[0, :3].imag
    assert (y >= 7.0).all() and (y < 8.0).all()  # at the band's edge, not through it


def test_units_walk_around_obstacles_to_their_goal():
    """2c_vs_64zg's zerglings attack-move from the low ground to the colossi's plateau: the straight line
    crosses the cliff, so they must take a ramp. None of them stands off the walkable cells on the way, and
    the first arrives within the episode."""
    core = SMACBatch(get_map("2c_vs_64zg"), 1, seed=0, flags=FeatureFlags())
    core.reset(np.ones(1, bool))
    battle, a = core.battle, core.n_agents
    battle.state.alive[0, :a] = False  # no allies: nothing to fight on the way
    battle.state.hp[0, :a] = 0.0
    walk = load_terrain("2c_vs_64zg").walkable
    goal = battle.state.attack_point[0]
    paths = battle.paths
    assert paths is not None
    start = paths.node[np.floor(battle.state.z[0, a:].real).astype(int) * 32
                       + np.floor(battle.state.z[0, a:].imag).astype(int)]
    assert not paths.visible[start, paths.node[int(goal.real) * 32 + int(goal.imag)]].any()
    closest = np.inf
    for _ in range(60):
        battle.step(np.zeros((1, a), np.int64))
        z = battle.state.z[0, a:]
        assert walk[np.floor(z.real).astype(int), np.floor(z.imag).astype(int)].all()
        closest = min(closest, float(np.abs(z - goal).min()))
    assert closest < 1.0


def test_paths_turn_corners_and_go_straight_in_the_open():
    walk = np.zeros((32, 32), bool)
    walk[2:10, 2:30] = True  # an L: a vertical arm x 2-9 and a horizontal arm y 2-9
    walk[2:30, 2:10] = True
    paths = build_paths(walk)
    start, goal = np.complex64(5.5 + 25.5j), np.complex64(25.5 + 5.5j)
    head = paths.heading(np.array([start]), np.array([goal]))[0]
    assert head != goal and head.real < 10 and head.imag < 10  # the corner first
    near = np.complex64(5.5 + 20.5j)
    assert paths.heading(np.array([start]), np.array([near]))[0] == near  # in sight: straight


def test_pathing_and_height_observations_are_smacs_surrounding_values():
    plain = StarCraft2Env(map_name="2c_vs_64zg", seed=0)
    env = StarCraft2Env(map_name="2c_vs_64zg", seed=0, obs_pathing_grid=True, obs_terrain_height=True)
    assert env.get_obs_size() == plain.get_obs_size() + 8 + 9
    assert env.get_obs_move_feats_size() == 4 + 8 + 9
    assert len(env.get_obs_feature_names()) == env.get_obs_size()
    assert env.get_obs_feature_names()[4:6] == ["pathing_grid_0", "pathing_grid_1"]
    env.reset()
    plain.reset()
    for i in range(env.n_agents):
        obs, unit = env.get_obs_agent(i), env.get_unit_by_id(i)
        assert obs[4:12].tolist() == env.get_surrounding_pathing(unit)
        assert np.allclose(obs[12:21], env.get_surrounding_height(unit))
        assert np.array_equal(np.delete(obs, np.s_[4:21]), plain.get_obs_agent(i))
    # the colossi start on the plateau: their own cell reads level 2 (byte 207) in smac's flipped layout
    x, y = (int(v) for v in env.get_unit_by_id(0).pos)
    assert env.get_surrounding_height(env.get_unit_by_id(0))[-1] == load_terrain("2c_vs_64zg").height[x, y]


def test_the_spine_crawler_outranges_stalkers_that_only_attack():
    """2s_vs_1sc: the structure never moves; two stalkers that just attack it (SMAC's heuristic) hurt it but
    lose, as the SMAC paper's heuristic does (0%): winning takes turns at drawing its fire."""
    env = StarCraft2Env(map_name="2s_vs_1sc", seed=0, heuristic_ai=True)
    assert (env.get_env_info()["n_actions"], env.get_obs_size(), env.get_state_size()) == (7, 17, 27)
    env.reset()
    state = env.core.battle.state
    start = state.z[0, 2]
    for _ in range(300):
        _, done, info = env.step([1, 1])  # ignored: the heuristic plays
        assert state.z[0, 2] == start
        if done:
            break
    assert done and not info["battle_won"] and 0 < env.enemies[0].health < 300


def test_the_map_import_rejects_a_broken_map_file_with_one_line(tmp_path):
    """scripts/import_smac_maps.py: a malformed source file is an `error:` line and exit status 2, before any
    map is written."""
    (tmp_path / "3m.json").write_text('{"map": "3m", "walkable": []}')
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "import_smac_maps.py"), str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr.startswith("error: ") and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
