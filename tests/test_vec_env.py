
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envs
from core.errors import EnvWorkerError, UnknownNameError, UserError
from envs.subproc_vec_env import SubprocVecEnv
from envs.sync_vec_env import SyncVecEnv
from envs.vec_env import VecStep
from tests.toy_envs import make_death_env


def death_factory(**kw):
    import functools
    return functools.partial(make_death_env, **kw)


def zero_actions(venv):
    return {g.name: np.zeros((venv.n_envs, g.n_agents), np.int64) for g in venv.spec.groups}


def avail(step: VecStep, agent: str) -> np.ndarray:
    """`agent`'s action mask [n_envs, n_actions] (the death env's actions are discrete, so there is one)."""
    mask = step.avail_actions[agent]
    assert mask is not None
    return mask


def test_dead_agents_keep_their_slot_with_zero_obs_and_noop_only():
    venv = SyncVecEnv([death_factory()] * 2, name="death")
    step = venv.reset(seed=10)
    assert venv.spec.agents == ("unit_0", "unit_1", "unit_2")
    assert step.obs["unit_1"].shape == (2, 3)
    np.testing.assert_array_equal(step.obs["unit_2"][:, 2], [10, 11])  # env i seeded with seed + i
    step = venv.step(zero_actions(venv))  # t=1, all alive; odd step masks action 2
    assert step.alive["unit_0"].all()
    np.testing.assert_array_equal(avail(step, "unit_0")[0], [True, True, False])
    step = venv.step(zero_actions(venv))  # t=2: unit_0 dies
    assert not step.alive["unit_0"].any() and step.alive["unit_1"].all()
    np.testing.assert_array_equal(step.obs["unit_0"], 0.0)
    np.testing.assert_array_equal(avail(step, "unit_0")[0], [True, False, False])
    np.testing.assert_array_equal(step.rewards["unit_0"], 2.0)  # reward on the step it died
    np.testing.assert_array_equal(step.state[0], [2, 2])
    assert not step.done.any()


def test_truncation_gives_final_obs_and_auto_resets_in_the_same_step():
    venv = SyncVecEnv([death_factory(max_steps=6)], name="death")
    venv.reset(seed=0)
    for _ in range(5):
        step = venv.step(zero_actions(venv))
        assert not step.done.any()
    step = venv.step(zero_actions(venv))
    assert step.truncated[0] and not step.terminated[0]
    np.testing.assert_array_equal(step.group_rewards["unit"][0], [0, 0, 8])  # the last step's rewards survive
    # final obs belong to the ended episode (t=6); returned obs to the new one (t=0)
    assert step.final_obs["unit_2"][0, 1] == 6 and step.obs["unit_2"][0, 1] == 0
    np.testing.assert_array_equal([step.final_group_alive["unit"][0]], [[False, False, True]])
    assert step.alive["unit_0"][0]  # new episode: everyone back
    assert step.final_state[0, 0] == 6 and step.state[0, 0] == 0
    # return = sum over agents and steps: unit_0 for t=1..2, unit_1 for t=1..5, unit_2 for t=1..6
    expected = sum(range(1, 3)) + sum(1 + t for t in range(1, 6)) + sum(2 + t for t in range(1, 7))
    assert step.episode_return[0] == expected and step.episode_length[0] == 6
    assert np.isnan(step.episode_won[0])


def test_termination_when_all_agents_die():
    venv = SyncVecEnv([death_factory(lifetimes=(1, 2), max_steps=10)], name="death")
    venv.reset(seed=0)
    venv.step(zero_actions(venv))
    step = venv.step(zero_actions(venv))
    assert step.terminated[0] and not step.truncated[0]
    assert not step.final_group_alive["unit"][0].any()


def test_actions_keyed_by_agent_are_accepted():
    venv = SyncVecEnv([death_factory()], name="death")
    venv.reset(seed=0)
    step = venv.step({a: np.zeros(1, np.int64) for a in venv.spec.agents})
    assert step.alive["unit_0"][0]
    with pytest.raises(ValueError, match="keyed by every group"):
        venv.step({"unit_0": np.zeros(1, np.int64)})


@settings(max_examples=15, deadline=None)
@given(n_envs=st.integers(1, 3), lifetimes=st.lists(st.integers(1, 7), min_size=1, max_size=3),
       max_steps=st.integers(1, 8), n_steps=st.integers(1, 20), seed=st.integers(0, 100))
def test_vec_env_invariants(n_envs, lifetimes, max_steps, n_steps, seed):
    venv = SyncVecEnv([death_factory(lifetimes=tuple(lifetimes), max_steps=max_steps)] * n_envs, name="death")
    step = venv.reset(seed=seed)
    for _ in range(n_steps):
        step = venv.step(zero_actions(venv))
        assert not (step.terminated & step.truncated).any()
        for agent in venv.spec.agents:
            dead = ~step.alive[agent]
            assert (step.obs[agent][dead] == 0).all()
            assert (avail(step, agent)[dead] == [True, False, False]).all()
            assert avail(step, agent)[~dead, 0].all()
        done = step.done
        assert (step.episode_length[done] == np.minimum(max(lifetimes), max_steps)).all()
        assert (step.terminated[done] == (max(lifetimes) <= max_steps)).all()


def test_subproc_matches_sync():
    factory = death_factory(lifetimes=(2, 4, 9), max_steps=7)
    sync = SyncVecEnv([factory] * 3, name="death")
    sub = SubprocVecEnv([factory] * 3, name="death")
    try:
        a, b = sync.reset(seed=5), sub.reset(seed=5)
        rng = np.random.default_rng(0)
        for _ in range(20):
            np.testing.assert_array_equal(a.group_obs["unit"], b.group_obs["unit"])
            mask = a.group_avail["unit"]
            assert mask is not None
            actions = {"unit": np.where(mask[..., 2], rng.integers(0, 3, (3, 3)), 0)}
            a, b = sync.step(actions), sub.step(actions)
            for key in a.arrays:
                np.testing.assert_array_equal(a.arrays[key], b.arrays[key], err_msg=key)
    finally:
        sub.close()


def test_worker_exception_reaches_parent_with_env_index_and_the_users_line():
    factories = [death_factory(), death_factory(fail_at=2), death_factory()]
    venv = SubprocVecEnv(factories, name="death")
    venv.reset(seed=0)
    venv.step(zero_actions(venv))
    with pytest.raises(EnvWorkerError, match=r"env 1 raised RuntimeError: scripted failure \(tests/toy_envs.py:\d+\) "
                                             r"while stepping"):
        venv.step(zero_actions(venv))
    assert all(not p.is_alive() for p in venv._procs)  # no orphans


def test_killed_worker_is_detected():
    venv = SubprocVecEnv([death_factory(), death_factory()], name="death")
    venv.reset(seed=0)
    venv._procs[1].kill()
    with pytest.raises(EnvWorkerError, match=r"env 1"):
        for _ in range(3):
            venv.step(zero_actions(venv))
    assert all(not p.is_alive() for p in venv._procs)


def test_worker_that_exits_mid_step_is_detected():
    venv = SubprocVecEnv([death_factory(crash_at=1)], name="death")
    venv.reset(seed=0)
    with pytest.raises(EnvWorkerError, match=r"env 0: worker process died \(exit code 3\)"):
        venv.step(zero_actions(venv))


def test_registry_register_make_and_errors():
    envs.register("death_test_env", make_death_env, max_steps=3)
    venv = envs.make_vec("death_test_env", n_envs=2, seed=1)
    step = venv.reset()
    np.testing.assert_array_equal(step.obs["unit_0"][:, 2], [1, 2])
    assert envs.make("death_test_env").max_steps == 3
    assert envs.make("death_test_env", max_steps=9).max_steps == 9
    with pytest.raises(UnknownNameError, match=r"registered envs: .*mpe_simple_spread"):
        envs.make("no_such_env")
    expected = "does not accept colour; valid options: lifetimes, max_steps, fail_at, crash_at"
    with pytest.raises(UserError, match=expected):
        envs.make("death_test_env", colour=1)
    with pytest.raises(UserError, match="cannot import"):
        envs.make("no_such_module_xyz:make")
    assert envs.make("tests.toy_envs:make_death_env").max_steps == 6


def test_mpe_spread_shapes_and_state():
    venv = envs.make_vec("mpe_simple_spread", n_envs=2, seed=0)
    step = venv.reset()
    group = venv.spec.groups[0]
    assert group.agents == ("agent_0", "agent_1", "agent_2") and group.n_actions == 5
    assert step.group_obs["agent"].shape == (2, 3, 18) and step.state.shape == (2, 54)
    hetero = envs.make_vec("mpe_simple_speaker_listener", n_envs=1)
    assert [g.name for g in hetero.spec.groups] == ["speaker", "listener"]


def make_aec_spread():
    from mpe2 import simple_spread_v3
    return simple_spread_v3.env(max_cycles=5)


def test_aec_envs_are_converted_to_parallel():
    venv = SyncVecEnv([make_aec_spread], name="aec")
    step = venv.reset(seed=0)
    assert step.group_obs["agent"].shape == (1, 3, 18)
    for _ in range(5):
        step = venv.step({"agent": np.zeros((1, 3), np.int64)})
    assert step.truncated[0] and step.episode_length[0] == 5
