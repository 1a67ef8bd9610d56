"""The compiled battle step (envs/smac/battle_fused.py) against the numpy reference (Battle.step_reference)."""
import numpy as np
import pytest

import envs
from envs.smac import SMACVecEnv
from envs.smac.battle_fused import _abs_all


def smac_vec(name: str, reference: bool = False, n_envs: int = 24) -> SMACVecEnv:
    venv = envs.make_vec(name, n_envs=n_envs, seed=11)
    assert isinstance(venv, SMACVecEnv)
    if reference:
        venv.core.battle._fused_step = None
    return venv


# marines only; stalkers and zealots (shields, projectiles); walls without pathing and a regenerating building
@pytest.mark.parametrize("name", ["smac_3m", "smac_5m_vs_6m", "smac_2s3z", "smac_3s5z", "smac_2s_vs_1sc"])
def test_fused_step_equals_the_reference_bit_for_bit(name):
    fused, reference = smac_vec(name), smac_vec(name, reference=True)
    assert fused.core.battle._fused_step is not None
    rng = np.random.default_rng(0)
    step, ref_step = fused.reset(), reference.reset()
    ended = 0
    for _ in range(150):  # through fights, deaths, wins, losses, time-outs and the resets after them
        avail = step.group_avail["agent"]
        assert avail is not None
        actions = {"agent": np.argmax(rng.random(avail.shape) * avail, -1)}
        step, ref_step = fused.step(actions), reference.step(actions)
        mine, theirs = fused.core.battle.state_dict(), reference.core.battle.state_dict()
        for key, value in mine.items():
            np.testing.assert_array_equal(value, theirs[key], err_msg=key, strict=True)
        np.testing.assert_array_equal(step.group_obs["agent"], ref_step.group_obs["agent"], strict=True)
        for agent, reward in step.rewards.items():
            np.testing.assert_array_equal(reward, ref_step.rewards[agent], strict=True)
        ended += int(step.done.sum())
    assert ended >= 8  # episodes ended (won, lost or timed out) and the next ones began
    assert fused.core.rng.bit_generator.state == reference.core.rng.bit_generator.state


@pytest.mark.parametrize("name", ["smac_3s5z", "smac_2s_vs_1sc"])
def test_fused_step_equals_the_reference_in_a_crowd(name):
    """Every unit within 0.3 of one point: pushes summed over many overlapping units, long pushes cut to
    MAX_PUSH where walls lie inside the map (2s_vs_1sc), units pushed into walls."""
    fused, reference = smac_vec(name), smac_vec(name, reference=True)
    fused.reset(), reference.reset()
    rng = np.random.default_rng(1)
    for venv in (fused, reference):
        s = venv.core.battle.state
        centre = s.z[:, :1].copy()
        s.z[...] = centre + (rng.uniform(-0.3, 0.3, s.z.shape) + 1j * rng.uniform(-0.3, 0.3, s.z.shape))
        rng = np.random.default_rng(1)  # the same crowd in both
    actions = {"agent": np.ones((24, fused.core.n_agents), np.int64)}  # stop: only the pushes move the allies
    for _ in range(3):
        fused.step(actions), reference.step(actions)
        mine, theirs = fused.core.battle.state_dict(), reference.core.battle.state_dict()
        for key, value in mine.items():
            np.testing.assert_array_equal(value, theirs[key], err_msg=key, strict=True)


@pytest.mark.parametrize("name", ["smac_MMM2", "smac_1c3s5z", "smac_25m", "smac_corridor", "smaclite_zerg_5_vs_5"])
def test_battles_outside_the_fused_step_take_the_reference(name):
    assert smac_vec(name, n_envs=2).core.battle._fused_step is None


def test_complex_abs_equals_numpys_to_the_last_bit():
    rng = np.random.default_rng(0)
    scale = rng.choice(np.array([1e-30, 1e-4, 1.0, 30.0, 1e30], np.float32), (2, 200_000))
    parts = (rng.standard_normal((2, 200_000)) * scale).astype(np.float32)
    parts[:, :4] = [[0, 0, 3, -0.0], [0, 4, 0, 2]]
    z = (parts[0] + 1j * parts[1]).astype(np.complex64)
    np.testing.assert_array_equal(_abs_all(z), np.abs(z), strict=True)
