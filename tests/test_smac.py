"""The built-in SMAC simulator: sizes, obs/state/avail/reward semantics, faces, determinism, bad input."""
import functools
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import envs
from core.errors import UnknownNameError, UserError
from envs.registry import EnvEntry, register, register_lazily, registered_names, resolve
from envs.smac import HeuristicPolicy, SMACVecEnv, StarCraft2Env
from envs.smac.baselines import win_rate
from envs.smac.batch import SMACBatch
from envs.smac.features import FeatureFlags
from envs.smac.maps import MAPS, get_map
from envs.smac.scenarios import SCENARIOS
from envs.vec_env import VecStep

SIZES = {  # map: (n_actions, obs, state, limit), SMAC_SPEC.md §3 and §1.1
    "3m": (9, 30, 48, 60), "8m": (14, 80, 168, 120), "2s3z": (11, 80, 120, 120), "3s5z": (14, 128, 216, 150),
    "5m_vs_6m": (12, 55, 98, 70), "MMM": (16, 160, 290, 150), "1c3s5z": (15, 162, 270, 180),
    "27m_vs_30m": (36, 285, 1170, 180), "corridor": (30, 156, 282, 400), "6h_vs_8z": (14, 78, 140, 150),
}


@pytest.mark.parametrize("name", sorted(SIZES))
def test_sizes_match_smac(name):
    env = StarCraft2Env(map_name=name)
    info = env.get_env_info()
    assert (info["n_actions"], info["obs_shape"], info["state_shape"], info["episode_limit"]) == SIZES[name]
    obs, state = env.reset()
    assert len(obs) == info["n_agents"] and obs[0].shape == (info["obs_shape"],)
    assert state.shape == (info["state_shape"],)
    assert StarCraft2Env(map_name=name, obs_last_action=True).get_obs_size() == \
        SIZES[name][1] + (info["n_agents"] - 1) * info["n_actions"]
    assert StarCraft2Env(map_name=name, state_last_action=False).get_state_size() == \
        SIZES[name][2] - info["n_agents"] * info["n_actions"]


def smac_vec(name: str, **kwargs: Any) -> SMACVecEnv:
    """envs.make_vec for a built-in simulator env, typed as the simulator's vector env."""
    venv = envs.make_vec(name, **kwargs)
    assert isinstance(venv, SMACVecEnv)
    return venv


def avail_of(step: VecStep) -> np.ndarray:
    avail = step.group_avail["agent"]
    assert avail is not None  # SMAC's actions are discrete
    return avail


@functools.cache
def stop_only_episodes(name: str, n_envs: int = 2) -> dict[str, np.ndarray]:
    """The first episode of each of `n_envs` battles of `name` in which the allies only stop (dead ones no-op),
    stepped for at most the episode limit: per env its length, terminated, truncated, won, whether any ally
    unit that fights (not a medivac) was alive at the end, and whether every observation was finite."""
    venv = smac_vec(f"smac_{name}", n_envs=n_envs, seed=0)
    medivac = venv.core.battle.stats.is_medivac[:, : venv.core.n_agents]  # a fixed roster: the same every episode
    step = venv.reset()
    out = {k: np.zeros(n_envs, bool) for k in ("ended", "terminated", "truncated", "won", "fighter_alive")}
    out["length"] = np.zeros(n_envs, np.int64)
    finite = True
    for _ in range(venv.core.limit):
        step = venv.step({"agent": np.where(avail_of(step)[..., 1], 1, 0)})
        finite &= bool(np.isfinite(step.group_obs["agent"]).all() and np.isfinite(step.state).all())
        first = step.done & ~out["ended"]
        out["length"][first] = step.episode_length[first]
        out["terminated"][first], out["truncated"][first] = step.terminated[first], step.truncated[first]
        out["won"][first] = step.episode_won[first] == 1
        out["fighter_alive"][first] = (step.final_group_alive["agent"] & ~medivac)[first].any(1)
        out["ended"] |= step.done
        if out["ended"].all():
            break
    out["finite"] = np.array(finite)
    return out


@pytest.mark.parametrize("name", sorted(MAPS))
def test_every_map_runs_and_ends(name):
    """Every battle ends within the episode limit: terminated, or truncated exactly at the limit."""
    ep, limit = stop_only_episodes(name), get_map(name).limit
    assert ep["ended"].all() and ep["finite"]
    assert ((ep["length"] >= 1) & (ep["length"] <= limit)).all()
    assert (ep["terminated"] != ep["truncated"]).all()  # exactly one of the two
    assert (ep["length"][ep["truncated"]] == limit).all()
    assert not ep["won"].any()  # allies that only stop deal no damage


STATIC_ENEMY = {"2s_vs_1sc"}  # the spine crawler never moves: allies that stay out of its range live


@pytest.mark.parametrize("name", sorted(set(MAPS) - STATIC_ENEMY))
def test_the_enemy_defeats_allies_that_only_stop_before_the_limit(name):
    ep = stop_only_episodes(name)
    assert ep["terminated"].all() and (ep["length"] < get_map(name).limit).all()
    assert not ep["fighter_alive"].any()  # lost: every ally that fights is dead


def test_a_static_enemy_lets_allies_that_only_stop_time_out():
    ep = stop_only_episodes("2s_vs_1sc")
    assert (ep["length"] == get_map("2s_vs_1sc").limit).all() and ep["fighter_alive"].all()


def battle_3m():
    core = SMACBatch(get_map("3m"), 1, seed=0, flags=FeatureFlags())
    core.reset(np.ones(1, bool))
    return core


def place(core, unit, x, y):
    core.battle.state.z[0, unit] = complex(x, y)


def test_attack_availability_at_range_6_and_moves_blocked_at_the_edge():
    core = battle_3m()
    b = core.battle.state
    place(core, 0, 10.0, 16.0)
    place(core, 1, 10.0, 7.5)  # bottom edge of the walkable band (y >= 7)
    place(core, 2, 2.0, 20.0)
    place(core, 3, 16.0, 16.0)  # enemy 0 exactly 6 away from agent 0
    place(core, 4, 16.01, 17.0)
    place(core, 5, 30.0, 20.0)
    _, _, avail = core.observe()
    a0 = avail[0, 0]
    assert a0[0] == 0 and a0[1] == 1  # alive: no no-op, stop available
    assert a0[6] and not a0[7] and not a0[8]  # attack at <= 6 only
    a1 = avail[0, 1]
    assert a1[2] and not a1[3] and a1[4] and a1[5]  # N ok, S off the band, E/W ok
    b.hp[0, 2] = 0.0
    b.alive[0, 2] = False
    obs, _, avail = core.observe()
    assert avail[0, 2].tolist() == [1, 0, 0, 0, 0, 0, 0, 0, 0]  # dead: only no-op
    assert (obs[0, 2] == 0).all()


def test_obs_and_state_layout_on_a_hand_built_situation():
    core = battle_3m()
    b = core.battle.state
    place(core, 0, 10.0, 16.0)
    place(core, 1, 13.0, 20.0)  # ally 1: distance 5 from agent 0
    place(core, 2, 30.0, 10.0)  # ally 2: out of sight (>= 9)
    place(core, 3, 14.0, 16.0)  # enemy 0: distance 4
    place(core, 4, 10.0, 24.0 - 0.5)
    place(core, 5, 20.0, 16.0)  # enemy 2: distance 10, not visible
    b.hp[0, 3] = 22.5
    b.hp[0, 0] = 30.0
    b.cooldown[0, 0] = 7.5  # game loops; marine max_cd 15
    obs, state, _ = core.observe()
    o = obs[0, 0]
    np.testing.assert_allclose(o[4:9], [1, 4 / 9, 4 / 9, 0, 0.5], rtol=1e-6)  # enemy 0
    np.testing.assert_allclose(o[14:19], 0.0)  # enemy 2 invisible
    np.testing.assert_allclose(o[19:24], [1, 5 / 9, 3 / 9, 4 / 9, 1.0], rtol=1e-6)  # ally 1
    np.testing.assert_allclose(o[24:29], 0.0)  # ally 2 invisible
    np.testing.assert_allclose(o[29], 30 / 45, rtol=1e-6)  # own health
    s = state[0]
    np.testing.assert_allclose(s[0:4], [30 / 45, 0.5, (10 - 16) / 32, 0], atol=1e-6)  # ally 0 row
    np.testing.assert_allclose(s[12:15], [0.5, (14 - 16) / 32, 0], atol=1e-6)  # enemy 0 row
    assert (s[21:] == 0).all()  # last actions: none yet


def test_kill_bonus_win_bonus_and_flawless_win_sums_to_20():
    core = battle_3m()
    b = core.battle.state
    for u in range(6):
        place(core, u, 10.0 + 0.8 * u, 16.0)
    b.hp[0, 4:] = 0.0
    b.alive[0, 4:] = False  # two enemies already gone
    b.hp[0, 3] = 1.0  # last enemy at 1 hp, next to everyone
    b.cooldown[0] = 0.0
    out = core.step(np.array([[6, 6, 6]]))
    assert out.won[0] and out.ended[0] and out.dead_enemies[0] == 1
    expected = (1.0 + 10 + 200) / (core.max_reward / 20)
    assert out.reward[0] == pytest.approx(expected, rel=1e-6)
    assert core.max_reward == 3 * 10 + 200 + 3 * 45
    # a whole episode won without shields sums to exactly 20
    venv = smac_vec("smac_3m", n_envs=16, seed=3)
    policy = HeuristicPolicy(venv.core.battle)
    step = venv.reset()
    wins: list[float] = []
    while len(wins) < 5:
        step = venv.step({"agent": policy.act(avail_of(step))})
        done = step.done & (step.episode_won == 1)
        wins += list(step.episode_return[done])
        policy.reset(step.done)
    np.testing.assert_allclose(wins, 20.0, rtol=1e-5)  # float32 dynamics


def test_stopping_loses_random_rarely_wins_heuristic_often_wins_3m():
    assert win_rate("3m", "stop", 100, n_envs=50)[0] == 0.0
    assert win_rate("3m", "random", 100, n_envs=50)[0] <= 0.05
    assert win_rate("3m", "heuristic", 100)[0] >= 0.5  # SMAC's heuristic_ai protocol (~70%)
    # the same policy within the action space: valid actions, some wins
    assert win_rate("3m", "heuristic_rest", 100, n_envs=50)[0] >= 0.1


def test_same_seed_same_episodes():
    def run(seed):
        venv = envs.make_vec("smac_2s3z", n_envs=4, seed=seed)
        rng = np.random.default_rng(0)
        step = venv.reset()
        trace = []
        for _ in range(80):
            avail = avail_of(step)
            step = venv.step({"agent": np.argmax(rng.random(avail.shape) * avail, -1)})
            trace.append(step.state.copy())
        return np.stack(trace)
    np.testing.assert_array_equal(run(7), run(7))
    assert not np.array_equal(run(7), run(8))


@pytest.mark.parametrize("name", ["smac_MMM2", "smaclite_zerg_10_vs_10"])
def test_observing_in_cache_sized_blocks_changes_nothing(name, monkeypatch):
    from envs.smac import batch
    venv = smac_vec(name, n_envs=40, seed=0)
    rng = np.random.default_rng(0)
    step = venv.reset()
    for _ in range(30):
        avail = avail_of(step)
        step = venv.step({"agent": np.argmax(rng.random(avail.shape) * avail, -1)})
    saved = venv.core.state_dict()  # smaclite's observing changes what it remembers: start each pass alike,
    if "sighting" in saved:  # with nothing sighted yet, so that every env's turn order matters
        saved["sighting"]["owner"][:] = -1
    for idx in (None, np.array([1, 7, 8, 20, 39])):  # every env, and the finished-episode subset path
        monkeypatch.setattr(batch, "OBS_BLOCK_BYTES", 1 << 40)
        venv.core.load_state_dict(saved)
        whole = venv.core.observe(idx)
        monkeypatch.setattr(batch, "OBS_BLOCK_BYTES", 1)  # one env per block
        venv.core.load_state_dict(saved)
        for one, blocked in zip(whole, venv.core.observe(idx), strict=True):
            np.testing.assert_array_equal(one, blocked)


SIMULATOR = ("envs.smac.battle", "envs.smac.batch", "envs.smac.compat.starcraft2_env",
             "envs.smac.compat.pettingzoo_env", "envs.smac.vec_env", "envs.smac.render")
LISTED_THEN_MADE = """
import json, sys
import envs
names, imported = envs.registered_names(), sorted(sys.modules)
envs.make("smac_3m")
print(json.dumps({"names": names, "imported": imported, "after_make": sorted(sys.modules)}))
"""


def test_import_envs_lists_the_simulators_names_and_imports_the_simulator_only_when_one_is_made():
    out = json.loads(subprocess.run([sys.executable, "-c", LISTED_THEN_MADE], cwd=Path(__file__).parents[1],
                                    capture_output=True, text=True, check=True).stdout)
    assert {f"smac_{name}" for name in MAPS} | set(SCENARIOS) <= set(out["names"])
    assert not {*SIMULATOR, "envs.smac.compat"} & set(out["imported"])
    assert set(SIMULATOR) <= set(out["after_make"])


def test_a_lazily_registered_name_loads_once_and_a_users_registration_replaces_it():
    loads: list[str] = []

    def load(name: str) -> EnvEntry:
        loads.append(name)
        return EnvEntry(functools.partial(StarCraft2Env, "3m"))

    register_lazily("lazy_3m", functools.partial(load, "lazy_3m"))
    register_lazily("lazy_3m_mine", functools.partial(load, "lazy_3m_mine"))
    register("lazy_3m_mine", StarCraft2Env)
    assert {"lazy_3m", "lazy_3m_mine"} <= set(registered_names()) and not loads
    assert resolve("lazy_3m") is resolve("lazy_3m") and loads == ["lazy_3m"]
    assert resolve("lazy_3m_mine").factory is StarCraft2Env and loads == ["lazy_3m"]


def test_bad_input():
    with pytest.raises(UnknownNameError, match=r"unknown SMAC map '4m'; available maps: .*3m"):
        StarCraft2Env(map_name="4m")
    with pytest.raises(UnknownNameError, match="unknown env 'smac_4m'"):
        envs.make_vec("smac_4m")
    env = StarCraft2Env(map_name="3m")
    env.reset()
    with pytest.raises(ValueError, match=r"expected actions of shape \(1, 3\)"):
        env.step([1, 1])
    with pytest.raises(ValueError, match="agent 0 cannot perform action 0"):
        env.step([0, 1, 1])
    venv = envs.make_vec("smac_3m", n_envs=2)
    venv.reset()
    with pytest.raises(ValueError, match="cannot perform action 8"):
        venv.step({"agent": np.full((2, 3), 8)})
    with pytest.raises(UserError, match="unknown SMAC option"):
        StarCraft2Env(map_name="3m", reward_sparce=True)


def test_pettingzoo_face_passes_the_api_test():
    from pettingzoo.test import parallel_api_test
    parallel_api_test(envs.make("smac_3m"), num_cycles=200)


def test_pettingzoo_reset_with_a_seed_repeats_the_battle():
    env = envs.make("smac_3m")

    def start(seed):
        obs, _ = env.reset(seed=seed)
        return np.stack([o["observation"] for o in obs.values()])

    np.testing.assert_array_equal(start(5), start(5))
    assert not np.array_equal(start(5), start(6))  # spawn jitter differs


def test_drop_in_runs_a_pymarl_style_loop():
    env = StarCraft2Env(map_name="3m", seed=0)
    info = env.get_env_info()
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.reset()
        terminated = False
        while not terminated:
            obs, state = env.get_obs(), env.get_state()
            assert len(obs) == info["n_agents"] and state.shape == (info["state_shape"],)
            actions = [rng.choice(np.flatnonzero(env.get_avail_agent_actions(i))) for i in range(info["n_agents"])]
            _, terminated, step_info = env.step(actions)
        assert "battle_won" in step_info
    assert env.get_stats()["battles_game"] == 3


def test_timeouts_truncate_in_the_vec_env_and_terminate_in_the_drop_in():
    venv = envs.make_vec("smac_3m", n_envs=1, seed=0, episode_limit=3)
    venv.reset()
    for _ in range(3):
        step = venv.step({"agent": np.ones((1, 3), np.int64)})
    assert step.truncated[0] and not step.terminated[0]
    env = StarCraft2Env(map_name="3m", episode_limit=3, continuing_episode=True)
    env.reset()
    for _ in range(3):
        _, terminated, info = env.step([1, 1, 1])
    assert terminated and info["episode_limit"] and env.get_stats()["timeouts"] == 1


def test_render_frames_and_gif(tmp_path):
    from envs.smac.render import record_episode
    env = StarCraft2Env(map_name="3m", seed=0)
    env.reset()
    frame = env.render()
    assert frame.shape == (512, 512, 3) and frame.dtype == np.uint8
    assert (frame == [60, 110, 230]).all(-1).any() and (frame == [220, 60, 50]).all(-1).any()
    pytest.importorskip("PIL")
    path = record_episode(StarCraft2Env(map_name="3m", seed=0, episode_limit=5),
                          lambda avail: np.where(avail[:, 1], 1, 0), tmp_path / "ep.gif")
    assert path.stat().st_size > 0


def test_mappo_trains_on_smac_3m(tmp_path):
    """The CLI path end to end on the simulator: the budget is spent, the evaluation is real, the run dir whole."""
    from marl.cli import main
    summary_path = tmp_path / "summary.json"
    assert main(["--algo", "mappo", "--env", "smac_3m", "--steps", "2000", "--n-envs", "8", "--no-progress",
                 "--logdir", str(tmp_path), "--summary-json", str(summary_path), "rollout_steps=50", "ppo_epochs=1",
                 "train.eval_episodes=4"]) == 0
    summary = json.loads(summary_path.read_text())
    assert summary["env_steps"] == 2000  # 5 rollouts of 50 vector steps x 8 envs
    assert 0.0 <= summary["eval_win_rate"] <= 1.0 and math.isfinite(summary["eval_return_mean"])
    run_dir = Path(summary["run_dir"])
    assert (run_dir / "config.yaml").is_file() and (run_dir / "metrics.csv").is_file()
    tags = {line.split(",")[2] for line in (run_dir / "metrics.csv").read_text().splitlines()[1:]}
    assert {"loss/policy", "loss/value", "loss/entropy"} <= tags


def test_smacv2_names_without_the_package_give_one_line_exit_2(tmp_path):
    from tests.test_cli import cli
    result = cli("--algo", "mappo", "--env", "smacv2_zerg_10_vs_11", "--logdir", str(tmp_path),
                 prelude="import sys; sys.modules['smacv2'] = None; ")
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert "needs the smacv2 package and StarCraft II" in result.stderr


def test_smacv2_adapter_drives_a_stand_in_capability_wrapper(monkeypatch):
    """The adapter passes smacv2 its capability config and map; a stand-in built on the drop-in env shows
    the PettingZoo side works without StarCraft II."""
    import sys
    import types
    seen: dict[str, Any] = {}

    def wrapper(capability_config, map_name, **kwargs):
        seen.update(capability_config=capability_config, map_name=map_name, kwargs=kwargs)
        return StarCraft2Env(map_name="3m", continuing_episode=kwargs["continuing_episode"], episode_limit=5)

    package, module = types.ModuleType("smacv2"), types.ModuleType("smacv2.env")
    vars(module)["StarCraftCapabilityEnvWrapper"] = wrapper
    monkeypatch.setitem(sys.modules, "smacv2", package)
    monkeypatch.setitem(sys.modules, "smacv2.env", module)
    env = envs.make("smacv2_terran_10_vs_11")
    assert seen["map_name"] == "10gen_terran"
    assert seen["capability_config"]["n_units"] == 10 and seen["capability_config"]["n_enemies"] == 11
    assert seen["capability_config"]["team_gen"]["exception_unit_types"] == ["medivac"]
    assert seen["kwargs"]["use_unit_ranges"] is True
    obs, _ = env.reset(seed=0)
    assert set(obs) == {"agent_0", "agent_1", "agent_2"}
    for _ in range(5):
        _, _, _, truncs, _ = env.step({a: 1 for a in env.agents})
    assert all(truncs.values()) and not env.agents  # the 5-step limit truncates


def test_heuristic_ai_fidelity_stays_near_the_smac_paper():
    """SMAC paper heuristic: 2s3z 90%, 3s5z 42%. With SC2's weapon mechanics, collisions and targeting rules
    (issue 43, envs/smac/SC2_FACTS.md) the simulator gives 54-63% / 46-50% (seeds 0-2, 300 episodes): 3s5z near
    the paper, 2s3z far under it; SC2_FACTS.md reports it. The bounds hold today's values (61% / 44% here)
    within about 3 standard errors, so that an unintended change fails."""
    assert 0.48 <= win_rate("2s3z", "heuristic", 150)[0] <= 0.73
    assert 0.32 <= win_rate("3s5z", "heuristic", 150)[0] <= 0.56


def test_drop_in_heuristic_ai_ignores_the_given_actions():
    env = StarCraft2Env(map_name="3m", seed=0, heuristic_ai=True)
    env.reset()
    actions = [0, 0, 0]  # no-ops are invalid for live agents, but ignored here
    _, terminated, _ = env.step(actions)
    # as smac: the list now holds the heuristic's attack orders, while last_action (and the state's last
    # actions) keep what was passed
    assert not terminated and min(actions) >= 6
    last = env.get_state()[-3 * env.n_actions:].reshape(3, env.n_actions)
    assert (last.argmax(1) == 0).all() and (env.last_action.argmax(1) == 0).all()
    start = env.core.battle.state.hp.copy()
    for _ in range(3):
        env.step([0, 0, 0])
    assert (env.core.battle.state.hp[0, 3:] < start[0, 3:]).any()  # the enemies take the heuristic's fire


@pytest.mark.parametrize("name, sizes", [("smaclite_protoss_5_vs_5", (11, 92, 130)),
                                         ("smaclite_terran_5_vs_5", (11, 82, 120)),
                                         ("smaclite_zerg_5_vs_5", (11, 82, 120)),
                                         ("smaclite_protoss_10_vs_10", (16, 182, 310))])
def test_generated_scenarios_have_smacv2_sizes(name, sizes):
    venv = smac_vec(name, n_envs=2, seed=0)
    step = venv.reset()
    assert (venv.core.n_actions, step.group_obs["agent"].shape[-1], step.state.shape[-1]) == sizes
    assert venv.core.limit == 200


def test_generated_scenarios_draw_new_teams_and_positions_each_episode():
    venv = smac_vec("smaclite_terran_10_vs_11", n_envs=64, seed=1)
    venv.reset()
    b = venv.core.battle
    kinds = b.stats.kind.copy()
    assert len({tuple(k) for k in kinds}) > 30  # teams differ between envs
    # the enemy mirrors the allies' team, plus one extra unit; allies are numbered as smacv2 numbers them, by
    # (SC2 unit type id, x, y), and its 10gen maps give the ally types their ids in alphabetical order
    assert (np.sort(kinds[:, 10:20], 1) == np.sort(kinds[:, :10], 1)).all()
    names, z = np.array(b.roster.type_names)[kinds[:, :10]], b.state.z[:, :10]
    keys = [list(zip(n, x.tolist(), y.tolist(), strict=True)) for n, x, y in zip(names, z.real, z.imag, strict=True)]
    assert all(row == sorted(row) for row in keys)
    assert any(row[0][0] == "marauder" and "marine" in (k[0] for k in row) for row in keys)  # not one-hot order
    medivac = b.roster.type_names.index("medivac")
    assert not (kinds[:, :10] == medivac).all(1).any()  # never an all-medivac team
    surrounded = np.abs(b.state.z[:, :10] - (16 + 16j)).max(1) < 1.0
    assert 0 < surrounded.sum() < 64  # both start-position kinds occur
    # as smacv2 draws them: each enemy group (one per diagonal) takes the next enemies in order, and a
    # reflected draw's extra enemy starts anywhere in the right half
    enemies = b.state.z[:, 10:] - (16 + 16j)
    diagonal = (enemies.real > 0) * 2 + (enemies.imag > 0)
    runs = (np.diff(diagonal[surrounded], axis=1) != 0).sum(1) + 1
    assert (runs == [len(set(row)) for row in diagonal[surrounded].tolist()]).all()
    assert (enemies.real[~surrounded, 10] >= -0.5).all() and (enemies.real[~surrounded, 10] < 1.0).any()
    again = smac_vec("smaclite_terran_10_vs_11", n_envs=64, seed=1)
    again.reset()
    np.testing.assert_array_equal(again.core.battle.stats.kind, kinds)  # same seed, same episodes
    from pettingzoo.test import parallel_api_test
    parallel_api_test(envs.make("smaclite_zerg_5_vs_5"), num_cycles=100)
