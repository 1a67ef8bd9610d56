"""The battle engine (envs/smac/engine.py): the trajectories of the numpy step it replaced on every map, exact
resume, and its compiled run equal to its plain-Python run."""
import hashlib

import numpy as np
import pytest
from numba import njit

import envs
from envs.smac import SMACVecEnv
from envs.smac.engine import _abs_all, _fma, plain
from envs.smac.maps import MAPS
from envs.smac.scenarios import SCENARIOS

# sha256 prefixes of run(smac_vec(name), 60), recorded from the numpy step (Battle.step_reference) before the engine
# replaced it, at 9557ee4 (Liberty's stalker, colossus and baneling weapons: envs/smac/SC2_FACTS.md): the engine keeps
# its trajectories bit for bit on every map
NUMPY_STEP_DIGESTS = {
    "smac_3m": "e25540056bcd49f4",
    "smac_8m": "bed9613e05d1a54b",
    "smac_25m": "979022bbf6dd0600",
    "smac_5m_vs_6m": "8b11707feea067de",
    "smac_8m_vs_9m": "c6f500e481eae227",
    "smac_10m_vs_11m": "13812fae9afb233e",
    "smac_27m_vs_30m": "1828d52ccaf10e92",
    "smac_MMM": "e8099c90dc061dbe",
    "smac_MMM2": "a08c0728a45994b8",
    "smac_2s3z": "23951b5b36b8d77a",
    "smac_3s5z": "0d70107c81b6d9d4",
    "smac_3s5z_vs_3s6z": "dcaee218fce76597",
    "smac_1c3s5z": "19f3611e0313964b",
    "smac_2m_vs_1z": "f3f43d1e5cd7a81c",
    "smac_2s_vs_1sc": "a31c8fa13ea7bf1e",
    "smac_3s_vs_3z": "33dc885a3e95ccbd",
    "smac_3s_vs_4z": "095cefbfdeda0f0f",
    "smac_3s_vs_5z": "6815af750a0b5e97",
    "smac_6h_vs_8z": "be05a8907a5623fc",
    "smac_corridor": "47eede07ad6b8405",
    "smac_bane_vs_bane": "d81860aa44b136c2",
    "smac_so_many_baneling": "41c4c4c00f5204c4",
    "smac_2c_vs_64zg": "937c23ddf3b79f74",
    "smaclite_protoss_5_vs_5": "dafbbcfe17df72fc",
    "smaclite_protoss_10_vs_10": "11541bb2b9382928",
    "smaclite_protoss_20_vs_20": "a9418e88dcb60880",
    "smaclite_protoss_10_vs_11": "619fcf298ac62546",
    "smaclite_protoss_20_vs_23": "7564a7ff53a6986b",
    "smaclite_terran_5_vs_5": "f23e49c639e2e940",
    "smaclite_terran_10_vs_10": "a8ebb467072acb67",
    "smaclite_terran_20_vs_20": "d6ab2a48e05881e4",
    "smaclite_terran_10_vs_11": "fece0b7e1a8d7bdf",
    "smaclite_terran_20_vs_23": "1024aab9983cf5db",
    "smaclite_zerg_5_vs_5": "898488047bcd873a",
    "smaclite_zerg_10_vs_10": "e33af98739a8c3af",
    "smaclite_zerg_20_vs_20": "54677653330a4df5",
    "smaclite_zerg_10_vs_11": "e46a5aaa0775c191",
    "smaclite_zerg_20_vs_23": "250a96711cd73394",
}
ALL_MAPS = [f"smac_{name}" for name in MAPS] + list(SCENARIOS)


def smac_vec(name: str, n_envs: int = 8, compiled: bool = True) -> SMACVecEnv:
    venv = envs.make_vec(name, n_envs=n_envs, seed=11, compiled=compiled)
    assert isinstance(venv, SMACVecEnv)
    return venv


def random_actions(venv: SMACVecEnv, step, rng: np.random.Generator) -> dict[str, np.ndarray]:
    avail = step.group_avail["agent"]
    return {"agent": np.argmax(rng.random(avail.shape) * avail, -1)}


def run(venv: SMACVecEnv, steps: int, seed: int = 0) -> tuple[str, int]:
    """(sha256 of the battle state and rewards at every step, episodes ended) under random valid actions."""
    rng, digest, ended = np.random.default_rng(seed), hashlib.sha256(), 0
    step = venv.reset()
    for _ in range(steps):
        step = venv.step(random_actions(venv, step, rng))
        for value in venv.core.battle.state_dict().values():
            digest.update(np.ascontiguousarray(value).tobytes())
        digest.update(step.rewards["agent_0"].tobytes())
        ended += int(step.done.sum())
    return digest.hexdigest()[:16], ended


@pytest.mark.parametrize("name", ALL_MAPS)
def test_trajectories_are_those_of_the_numpy_step(name):
    """Fights, deaths, heals, splash, banelings, paths, crowds of 66 units, and the resets after episodes end."""
    assert run(smac_vec(name), 60)[0] == NUMPY_STEP_DIGESTS[name]


@pytest.mark.parametrize("name", ["smac_3s5z", "smac_MMM2", "smac_2c_vs_64zg", "smaclite_zerg_10_vs_11"])
def test_resuming_from_a_state_dict_continues_bit_for_bit(name):
    venv, rng = smac_vec(name), np.random.default_rng(3)
    step = venv.reset()
    for _ in range(25):
        step = venv.step(random_actions(venv, step, rng))
    saved, rng_state = venv.state_dict(), rng.bit_generator.state
    after = []
    for _ in range(25):
        step = venv.step(random_actions(venv, step, rng))
        after.append(venv.core.battle.state_dict())
    resumed = smac_vec(name)
    resumed.reset()
    step, exact = resumed.load_state_dict(saved)
    rng.bit_generator.state = rng_state
    assert exact
    for expected in after:
        step = resumed.step(random_actions(resumed, step, rng))
        for key, value in resumed.core.battle.state_dict().items():
            np.testing.assert_array_equal(value, expected[key], err_msg=key, strict=True)


# marines; medivacs; banelings, projectiles and hunting enemies; paths; the colossus beam; more than 20 units
@pytest.mark.parametrize("name", ["smac_3m", "smac_MMM", "smaclite_zerg_5_vs_5", "smac_2m_vs_1z", "smac_1c3s5z",
                                  "smac_corridor"])
def test_compiled_engine_equals_its_plain_python_run(name):
    assert run(smac_vec(name, n_envs=3), 50) == run(smac_vec(name, n_envs=3, compiled=False), 50)


@pytest.mark.parametrize("name", ["smac_3s5z", "smac_2s_vs_1sc", "smac_25m"])
def test_compiled_engine_equals_its_plain_python_run_in_a_crowd(name):
    """Every unit within 0.3 of one point: pushes summed over many overlapping units (dense and, on 25m,
    pair by pair), long pushes cut to MAX_PUSH where walls lie inside the map (2s_vs_1sc), pushes into walls."""
    runs = []
    for compiled in (True, False):
        venv, rng = smac_vec(name, n_envs=2, compiled=compiled), np.random.default_rng(1)
        step = venv.reset()
        s = venv.core.battle.state
        s.z[...] = s.z[:, :1] + (rng.uniform(-0.3, 0.3, s.z.shape) + 1j * rng.uniform(-0.3, 0.3, s.z.shape))
        for _ in range(3):  # stop (no-op once dead): only the pushes move the allies
            avail = step.group_avail["agent"]
            assert avail is not None
            step = venv.step({"agent": avail[..., 1].astype(np.int64)})
        runs.append(venv.core.battle.state_dict())
    for key, value in runs[0].items():
        np.testing.assert_array_equal(value, runs[1][key], err_msg=key, strict=True)


def test_complex_abs_equals_numpys_to_the_last_bit():
    rng = np.random.default_rng(0)
    scale = rng.choice(np.array([1e-30, 1e-4, 1.0, 30.0, 1e30], np.float32), (2, 200_000))
    parts = (rng.standard_normal((2, 200_000)) * scale).astype(np.float32)
    parts[:, :4] = [[0, 0, 3, -0.0], [0, 4, 0, 2]]
    z = (parts[0] + 1j * parts[1]).astype(np.complex64)
    np.testing.assert_array_equal(_abs_all(z), np.abs(z), strict=True)
    np.testing.assert_array_equal(plain()._abs_all(z[:2000]), np.abs(z[:2000]), strict=True)


def test_plain_fused_multiply_add_rounds_once():
    """The plain engine's fma equals the compiled one, also on ties that rounding twice would break."""
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((3, 5000)) * rng.choice([1e-3, 1.0, 30.0], (3, 5000))).astype(np.float32)
    # (2^-12 + 2^-35)(2^-12 - 2^-35) + (1 + 2^-23) is just below a tie in float32, exactly at one in float64
    head, tail = np.float32(2.0 ** -12), np.float32(2.0 ** -35)
    a, b, c = np.append(a, head + tail), np.append(b, head - tail), np.append(c, np.float32(1 + 2.0 ** -23))
    compiled = _fma_all(a, b, c)
    assert compiled[-1] == c[-1] != np.float32(np.float64(a[-1]) * np.float64(b[-1]) + np.float64(c[-1]))
    assert np.array_equal(compiled, [plain()._fma(x, y, z) for x, y, z in zip(a, b, c, strict=True)])
    assert not np.array_equal(compiled, a * b + c)


@njit
def _fma_all(a, b, c):
    out = np.empty(a.size, np.float32)
    for i in range(a.size):
        out[i] = _fma(a[i], b[i], c[i])
    return out
