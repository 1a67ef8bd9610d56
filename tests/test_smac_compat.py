"""The smac/smacv2 stand-ins (envs/smac/compat): client code that imports smac runs unchanged on the simulator,
also where the client has its own `envs` package (as pymarl and EPyMARL do), and a real install is never
shadowed silently."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.errors import UserError
from envs.smac.compat import clients_path
from envs.smac.compat.api import SMACv2Env, StarCraftCapabilityEnvWrapper, get_smacv2_map_params
from envs.smac.compat.starcraft2_env import MultiAgentEnv, StarCraft2Env

ROOT = Path(__file__).resolve().parents[1]

# pymarl's src/envs/__init__.py imports smac from inside a package called envs; its runner then plays episodes
CLIENT_ENVS = """
from functools import partial
from smac.env import MultiAgentEnv, StarCraft2Env

def env_fn(env, **kwargs) -> MultiAgentEnv:
    return env(**kwargs)

REGISTRY = {"sc2": partial(env_fn, env=StarCraft2Env)}
"""
CLIENT_MAIN = """
import numpy as np
from envs import REGISTRY

env_args = dict(continuing_episode=False, difficulty="7", game_version=None, map_name="3m", move_amount=2,
                obs_all_health=True, obs_instead_of_state=False, obs_last_action=False, obs_own_health=True,
                obs_pathing_grid=False, obs_terrain_height=False, obs_timestep_number=False,
                reward_death_value=10, reward_defeat=0, reward_negative_scale=0.5, reward_only_positive=True,
                reward_scale=True, reward_scale_rate=20, reward_sparse=False, reward_win=200, replay_dir="",
                replay_prefix="", state_last_action=True, state_timestep_number=False, step_mul=8, seed=0,
                heuristic_ai=False, debug=False)
env = REGISTRY["sc2"](**env_args)
info = env.get_env_info()
rng = np.random.default_rng(0)
for episode in range(2):
    env.reset()
    terminated, total = False, 0.0
    while not terminated:
        avail = np.array(env.get_avail_actions())
        actions = [int(rng.choice(np.flatnonzero(a))) for a in avail]
        reward, terminated, step_info = env.step(actions)
        total += reward
    print("episode", episode, round(total, 3), step_info.get("battle_won"))
import envs, smac
print("client envs:", envs.__file__)
print("shapes", info["obs_shape"], info["state_shape"], info["n_actions"])
"""


def run_client(tmp_path: Path, pythonpath: list[Path], env: dict[str, str] | None = None, main: str = CLIENT_MAIN
               ) -> subprocess.CompletedProcess[str]:
    (tmp_path / "envs").mkdir(exist_ok=True)
    (tmp_path / "envs" / "__init__.py").write_text(textwrap.dedent(CLIENT_ENVS))
    (tmp_path / "main.py").write_text(textwrap.dedent(main))
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    environ["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    return subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True,
                          env={**environ, **(env or {})}, timeout=120)


def test_a_pymarl_style_client_with_its_own_envs_package_runs_unchanged(tmp_path):
    out = run_client(tmp_path, [clients_path()])
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[-1] == "shapes 30 48 9"
    assert lines[-2] == f"client envs: {tmp_path / 'envs' / '__init__.py'}"  # the client's envs, not ours
    assert [line.split()[0] for line in lines[:2]] == ["episode", "episode"]
    assert out.stderr.splitlines() == [f"smac: Concerto's built-in StarCraft II simulator (no StarCraft II "
                                       f"binary), from {clients_path()}"]


# EPyMARL's sc2v2 path (src/envs/smacv2_wrapper.py) with its stock protoss_5_vs_5.yaml env_args: the wrapper is
# built from keyword arguments, reset() returns (obs, state), and its runner calls get_obs() again after reset
# and after the step in which the wrapper already called it
SMACV2_CLIENT = """
import numpy as np
from smacv2.env.starcraft2.wrapper import StarCraftCapabilityEnvWrapper

env_args = dict(continuing_episode=False, difficulty="7", game_version=None, map_name="10gen_protoss",
                move_amount=2, obs_all_health=True, obs_instead_of_state=False, obs_last_action=False,
                obs_own_health=True, obs_pathing_grid=False, obs_terrain_height=False, obs_timestep_number=False,
                reward_death_value=10, reward_defeat=0, reward_negative_scale=0.5, reward_only_positive=True,
                reward_scale=True, reward_scale_rate=20, reward_sparse=False, reward_win=200, replay_dir="",
                replay_prefix="", conic_fov=False, use_unit_ranges=True, min_attack_range=2, obs_own_pos=True,
                num_fov_actions=12, state_last_action=True, state_timestep_number=False, step_mul=8,
                heuristic_ai=False, debug=False, seed=0,
                capability_config={"n_units": 5, "n_enemies": 5,
                                   "team_gen": {"dist_type": "weighted_teams",
                                                "unit_types": ["stalker", "zealot", "colossus"],
                                                "weights": [0.45, 0.45, 0.1], "observe": True},
                                   "start_positions": {"dist_type": "surrounded_and_reflect", "p": 0.5,
                                                       "map_x": 32, "map_y": 32}})
env = StarCraftCapabilityEnvWrapper(**env_args)
info = env.get_env_info()
rng = np.random.default_rng(0)
for episode in range(2):
    obs, state = env.reset()
    obs = env.get_obs()
    terminated = False
    while not terminated:
        avail = np.array(env.get_avail_actions())
        reward, terminated, step_info = env.step([int(rng.choice(np.flatnonzero(a))) for a in avail])
        env.get_obs()
        obs, state = env.get_obs(), env.get_state()
    print("episode", episode, len(obs), obs[0].shape, state.shape, env.get_stats()["battles_game"])
print("info", info["obs_shape"], info["state_shape"], info["n_actions"], info["cap_shape"], env.episode_limit)
"""


def test_an_epymarl_style_smacv2_client_runs_unchanged(tmp_path):
    out = run_client(tmp_path, [clients_path()], main=SMACV2_CLIENT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["episode 0 5 (92,) (130,) 1", "episode 1 5 (92,) (130,) 2",
                                       "info 92 130 11 3 200"]


def test_a_real_smac_install_is_not_shadowed_silently(tmp_path):
    real = tmp_path / "site"
    (real / "smac").mkdir(parents=True)
    (real / "smac" / "__init__.py").write_text("")
    client = tmp_path / "client"
    client.mkdir()
    out = run_client(client, [clients_path(), real])
    assert out.returncode == 1
    assert f"another package named 'smac' is installed ({real / 'smac' / '__init__.py'})" in out.stderr
    assert run_client(client, [clients_path(), real], {"CONCERTO_SMAC_COMPAT": "1"}).returncode == 0


def test_python_m_prints_the_directory_to_put_on_the_path():
    out = subprocess.run([sys.executable, "-m", "envs.smac.compat"], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    assert Path(out.stdout.strip()) == clients_path() and (clients_path() / "smac" / "env").is_dir()


SMACV2_PROTOSS: dict[str, Any] = {"n_units": 5, "n_enemies": 5,
                  "team_gen": {"dist_type": "weighted_teams", "unit_types": ["stalker", "zealot", "colossus"],
                               "weights": [0.45, 0.45, 0.1], "observe": True},
                  "start_positions": {"dist_type": "surrounded_and_reflect", "p": 0.5, "map_x": 32, "map_y": 32}}


def test_smacv2_capability_configs_map_to_the_generated_scenarios():
    env = StarCraftCapabilityEnvWrapper(capability_config=SMACV2_PROTOSS, map_name="10gen_protoss",
                                        obs_own_pos=True, use_unit_ranges=True, min_attack_range=2, seed=0)
    assert env.map_name == "10gen_protoss" and env.env.core.map.name == "smaclite_protoss_5_vs_5"
    assert isinstance(env, MultiAgentEnv) and isinstance(env.env, StarCraft2Env)
    env.reset()
    assert (env.get_obs_size(), env.get_state_size(), env.n_actions) == (92, 130, 11)
    with pytest.raises(UserError, match="no built-in scenario for 10gen_protoss with n_units=7"):
        StarCraftCapabilityEnvWrapper(capability_config={**SMACV2_PROTOSS, "n_units": 7}, map_name="10gen_protoss")
    with pytest.raises(UserError, match=r"team_gen .* differs"):
        StarCraftCapabilityEnvWrapper(capability_config={**SMACV2_PROTOSS, "team_gen": {
            **SMACV2_PROTOSS["team_gen"], "weights": [0.5, 0.5, 0.0]}}, map_name="10gen_protoss")
    with pytest.raises(UserError, match="not supported on 10gen_empty"):
        StarCraftCapabilityEnvWrapper(capability_config=SMACV2_PROTOSS, map_name="10gen_empty")
    with pytest.raises(UserError, match=r"capability_config keys \['attack'\] are not simulated"):
        StarCraftCapabilityEnvWrapper(capability_config={**SMACV2_PROTOSS, "attack": {"observe": True}})
    with pytest.raises(UserError, match="observe=False"):
        StarCraftCapabilityEnvWrapper(capability_config={**SMACV2_PROTOSS, "team_gen": {
            **SMACV2_PROTOSS["team_gen"], "observe": False}})
    # smacv2's StarCraft2Env takes the capability config itself, as the wrapper passes it
    direct = SMACv2Env(map_name="10gen_protoss", capability_config=SMACV2_PROTOSS, seed=0)
    assert direct.get_env_info()["cap_shape"] == 3 and direct.capability_config == SMACV2_PROTOSS


def test_smacv2_stock_zerg_config_lists_the_same_mix_in_its_own_order():
    # smacv2's examples/configs/sc2_gen_zerg.yaml (and EPyMARL's zerg configs) list zergling, baneling, hydralisk
    zerg = {**SMACV2_PROTOSS, "team_gen": {"dist_type": "weighted_teams",
                                           "unit_types": ["zergling", "baneling", "hydralisk"],
                                           "weights": [0.45, 0.1, 0.45], "exception_unit_types": ["baneling"],
                                           "observe": True}}
    env = StarCraftCapabilityEnvWrapper(capability_config=zerg, map_name="10gen_zerg", seed=0)
    assert env.env.core.map.name == "smaclite_zerg_5_vs_5"
    with pytest.raises(UserError, match=r"team_gen .* differs"):  # the weights belong to the types
        StarCraftCapabilityEnvWrapper(capability_config={**zerg, "team_gen": {
            **zerg["team_gen"], "weights": [0.45, 0.45, 0.1]}}, map_name="10gen_zerg")


def test_smacv2s_env_has_smacv2s_reward_and_sighting_on_smac_maps_too():
    v2, v1 = SMACv2Env(map_name="3m", seed=0), StarCraft2Env(map_name="3m", seed=0)
    assert v2.core.rewards.reward_positive_part and v2.core.sighting is not None
    assert not v1.core.rewards.reward_positive_part and v1.core.sighting is None
    assert SMACv2Env(map_name="3m", reward_positive_part=False).core.sighting is not None  # options still win
    timed: dict[str, Any] = {"map_name": "3m", "obs_timestep_number": True}
    assert SMACv2Env(**timed).get_obs_own_feats_size() + 1 == StarCraft2Env(**timed).get_obs_own_feats_size()
    assert SMACv2Env(map_name="10gen_zerg", capability_config={"n_units": 5, "n_enemies": 5}).map_type == "zerg_gen"
    for env_class in (StarCraft2Env, SMACv2Env):  # positional as in smac and smacv2: step_mul, ..., seed
        env = env_class("3m", 8, 2, "7", None, 5)
        assert env.step_mul == 8 and env.seed() == 5
    with pytest.raises(UserError, match="step_mul=4 is not supported"):
        SMACv2Env("3m", 4)


def test_smacv2s_attributes_on_a_capability_config():
    config = {**SMACV2_PROTOSS, "team_gen": dict(SMACV2_PROTOSS["team_gen"]),
              "start_positions": dict(SMACV2_PROTOSS["start_positions"])}
    env = StarCraftCapabilityEnvWrapper(capability_config=config, map_name="10gen_protoss", seed=3)
    # as smacv2's wrapper, each distribution config gets its env_key and the team sizes, in place
    assert config["team_gen"]["env_key"] == "team_gen" and config["start_positions"]["n_enemies"] == 5
    assert set(env.env_key_to_distribution_map) == {"team_gen", "start_positions"}
    assert (env.action_mask, env.conic_fov, env.n_fov_actions, env.prob_obs_enemy) == (True, False, 0, 1.0)
    assert env.replace_teammates and env.random_start and not env.stochastic_attack and env.observe_teammate_types
    assert env.map_params == get_smacv2_map_params("10gen_protoss") and env.map_params["map_type"] == "protoss_gen"
    # smacv2 keeps the type bits out of the allies' state attributes and counts them as capabilities
    assert env.ally_state_attr_names == ["health", "energy/cooldown", "rel_x", "rel_y", "shield"]
    assert env.capability_attr_names == ["type_0", "type_1", "type_2"] and env.get_ally_num_attributes() == 8
    info = env.get_env_info()
    assert info["cap_shape"] == 3 and info["agent_features"] == env.ally_state_attr_names + env.capability_attr_names
    assert env.build_obs_feature_names() == env.get_obs_feature_names() and env.get_obs_ally_capability_size() == 3
    assert env.build_state_feature_names() == env.get_state_feature_names()
    # the 10gen maps' agents are the nine RL unit types in alphabetical order; the enemies keep SC2's ids
    assert list(env.ally_unit_map) == ["baneling", "colossus", "hydralisk", "marauder", "marine", "medivac", "stalker",
                                       "zealot", "zergling"]
    assert env.enemy_unit_map["stalker"] == 74 and env.unit_name_to_id_map == {}
    env.reset()
    agents, enemies = env.agents.values(), env.enemies.values()
    assert [u.unit_type for u in agents] == [env.ally_unit_map[u.name] for u in agents]
    assert [u.unit_type for u in agents] == sorted(u.unit_type for u in agents)  # smacv2 numbers agents by type
    assert [u.unit_type for u in enemies] == [env.enemy_unit_map[u.name] for u in enemies]
    # what the scenario drew, as smacv2's distributions would have handed it to reset()
    team = env.episode_config["team_gen"]
    assert team["ally_team"] == [u.name for u in agents] and team["enemy_team"] == [u.name for u in enemies]
    np.testing.assert_allclose(env.ally_start_positions, [[u.pos.x, u.pos.y] for u in agents], atol=1e-5)
    assert env.enemy_start_positions.shape == (5, 2)
    # the sighting memory, as smacv2's enemy_tags and obs_enemies
    tags = env.enemy_tags
    assert tags == [None if o < 0 else o for o in env.core.sighting.owner[0].tolist()]
    assert env.obs_enemies.tolist() == [[float(tag is not None)] * 5 for tag in tags]
    target = next(iter(enemies))
    shoot = env.unit_shoot_range(0)
    a0 = env.get_unit_by_id(0)
    assert env.get_can_shoot(0, target) == (env.distance(a0.pos.x, a0.pos.y, target.pos.x, target.pos.y) <= shoot)


def test_smacs_and_smacv2s_module_names_and_map_params(tmp_path):
    code = textwrap.dedent("""
        from smac.env.multiagentenv import MultiAgentEnv
        from smac.env.starcraft2.starcraft2 import StarCraft2Env
        from smac.env.starcraft2.maps import get_map_params
        from smacv2.env.multiagentenv import MultiAgentEnv as MultiAgentEnv2
        from smacv2.env.starcraft2.starcraft2 import StarCraft2Env as V2, CannotResetException
        from smacv2.env.starcraft2.maps import get_map_params as get_map_params2
        from smacv2.env.starcraft2.distributions import get_distribution
        team = get_distribution("weighted_teams")({"env_key": "team_gen", "unit_types": ["marine"], "weights": [1.0],
                                                   "n_units": 2, "n_enemies": 3}).generate()
        assert team == {"team_gen": {"ally_team": ["marine"] * 2, "enemy_team": ["marine"] * 3, "id": 0}}
        # one simulator behind every module, even beside the client's own envs package
        from smac.env.starcraft2.starcraft2 import Direction
        from smacv2.env.starcraft2.distributions import Distribution
        from smacv2.env import StarCraftCapabilityEnvWrapper
        assert Direction is StarCraft2Env.__init__.__globals__["Direction"]
        wrapper = StarCraftCapabilityEnvWrapper(capability_config={"n_units": 5, "n_enemies": 5, "team_gen": {}},
                                                map_name="10gen_terran")
        assert isinstance(wrapper.env_key_to_distribution_map["team_gen"], Distribution)
        import smac.env, smacv2.env
        assert StarCraft2Env is smac.env.StarCraft2Env and V2 is smacv2.env.StarCraft2Env
        assert issubclass(StarCraft2Env, MultiAgentEnv) and issubclass(V2, MultiAgentEnv2)
        assert issubclass(CannotResetException, Exception)
        print(get_map_params("MMM2"), get_map_params2("10gen_terran")["map_type"])
    """)
    out = run_client(tmp_path, [clients_path()], main=code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["{'n_agents':", "10,", "'n_enemies':", "12,", "'limit':", "180,", "'a_race':",
                                  "'T',", "'b_race':", "'T',", "'unit_type_bits':", "3,", "'map_type':", "'MMM'}",
                                  "terran_gen"]
