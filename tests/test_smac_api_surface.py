"""The smac drop-in's API surface: smac's and smacv2's names, shapes, types and semantics, and the constructor
arguments that pymarl, EPyMARL and smacv2 pass."""
import re
from typing import Any

import numpy as np
import pytest

import envs
from core.errors import UserError
from envs.smac import StarCraft2Env
from envs.smac.compat.api import get_map_params, get_smacv2_map_params
from envs.smac.unit_view import AgentCommand, Direction, Point, UnitView

# pymarl src/config/envs/sc2.yaml env_args (oxwhirl/pymarl)
PYMARL_SC2 = {"continuing_episode": False, "difficulty": "7", "game_version": None, "map_name": "3m",
              "move_amount": 2, "obs_all_health": True, "obs_instead_of_state": False, "obs_last_action": False,
              "obs_own_health": True, "obs_pathing_grid": False, "obs_terrain_height": False,
              "obs_timestep_number": False, "reward_death_value": 10, "reward_defeat": 0,
              "reward_negative_scale": 0.5, "reward_only_positive": True, "reward_scale": True,
              "reward_scale_rate": 20, "reward_sparse": False, "reward_win": 200, "replay_dir": "",
              "replay_prefix": "", "state_last_action": True, "state_timestep_number": False, "step_mul": 8,
              "debug": False}
# EPyMARL's differs in state_last_action and adds seed and the heuristic flags
EPYMARL_SC2 = {**PYMARL_SC2, "state_last_action": False, "seed": 0, "heuristic_ai": False, "heuristic_rest": False}
# smacv2 StarCraft2Env keywords at their defaults (smacv2 starcraft2.py)
SMACV2_DEFAULTS: dict[str, Any] = {
    "obs_own_pos": False, "obs_starcraft": True, "conic_fov": False, "num_fov_actions": 12, "use_unit_ranges": False,
    "min_attack_range": 2, "kill_unit_step_mul": 2, "fully_observable": False, "capability_config": {},
    "prob_obs_enemy": 1.0, "action_mask": True}

SMAC_NAMES = ["get_state_dict", "get_obs_move_feats_size", "get_obs_enemy_feats_size", "get_obs_ally_feats_size",
              "get_obs_own_feats_size", "get_ally_num_attributes", "get_enemy_num_attributes", "get_unit_by_id",
              "unit_shoot_range", "unit_sight_range", "unit_max_cooldown", "unit_max_shield", "can_move",
              "check_bounds", "distance", "get_surrounding_points", "get_surrounding_pathing",
              "get_surrounding_height", "reward_battle", "get_agent_action", "get_agent_action_heuristic",
              "full_restart", "agents", "enemies", "last_action", "max_reward", "n_actions_no_attack", "map_x",
              "map_y", "unit_type_bits", "shield_bits_ally", "shield_bits_enemy", "get_obs", "get_obs_agent",
              "get_obs_size", "get_state", "get_state_size", "get_avail_actions", "get_avail_agent_actions",
              "get_total_actions", "get_env_info", "get_stats", "get_visibility_matrix", "get_unit_types", "seed",
              "render", "close", "save_replay", "reset", "step", "get_unit_type_id", "force_restarts",
              "n_obs_pathing", "n_obs_height", "pathing_grid", "terrain_height", "obs_last_action",
              "obs_all_health", "obs_own_health", "obs_pathing_grid", "obs_terrain_height", "obs_instead_of_state",
              "state_last_action", "state_timestep_number", "obs_timestep_number", "reward_sparse", "reward_win",
              "reward_only_positive", "reward_scale", "reward_scale_rate", "reward_death_value"]
SMACV2_NAMES = ["get_obs_feature_names", "get_state_feature_names", "get_capabilities", "get_capabilities_agent",
                "get_cap_size", "get_true_avail_agent_actions", "obs_feature_names", "state_feature_names",
                "capability_config", "obs_own_pos", "use_unit_ranges", "min_attack_range"]


def started(map_name: str = "3m", seed: int = 0, **kwargs: Any) -> StarCraft2Env:
    env = StarCraft2Env(map_name=map_name, seed=seed, **kwargs)
    env.reset()
    return env


def place(env: StarCraft2Env, unit: int, x: float, y: float) -> None:
    env.core.battle.state.z[0, unit] = complex(x, y)
    env._observe()


@pytest.mark.parametrize("map_name", ["3m", "2s3z"])
def test_every_smac_and_smacv2_name_exists(map_name):
    env = started(map_name)
    missing = [n for n in SMAC_NAMES + SMACV2_NAMES if not hasattr(env, n)]
    assert not missing
    assert (env.n_actions_no_attack, env.map_x, env.map_y) == (6, 32, 32)
    shields = {"3m": (0, 0, 0), "2s3z": (2, 1, 1)}[map_name]
    assert (env.unit_type_bits, env.shield_bits_ally, env.shield_bits_enemy) == shields


@pytest.mark.parametrize("map_name, features", [
    ("3m", (["health", "energy/cooldown", "rel_x", "rel_y"], ["health", "rel_x", "rel_y"])),
    ("2s3z", (["health", "energy/cooldown", "rel_x", "rel_y", "shield", "type_0", "type_1"],
              ["health", "rel_x", "rel_y", "shield", "type_0", "type_1"]))])
def test_env_info_names_the_state_features(map_name, features):
    env = StarCraft2Env(map_name=map_name)
    info = env.get_env_info()
    assert (info["agent_features"], info["enemy_features"]) == features
    assert (env.get_ally_num_attributes(), env.get_enemy_num_attributes()) == tuple(map(len, features))


FLAG_SETS = [{}, {"obs_last_action": True}, {"obs_timestep_number": True, "state_timestep_number": True},
             {"obs_all_health": False, "obs_own_health": False}, {"state_last_action": False},
             {"obs_instead_of_state": True}]


@pytest.mark.parametrize("map_name", ["3m", "2s3z", "MMM"])
@pytest.mark.parametrize("flags", FLAG_SETS)
def test_feature_sizes_and_names_add_up_to_obs_and_state(map_name, flags):
    env = started(map_name, **flags)
    n_en, nf_en = env.get_obs_enemy_feats_size()
    n_al, nf_al = env.get_obs_ally_feats_size()
    assert (n_en, n_al) == (env.n_enemies, env.n_agents - 1)
    assert env.get_obs_move_feats_size() + n_en * nf_en + n_al * nf_al + env.get_obs_own_feats_size() \
        == env.get_obs_size() == len(env.get_obs_feature_names()) == len(env.get_obs()[0])
    assert len(env.get_state_feature_names()) == env.get_state_size() == len(env.get_state())
    for names in (env.get_obs_feature_names(), env.get_state_feature_names()):
        assert len(set(names)) == len(names)  # no column named twice


def test_feature_names_label_the_right_columns_on_3m():
    env = started("3m", obs_timestep_number=True, state_timestep_number=True)
    names = env.get_obs_feature_names()
    assert names[:9] == ["move_action_north", "move_action_south", "move_action_east", "move_action_west",
                         "enemy_shootable_0", "enemy_distance_0", "enemy_relative_x_0", "enemy_relative_y_0",
                         "enemy_health_0"]
    assert names[19:24] == ["ally_visible_1", "ally_distance_1", "ally_relative_x_1", "ally_relative_y_1",
                            "ally_health_1"]
    assert names[-2:] == ["own_health", "timestep"]
    state = env.get_state_feature_names()
    assert state[:5] == ["ally_health_0", "ally_cooldown_0", "ally_relative_x_0", "ally_relative_y_0",
                         "ally_health_1"]
    assert state[-2:] == ["ally_last_action_2_action_8", "timestep"]
    env.step([1, 1, 1])
    obs, full = env.get_obs_agent(0, fully_observable=False), env.get_state()
    assert obs[names.index("own_health")] == 1.0 and obs[-1] == pytest.approx(1 / 60)
    with pytest.raises(UserError, match="fully_observable=True is not supported"):
        env.get_obs_agent(0, fully_observable=True)
    assert full[state.index("ally_last_action_2_action_1")] == 1.0 and full[-1] == pytest.approx(1 / 60)


@pytest.mark.parametrize("map_name", ["3m", "2s3z"])
@pytest.mark.parametrize("flags", [{}, {"state_timestep_number": True}, {"state_last_action": False}])
def test_state_dict_is_the_state_in_parts(map_name, flags):
    env = started(map_name, **flags)
    env.step([1] * env.n_agents)
    d = env.get_state_dict()
    assert d["allies"].shape == (env.n_agents, env.get_ally_num_attributes())
    assert d["enemies"].shape == (env.n_enemies, env.get_enemy_num_attributes())
    assert ("last_action" in d) == env.core.features.flags.state_last_action
    parts = [d["allies"].ravel(), d["enemies"].ravel()]
    if "last_action" in d:
        assert d["last_action"].shape == (env.n_agents, env.n_actions)
        parts.append(d["last_action"].ravel())
    if "timestep" in d:
        assert isinstance(d["timestep"], float) and d["timestep"] == pytest.approx(1 / env.episode_limit)
        parts.append([d["timestep"]])
    np.testing.assert_array_equal(np.concatenate(parts).astype(np.float32), env.get_state())
    # with obs_instead_of_state the dict still describes the units
    other = started(map_name, obs_instead_of_state=True, **flags)
    other.step([1] * env.n_agents)
    assert other.get_state_size() == other.n_agents * other.get_obs_size()
    np.testing.assert_array_equal(other.get_state_dict()["allies"], d["allies"])


@pytest.mark.parametrize("map_name", ["3m", "2s3z"])
def test_unit_views_agree_with_the_state(map_name):
    env = started(map_name)
    env.step([1] * env.n_agents)
    agents, enemies, d = env.agents, env.enemies, env.get_state_dict()
    assert list(agents) == list(range(env.n_agents)) and list(enemies) == list(range(env.n_enemies))
    assert all(isinstance(u, UnitView) and isinstance(u.pos, Point) for u in [*agents.values(), *enemies.values()])
    assert env.get_unit_by_id(1) == agents[1] and agents[1].owner == 1 and enemies[0].owner == 2
    np.testing.assert_allclose([u.health / u.health_max for u in agents.values()], d["allies"][:, 0], rtol=1e-6)
    np.testing.assert_allclose([(u.pos.x - 16) / 32 for u in enemies.values()], d["enemies"][:, 1], rtol=1e-5)
    cooldown = [u.weapon_cooldown / env.unit_max_cooldown(u) for u in agents.values()]
    np.testing.assert_allclose(cooldown, d["allies"][:, 1], rtol=1e-6)
    if map_name == "2s3z":  # agents 0-1 stalkers, 2-4 zealots (smac's order); the agents' ids are RL types'
        assert env.get_unit_types() == [env.stalker_id] * 2 + [env.zealot_id] * 3 + [74, 74, 73, 73, 73]
        assert [env.unit_max_shield(u) for u in agents.values()] == [80, 80, 50, 50, 50]
        np.testing.assert_allclose([u.shield / u.shield_max for u in agents.values()], d["allies"][:, 4])
    else:
        assert env.get_unit_types() == [env.marine_id] * 3 + [48] * 3 and env.unit_max_shield(agents[0]) is None
        assert env.unit_max_cooldown(agents[0]) == 15 and isinstance(env.unit_max_cooldown(agents[0]), int)
    assert (env.unit_shoot_range(0), env.unit_sight_range(0)) == (6, 9)
    assert all(isinstance(r, int) for r in (env.unit_shoot_range(0), env.unit_sight_range(0)))


def test_a_dead_unit_reads_health_zero_and_keeps_its_position():
    env = started("3m")
    s = env.core.battle.state
    s.alive[0, 4] = False
    s.hp[0, 4] = 0.0
    unit = env.enemies[1]
    assert unit.health == 0.0 and unit.health_max == 45.0 and unit.pos.x == pytest.approx(float(s.z[0, 4].real))


def test_unit_ranges_with_use_unit_ranges():
    env = started("smaclite_protoss_5_vs_5")
    shoot = {"stalker": 6.0, "zealot": 2.0, "colossus": 7.0}  # max(range, min_attack_range 2)
    sight = {"stalker": 10.0, "zealot": 9.0, "colossus": 10.0}
    for i, unit in env.agents.items():
        assert (env.unit_shoot_range(i), env.unit_sight_range(i)) == (shoot[unit.name], sight[unit.name])
    seer = next(i for i, u in env.agents.items() if u.name != "zealot")
    place(env, seer, 10.0, 16.0)
    place(env, env.n_agents, 19.5, 16.0)  # 9.5 away: seen with sight 10, not with smac's 9
    assert env.get_visibility_matrix()[seer, env.n_agents]
    # smac's rule: enemies by each agent's own sight range; an ally pair by the lower-numbered agent's,
    # filled both ways; never the agent itself
    agents, enemies = list(env.agents.values()), list(env.enemies.values())
    seen = np.zeros((env.n_agents, env.n_agents + env.n_enemies), bool)
    for i, a in enumerate(agents):
        for e, u in enumerate(enemies):
            seen[i, env.n_agents + e] = env.distance(*a.pos, *u.pos) < sight[a.name]
        for j in range(i + 1, env.n_agents):
            seen[i, j] = seen[j, i] = env.distance(*a.pos, *agents[j].pos) < sight[a.name]
    np.testing.assert_array_equal(env.get_visibility_matrix(), seen)


def test_moves_pathing_and_height_around_a_unit():
    env = started("3m")
    place(env, 0, 10.3, 10.7)
    place(env, 1, 10.0, 7.5)  # bottom edge of the walkable band y in [7, 25)
    place(env, 2, 1.2, 16.0)
    for i in range(3):
        unit = env.get_unit_by_id(i)
        assert [env.can_move(unit, d) for d in Direction] == [bool(v) for v in env.get_avail_agent_actions(i)[2:6]]
    assert not env.can_move(env.get_unit_by_id(1), Direction.SOUTH)
    unit = env.get_unit_by_id(0)
    assert env.get_surrounding_points(unit) == [(10, 14), (10, 6), (14, 10), (6, 10), (12, 12), (8, 8), (12, 8),
                                                (8, 12)]
    assert env.get_surrounding_points(unit, include_self=True)[-1] == (10, 10)
    assert env.get_surrounding_pathing(unit) == [1, 0, 1, 1, 1, 1, 1, 1]  # y = 6 lies below the band
    # smac reads its height grid upside down: at (10, 6) it reads the world's (10, 25), the plateau's top
    # row (byte 191), though (10, 6) itself is void (byte 127) and not walkable
    plateau = 191 / 255
    assert env.get_surrounding_height(unit) == [plateau] * 9
    edge = env.get_unit_by_id(2)  # (1, 16): the west points lie off the map and read 1; x = 1 is blocked
    assert env.get_surrounding_pathing(edge) == [0, 0, 1, 1, 1, 1, 1, 1]
    assert env.get_surrounding_height(edge) == [plateau, plateau, plateau, 1.0, plateau, 1.0, plateau, 1.0,
                                                plateau]
    low = env.get_unit_by_id(1)  # (10, 7): its points at y 3 read the world's row 28, void
    assert env.get_surrounding_height(low)[1] == 127 / 255
    assert env.check_bounds(0, 31) and not env.check_bounds(32, 5) and not env.check_bounds(-1, 5)
    assert StarCraft2Env.distance(1, 2, 4, 6) == 5.0


def test_agent_actions_become_orders():
    env = started("3m")
    place(env, 0, 10.0, 16.0)
    place(env, 3, 14.0, 16.0)  # enemy 0 in range of agent 0
    x, y = env.agents[0].pos
    assert env.get_agent_action(0, 1) == AgentCommand("stop", 0)
    assert env.get_agent_action(0, 2) == AgentCommand("move", 0, target_pos=Point(x, y + 2))
    assert env.get_agent_action(0, 5) == AgentCommand("move", 0, target_pos=Point(x - 2, y))
    assert env.get_agent_action(0, 6) == AgentCommand("attack", 0, target_tag=3)
    with pytest.raises(ValueError, match=r"agent 0 cannot perform action 0; available: \[1, 2, 3, 4, 5, 6"):
        env.get_agent_action(0, 0)
    with pytest.raises(AssertionError, match="cannot perform"):  # smac asserts, in get_agent_action and step
        env.step([0, 1, 1])
    with pytest.raises(ValueError, match=r"agent_id must lie in \[0, 3\), got 3"):
        env.get_unit_by_id(3)
    order, number = env.get_agent_action_heuristic(0, 0)  # the nearest enemy
    assert (order, number) == (AgentCommand("attack", 0, target_tag=3), 6)
    env.heuristic_rest = True  # within the available actions: agent 2 is far away, so it moves toward it
    place(env, 2, 2.0, 16.0)
    _, number = env.get_agent_action_heuristic(2, 0)
    assert env.get_avail_agent_actions(2)[number] == 1 and number == 4  # east


def test_a_medivac_heals_allies_and_a_dead_agent_no_ops():
    env = started("MMM")
    medivac = next(i for i, u in env.agents.items() if u.name == "medivac")
    target = next(j for j in range(env.n_enemies) if env.get_avail_agent_actions(medivac)[6 + j])
    assert env.get_agent_action(medivac, 6 + target) == AgentCommand("heal", medivac, target_tag=target)
    env.core.battle.state.alive[0, 0] = False
    env._observe()
    assert env.get_agent_action(0, 0) is None


def test_reward_battle_max_reward_and_last_action():
    env = StarCraft2Env(map_name="3m", seed=0)
    assert env.max_reward == 3 * 10 + 200 and env.agents == {}  # before the first reset, as smac
    env.reset()
    assert env.max_reward == 3 * 10 + 200 + 3 * 45 and env.reward_battle() == 0.0
    assert (env.last_action == 0).all() and env.last_action.shape == (3, 9)
    env.step([1, 2, 1])
    np.testing.assert_array_equal(env.last_action.argmax(1), [1, 2, 1])
    assert (env.last_action.sum(1) == 1).all()
    wins = 0
    for seed in range(6):  # SMAC's heuristic_ai wins most 3m battles
        env = started("3m", heuristic_ai=True, seed=seed)
        total, terminated, info = 0.0, False, dict[str, Any]()
        while not terminated:
            reward, terminated, info = env.step([0, 0, 0])
            bonus = 200.0 if info["battle_won"] else 0.0
            assert reward == pytest.approx((env.reward_battle() + bonus) / (env.max_reward / 20), abs=1e-9)
            total += env.reward_battle()
        if info["battle_won"]:
            wins += 1
            assert total == pytest.approx(3 * 45 + 3 * 10, rel=1e-4)  # every enemy's health and kill
    assert wins >= 1
    sparse = started("3m", reward_sparse=True)
    sparse.step([1, 1, 1])
    assert sparse.reward_battle() == 0.0


def test_resets_before_the_first_episode_ends_count_the_enemies_again_as_smac_does():
    env = started("3m", heuristic_ai=True, seed=1)
    env.reset()  # smac's init_units adds the enemies' health at each reset until an episode has ended
    assert env.max_reward == 3 * 10 + 200 + 2 * 3 * 45
    terminated = False
    while not terminated:  # the rewards are scaled by that max_reward
        reward, terminated, info = env.step([0, 0, 0])
        bonus = 200.0 if info["battle_won"] else 0.0
        assert reward == pytest.approx((env.reward_battle() + bonus) / (env.max_reward / 20), abs=1e-9)
    env.reset()
    assert env.max_reward == env.core.max_reward == 3 * 10 + 200 + 2 * 3 * 45  # the core scales the rewards


def test_full_restart_counts_a_restart_and_ends_the_episode():
    env = started("3m")
    env.full_restart()
    assert env.get_stats()["restarts"] == env.force_restarts == 1
    with pytest.raises(RuntimeError, match="call reset"):
        env.step([1, 1, 1])
    env.reset()
    env.step([1, 1, 1])


@pytest.mark.parametrize("map_name, caps", [("3m", np.zeros(0)), ("2s3z", [1, 0, 1, 0, 0, 1, 0, 1, 0, 1])])
def test_smacv2_capabilities_and_true_avail(map_name, caps):
    env = started(map_name)
    assert env.get_cap_size() == env.unit_type_bits
    assert env.get_capabilities().dtype == np.float32
    np.testing.assert_array_equal(env.get_capabilities(), caps)
    if env.unit_type_bits:
        np.testing.assert_array_equal(env.get_capabilities_agent(2), [0, 1])
    assert [env.get_true_avail_agent_actions(i) for i in range(env.n_agents)] == env.get_avail_actions()
    obs, state = env.reset(episode_config={})
    assert len(obs) == env.n_agents and state.shape == (env.get_state_size(),)
    with pytest.raises(UserError, match=r"reset\(episode_config\) with keys \['team_gen'\]: .* has fixed teams"):
        env.reset(episode_config={"team_gen": {"ally_team": ["marine"] * 3}})


def test_smacv2_episode_config_sets_teams_and_start_positions():
    """smacv2's wrapper passes each episode's drawn teams and positions to reset(); allies are then numbered by
    (unit type, x, y) as smacv2 numbers them."""
    env = StarCraft2Env(map_name="smaclite_protoss_5_vs_5", seed=0)
    allies = np.array([[9.0, 16.0], [8.0, 17.0], [8.0, 16.0], [10.0, 16.0], [9.5, 15.0]])
    config = {"team_gen": {"ally_team": ["zealot", "zealot", "stalker", "colossus", "zealot"],
                           "enemy_team": ["stalker"] * 5, "id": 0},
              "ally_start_positions": {"item": allies, "id": 0},
              "enemy_start_positions": {"item": np.array([[24.0, 14.0 + i] for i in range(5)]), "id": 0}}
    env.reset(episode_config=config)
    units = [env.get_unit_by_id(i) for i in range(5)]
    ids = env.core.battle.roster.type_names
    assert [ids[k] for k in env.core.battle.stats.kind[0, :5]] == ["colossus", "stalker", "zealot", "zealot", "zealot"]
    assert [(u.pos.x, u.pos.y) for u in units] == [(10.0, 16.0), (8.0, 16.0), (8.0, 17.0), (9.0, 16.0), (9.5, 15.0)]
    assert [env.enemies[j].pos.x for j in range(5)] == [24.0] * 5
    assert all(env.enemies[j].unit_type == env.enemies[0].unit_type for j in range(5))
    env.reset(episode_config={"team_gen": {"ally_team": ["stalker"] * 5, "enemy_team": ["zealot"] * 5, "id": 1}})
    assert [ids[k] for k in env.core.battle.stats.kind[0]] == ["stalker"] * 5 + ["zealot"] * 5  # positions drawn


@pytest.mark.parametrize("config, error", [
    ({"attack": {"item": [0.5] * 5}}, r"keys \['attack'\] are not simulated"),
    ({"team_gen": {"ally_team": ["marine"] * 5, "enemy_team": ["zealot"] * 5}}, r"ally_team .* must name 5 units of"),
    ({"team_gen": {"ally_team": ["zealot"] * 4}}, r"ally_team .* must name 5 units"),
    ({"enemy_start_positions": {"item": [[1.0, 2.0]] * 4}}, r"enemy_start_positions item must be 5 finite"),
    ({"ally_start_positions": {"item": [["a", "b"]] * 5}}, r"ally_start_positions item must be 5 finite"),
    ({"ally_start_positions": {"id": 0}}, r"ally_start_positions item must be 5 finite"),
    ({"team_gen": ["zealot"] * 5}, r"team_gen must be a mapping"),
])
def test_smacv2_episode_config_bad_input_is_one_error(config, error):
    env = StarCraft2Env(map_name="smaclite_protoss_5_vs_5", seed=0)
    with pytest.raises(UserError, match=error):
        env.reset(episode_config=config)


@pytest.mark.parametrize("env_args, state", [(PYMARL_SC2, 48), (EPYMARL_SC2, 21)])
def test_stock_pymarl_and_epymarl_env_args_are_accepted(env_args, state):
    env = StarCraft2Env(**env_args)
    assert (env.get_obs_size(), env.get_state_size(), env.n_actions) == (30, state, 9)
    env.reset()
    env.step([1, 1, 1])


def test_smacv2_keys_are_accepted_at_their_defaults_and_rejected_otherwise():
    env = StarCraft2Env(map_name="3m", **SMACV2_DEFAULTS)
    assert env.get_obs_size() == 30
    env.reset()
    rejected: dict[str, Any] = {"conic_fov": True,
                                "prob_obs_enemy": 0.0, "action_mask": False, "fully_observable": True}
    for key, value in rejected.items():
        with pytest.raises(UserError, match="^" + re.escape(f"{key}={value!r} is not supported")) as err:
            StarCraft2Env(map_name="3m", **{key: value})
        assert len(str(err.value).splitlines()) == 1
    with pytest.raises(UserError, match=r"capability_config with keys \['n_units', 'team_gen'\]"):
        StarCraft2Env(map_name="3m", capability_config={"n_units": 3, "team_gen": {}})
    # the PettingZoo face takes them too
    envs.make("smac_3m", obs_pathing_grid=False, capability_config={}, conic_fov=False)


def test_info_counts_the_dead_over_the_whole_episode():
    """smac's info dead_allies/dead_enemies count every unit dead so far, not this step's deaths; the
    PettingZoo face passes the same counts on."""
    env = started("3m")
    counts, terminated = [], False
    while not terminated:  # allies that only stop lose, one by one
        _, terminated, info = env.step([1 if a else 0 for a in (u.health > 0 for u in env.agents.values())])
        counts.append(info["dead_allies"])
        assert info["dead_allies"] == sum(u.health == 0 for u in env.agents.values())
    assert counts == sorted(counts) and counts[-1] == 3
    par = envs.make("smac_3m", seed=0)
    par.reset(seed=0)
    infos: dict = {}
    while par.agents:  # the agents still in the episode are alive: they can stop
        _, _, _, _, infos = par.step({a: 1 for a in par.agents})
    assert {i["dead_allies"] for i in infos.values()} == {3}  # the last ally to die sees all three dead


def test_every_face_accepts_the_engine_settings_and_only_default_smacv2_keys():
    """pymarl's sc2.yaml engine keys pass the vector env (what `env.KEY=VALUE` on the command line reaches) as
    they pass the drop-in; smacv2's unsupported settings fail the same way in both."""
    keys: dict[str, Any] = {"step_mul": 8, "move_amount": 2, "difficulty": "7", "game_version": None,
                            "conic_fov": False}
    assert envs.make_vec("smac_3m", n_envs=2, **keys).spec.groups[0].obs_shape == (30,)
    for face in (lambda: envs.make_vec("smac_3m", n_envs=2, conic_fov=True),
                 lambda: StarCraft2Env(map_name="3m", conic_fov=True)):
        with pytest.raises(UserError, match=r"^conic_fov=True is not supported"):
            face()


def test_draws_count_timeouts_as_smac_does():
    env = started("3m", episode_limit=3)
    for _ in range(3):
        _, terminated, _ = env.step([1, 1, 1])
    stats = env.get_stats()
    assert terminated and stats["battles_draw"] == stats["timeouts"] == stats["battles_game"] == 1


def test_option_attributes_terrain_and_unit_type_ids():
    env = started("2s3z", obs_all_health=True, obs_own_health=False, obs_pathing_grid=True)
    # set from the options in effect, as smac sets them (obs_all_health turns obs_own_health on)
    options = {name: getattr(env, name) for name in ("obs_pathing_grid", "obs_terrain_height", "reward_win")}
    assert env.obs_own_health and options == {"obs_pathing_grid": True, "obs_terrain_height": False, "reward_win": 200}
    assert (env.n_obs_pathing, env.n_obs_height) == (8, 9)
    assert env.pathing_grid.shape == env.terrain_height.shape == (32, 32) and env.pathing_grid.dtype == bool
    unit = env.get_unit_by_id(2)  # 2s3z: stalkers then zealots; the one-hot is [stalker, zealot]
    assert (env.get_unit_type_id(env.get_unit_by_id(0), True), env.get_unit_type_id(unit, True)) == (0, 1)
    assert "cap_shape" not in env.get_env_info() and env.get_cap_size() == 2  # smacv2's key, not smac's


@pytest.mark.parametrize("key, value", [("step_mul", 4), ("move_amount", 3)])
def test_engine_settings_the_simulator_fixes_are_errors_off_their_default(key, value):
    default: dict[str, Any] = {key: PYMARL_SC2[key]}
    StarCraft2Env(map_name="3m", **default)
    with pytest.raises(UserError, match=f"{key}={value} is not supported"):
        StarCraft2Env(map_name="3m", **{**default, key: value})


# smac's own numbering (starcraft2.py): enemies keep SC2's unit-type ids and get_unit_type_id maps them per map
# type; the agents are the map's RL unit types, consecutive in alphabetical order from _min_unit_type
SMAC_ENEMY_TYPE_ID = {"stalkers_and_zealots": lambda t: t - 73,
                      "colossi_stalkers_zealots": lambda t: {4: 0, 74: 1}.get(t, 2),
                      "bane": lambda t: 0 if t == 9 else 1,
                      "MMM": lambda t: {51: 0, 48: 1}.get(t, 2)}
SMAC_MAX_COOLDOWN = {"marine": 15, "marauder": 25, "medivac": 200, "stalker": 35, "zealot": 22, "colossus": 24,
                     "hydralisk": 10, "zergling": 11, "baneling": 1}


@pytest.mark.parametrize("map_name, ally_types", [
    ("3m", ["marine"]), ("2s3z", ["stalker", "zealot"]), ("MMM", ["marauder", "marine", "medivac"]),
    ("1c3s5z", ["colossus", "stalker", "zealot"]), ("bane_vs_bane", ["baneling", "zergling"]),
    ("6h_vs_8z", ["hydralisk"])])
def test_unit_type_ids_follow_smacs_numbering(map_name, ally_types):
    """smac's feature code reads unit.unit_type: one-hot index unit_type - _min_unit_type for agents, its per-map
    table for enemies, and unit_max_cooldown keyed by the <name>_id attributes."""
    env = started(map_name)
    assert [getattr(env, f"{name}_id") for name in ally_types] == \
        list(range(env._min_unit_type, env._min_unit_type + len(ally_types)))
    assert {u.unit_type for u in env.agents.values()} == {getattr(env, f"{name}_id") for name in ally_types}
    cooldowns = {getattr(env, f"{name}_id"): value for name, value in SMAC_MAX_COOLDOWN.items()}
    for unit in env.agents.values():
        if env.unit_type_bits:
            assert unit.unit_type - env._min_unit_type == env.get_unit_type_id(unit, True)
        assert env.unit_max_cooldown(unit) == cooldowns.get(unit.unit_type, 15)
    assert [env.unit_max_cooldown(u) for u in env.enemies.values()] == [15] * env.n_enemies  # not agent types
    if env.map_type in SMAC_ENEMY_TYPE_ID:
        assert [SMAC_ENEMY_TYPE_ID[env.map_type](u.unit_type) for u in env.enemies.values()] == \
            [env.get_unit_type_id(u, False) for u in env.enemies.values()]


def test_smacs_bookkeeping_attributes():
    env = StarCraft2Env(map_name="MMM", seed=0, replay_dir="replays", window_size_x=640, obs_timestep_number=True,
                        state_timestep_number=True)
    assert (env.debug, env.replay_dir, env.replay_prefix, env.window_size) == (False, "replays", "", (640, 1200))
    assert env.renderer is None and env.last_stats is None and not env.death_tracker_ally.any()
    env.reset()
    assert env.previous_ally_units is None and not env.win_counted and not env.defeat_counted
    assert all(o.dtype == np.float64 for o in env.get_obs())  # smac appends the timestep with np.append
    assert env.get_obs_agent(0).dtype == np.float64 and env.get_state().dtype == np.float32
    assert env.last_action.dtype == np.float64 and env.get_state_dict()["allies"].dtype == np.float64
    before = env.agents
    env.step([1] * env.n_agents)
    assert env.previous_ally_units == before and env.previous_enemy_units is not None
    # smac computes the timestep in float64
    assert env.get_obs_agent(0)[-1] == env.get_state_dict()["timestep"] == 1 / env.episode_limit
    s = env.core.battle.state
    s.alive[0, 3] = s.alive[0, env.n_agents] = False
    assert env.death_tracker_ally.tolist() == [0, 0, 0, 1] + [0] * 6
    assert env.death_tracker_enemy[0] == 1 and env.death_tracker_enemy.sum() == 1
    # MMM: agent 9 and one enemy (its slot drawn at the reset) are the medivacs
    assert not env.only_medivac_left(ally=True) and not env.only_medivac_left(ally=False)
    s.alive[0, : env.n_agents - 1] = False
    s.alive[0, env.n_agents:] = env.core.battle.stats.is_medivac[0, env.n_agents:]
    assert env.only_medivac_left(ally=True) and env.only_medivac_left(ally=False)
    assert not started("3m").only_medivac_left(ally=True)
    sparse = started("3m", reward_sparse=True)  # smac updates its trackers only for the dense reward
    sparse.core.battle.state.alive[0, 0] = False
    assert not sparse.death_tracker_ally.any()


# smac's map_param_registry (smac/env/starcraft2/maps/smac_maps.py): agents, enemies, limit, races, type bits, type
SMAC_MAP_PARAMS = {
    "3m": (3, 3, 60, "TT", 0, "marines"), "8m": (8, 8, 120, "TT", 0, "marines"),
    "25m": (25, 25, 150, "TT", 0, "marines"), "5m_vs_6m": (5, 6, 70, "TT", 0, "marines"),
    "8m_vs_9m": (8, 9, 120, "TT", 0, "marines"), "10m_vs_11m": (10, 11, 150, "TT", 0, "marines"),
    "27m_vs_30m": (27, 30, 180, "TT", 0, "marines"), "MMM": (10, 10, 150, "TT", 3, "MMM"),
    "MMM2": (10, 12, 180, "TT", 3, "MMM"), "2s3z": (5, 5, 120, "PP", 2, "stalkers_and_zealots"),
    "3s5z": (8, 8, 150, "PP", 2, "stalkers_and_zealots"), "3s5z_vs_3s6z": (8, 9, 170, "PP", 2, "stalkers_and_zealots"),
    "3s_vs_3z": (3, 3, 150, "PP", 0, "stalkers"), "3s_vs_4z": (3, 4, 200, "PP", 0, "stalkers"),
    "3s_vs_5z": (3, 5, 250, "PP", 0, "stalkers"), "1c3s5z": (9, 9, 180, "PP", 3, "colossi_stalkers_zealots"),
    "2m_vs_1z": (2, 1, 150, "TP", 0, "marines"), "corridor": (6, 24, 400, "PZ", 0, "zealots"),
    "6h_vs_8z": (6, 8, 150, "ZP", 0, "hydralisks"), "2s_vs_1sc": (2, 1, 300, "PZ", 0, "stalkers"),
    "so_many_baneling": (7, 32, 100, "PZ", 0, "zealots"), "bane_vs_bane": (24, 24, 200, "ZZ", 2, "bane"),
    "2c_vs_64zg": (2, 64, 400, "PZ", 0, "colossus")}


def test_map_params_are_smacs():
    for name, (n_agents, n_enemies, limit, races, bits, map_type) in SMAC_MAP_PARAMS.items():
        params = {"n_agents": n_agents, "n_enemies": n_enemies, "limit": limit, "a_race": races[0],
                  "b_race": races[1], "unit_type_bits": bits, "map_type": map_type}
        assert get_map_params(name) == params
        assert get_smacv2_map_params(name) == {**params, "map_name": name}  # smacv2 adds the map file's name
        assert StarCraft2Env(map_name=name).map_type == map_type
    assert get_smacv2_map_params("10gen_zerg")["map_name"] == "32x32_flat"


def test_obs_starcraft_false_leaves_the_time_alone():
    """smacv2's obs_starcraft=False with obs_timestep_number: each agent sees t / limit and nothing else, dead or
    alive (the SMACv2 paper's open-loop test); the state is untouched; without the timestep it is refused."""
    env = StarCraft2Env(map_name="3m", obs_starcraft=False, obs_timestep_number=True)
    full = StarCraft2Env(map_name="3m")
    assert env.get_obs_size() == 1 and env.get_state_size() == full.get_state_size()
    assert env.get_obs_feature_names() == ["timestep"]
    env.reset()
    for step in range(1, 4):
        env.step([1, 1, 1])
        np.testing.assert_allclose(np.array(env.get_obs()), np.full((3, 1), step / env.episode_limit))
    with pytest.raises(UserError, match="set obs_timestep_number=true too"):
        StarCraft2Env(map_name="3m", obs_starcraft=False)
