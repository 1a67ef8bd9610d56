import dataclasses
import importlib
from typing import Literal

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.added_keys import ADDED_KEYS, saved_env_options, saved_section
from core.buffers import RolloutBuffer, compute_gae
from core.checkpoint import FORMAT, load_checkpoint, save_checkpoint
from core.config import from_dict, load_yaml, parse_overrides
from core.errors import ConfigError, UserError
from core.normalizers import EMANormalizer, RunningNormalizer
from core.resume import resume_config
from core.run_config import TrainConfig, env_family, resolve_config
from marl.algos.coma import COMAConfig
from marl.algos.mappo import MAPPOConfig
from marl.algos.value_decomposition import ValueDecompositionConfig


@dataclasses.dataclass
class Cfg:
    lr: float = 1e-3
    layers: tuple[int, ...] = (64, 64)
    kind: Literal["a", "b"] = "a"
    flag: bool = False
    target: float | None = None


def test_from_dict_validates_keys_and_types():
    cfg = from_dict(Cfg, {"lr": 1, "layers": [32], "kind": "b", "target": 3})
    assert cfg.lr == 1.0 and cfg.layers == (32,) and cfg.kind == "b" and cfg.target == 3.0
    with pytest.raises(ConfigError, match=r"unknown key algo.lrr; valid keys: flag, kind, layers, lr, target"):
        from_dict(Cfg, {"lrr": 1}, "algo")
    with pytest.raises(ConfigError, match=r"algo.lr must be a number, got 'fast'"):
        from_dict(Cfg, {"lr": "fast"}, "algo")
    with pytest.raises(ConfigError, match=r"algo.flag must be true or false"):
        from_dict(Cfg, {"flag": 1}, "algo")
    with pytest.raises(ConfigError, match=r"algo.kind must be one of a, b"):
        from_dict(Cfg, {"kind": "c"}, "algo")
    with pytest.raises(ConfigError, match=r"algo.layers\[1\] must be an integer"):
        from_dict(Cfg, {"layers": [1, "x"]}, "algo")


def test_parse_overrides():
    assert parse_overrides(["a.b=1", "a.c=x", "d=[1, 2]", "e=true", "f="]) == {
        "a": {"b": 1, "c": "x"}, "d": [1, 2], "e": True, "f": ""}
    with pytest.raises(ConfigError, match="not of the form key=value"):
        parse_overrides(["oops"])


def test_load_yaml_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("algo: {lr: 1\n")
    with pytest.raises(ConfigError, match=r"malformed YAML in .*bad.yaml \(line"):
        load_yaml(bad)
    with pytest.raises(ConfigError, match="config file not found"):
        load_yaml(tmp_path / "missing.yaml")
    listy = tmp_path / "list.yaml"
    listy.write_text("- 1\n")
    with pytest.raises(ConfigError, match="must hold a mapping"):
        load_yaml(listy)


def test_resolve_config_layers(tmp_path):
    (tmp_path / "algos").mkdir()
    (tmp_path / "algos" / "mappo.yaml").write_text("algo: {lr: 0.1, ppo_epochs: 3}\ntrain: {n_envs: 4}\n")
    user = tmp_path / "user.yaml"
    user.write_text("algo: {lr: 0.2}\nenv: {max_cycles: 50}\n")
    train, algo, env = resolve_config("mappo", "mpe_x", MAPPOConfig, {"critic_input": "obs"}, str(user),
                                      {"seed": 7, "steps": None}, ["ppo_epochs=5", "train.eval_episodes=4"],
                                      config_dir=tmp_path)
    assert (algo.lr, algo.ppo_epochs, algo.critic_input) == (0.2, 5, "obs")
    assert (train.n_envs, train.seed, train.eval_episodes, train.steps) == (4, 7, 4, TrainConfig.steps)
    assert env == {"max_cycles": 50}
    with pytest.raises(ConfigError, match="unknown override key 'nope'"):
        resolve_config("mappo", "x", MAPPOConfig, overrides=["nope=1"], config_dir=tmp_path)
    user.write_text("algos: {}\n")
    with pytest.raises(ConfigError, match="unknown section algos; valid sections: train, algo, env"):
        resolve_config("mappo", "x", MAPPOConfig, config_file=str(user), config_dir=tmp_path)
    with pytest.raises(ConfigError, match=r"train.n_envs must be in \[1, 65536\], got 0"):
        resolve_config("mappo", "x", MAPPOConfig, overrides=["train.n_envs=0"], config_dir=tmp_path)


def test_a_family_file_serves_every_task_and_a_task_file_wins_over_it(tmp_path):
    for folder, name, text in (("envs", "lbf", "train: {eval_episodes: 100, steps: 9000}\n"),
                               ("envs", "lbf_8x8", "train: {eval_episodes: 50}\n"),
                               ("tuned", "mappo_lbf", "algo: {lr: 0.1, ppo_epochs: 3}\n"),
                               ("tuned", "mappo_lbf_8x8", "algo: {lr: 0.2}\n")):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / f"{name}.yaml").write_text(text)
    train, algo, _ = resolve_config("mappo", "lbf_8x8", MAPPOConfig, config_dir=tmp_path)
    assert (train.eval_episodes, train.steps, algo.lr, algo.ppo_epochs) == (50, 9000, 0.2, 3)
    train, algo, _ = resolve_config("mappo", "lbf_10x10", MAPPOConfig, config_dir=tmp_path)
    assert (train.eval_episodes, algo.lr) == (100, 0.1)
    train, algo, _ = resolve_config("ippo", "lbf_10x10", MAPPOConfig, config_dir=tmp_path)
    assert (train.eval_episodes, algo.lr) == (100, MAPPOConfig.lr)  # the tuned file is mappo's alone
    assert env_family("lbf_8x8-2p-2f-coop") == "lbf" and env_family("smac_3m") == "smac"
    assert env_family("my_pkg.envs:make") is None and env_family("pong") is None


def naive_gae(rewards, values, next_values, continues, gamma, lam):
    adv = np.zeros_like(rewards)
    for idx in np.ndindex(rewards.shape[1:]):
        running = 0.0
        for t in reversed(range(rewards.shape[0])):
            delta = rewards[(t, *idx)] + gamma * next_values[(t, *idx)] - values[(t, *idx)]
            running = delta + gamma * lam * continues[(t, *idx)] * running
            adv[(t, *idx)] = running
    return adv


def test_a_config_saved_before_an_option_existed_reads_as_that_version_ran():
    assert MAPPOConfig().agent_specific_state  # today's default
    old = from_dict(MAPPOConfig, saved_section(MAPPOConfig, {"critic_input": "state"}))
    assert old.agent_specific_state is False and old.critic_input == "state"
    assert from_dict(MAPPOConfig, saved_section(MAPPOConfig, {"agent_specific_state": True})).agent_specific_state
    assert saved_section(TrainConfig, {"seed": 3}) == {"seed": 3}  # a class with nothing added since
    assert from_dict(COMAConfig, saved_section(COMAConfig, {})).policy_gradient == "sampled"
    boltzmann = from_dict(COMAConfig, saved_section(COMAConfig, {"policy_gradient": "boltzmann"}))
    assert boltzmann.reverse_kl_final == 0.0 and COMAConfig().reverse_kl_final == 1.0
    assert from_dict(ValueDecompositionConfig, saved_section(ValueDecompositionConfig, {})).td_lambda == 0.0



def test_new_runs_record_added_env_options_and_old_runs_read_as_they_ran():
    """SMAC runs saved before the enemies were shuffled between episodes ran with the map's order."""
    assert resolve_config("mappo", "smac_MMM2", MAPPOConfig)[2] == {"fixed_enemy_order": False}
    assert "fixed_enemy_order" not in resolve_config("mappo", "mpe_simple_spread", MAPPOConfig)[2]
    assert saved_env_options("smac_MMM2", {}) == {"fixed_enemy_order": True}
    assert saved_env_options("smac_MMM2", {"fixed_enemy_order": False}) == {"fixed_enemy_order": False}
    assert saved_env_options("smaclite_zerg_5_vs_5", {}) == {}
    meta = {"env": "smac_MMM2", "config": {"train": {}, "algo": {}, "env": {"obs_last_action": True}}}
    for overrides in ([], ["env.fixed_enemy_order=true"]):
        env = resume_config(meta, MAPPOConfig, {}, None, {}, overrides, "old")[2]
        assert env == {"fixed_enemy_order": True, "obs_last_action": True}
    with pytest.raises(UserError, match="cannot change env options"):
        resume_config(meta, MAPPOConfig, {}, None, {}, ["env.fixed_enemy_order=false"], "old")


def test_every_added_key_is_a_field_whose_default_changed_since():
    for entry in ADDED_KEYS:
        module, _, name = entry.config.rpartition(".")
        cls = vars(importlib.import_module(module))[name]
        default = {f.name: f.default for f in dataclasses.fields(cls)}[entry.key]
        assert default != entry.saved_without, entry  # else the entry changes nothing
        assert vars(from_dict(cls, {entry.key: entry.saved_without}))[entry.key] == entry.saved_without
    assert len({(entry.config, entry.key) for entry in ADDED_KEYS}) == len(ADDED_KEYS)


def test_gae_hand_example():
    # one env, three steps, episode ends (terminated) after step 1, new episode truncated after step 2
    rewards = np.array([[1.0], [2.0], [3.0]])
    values = np.array([[0.5], [1.0], [2.0]])
    next_values = np.array([[1.0], [0.0], [4.0]])  # V(s1), terminated -> 0, truncated -> V(final)
    continues = np.array([[1.0], [0.0], [0.0]])
    adv, ret = compute_gae(rewards, values, next_values, continues, gamma=0.5, lam=0.5)
    d2 = 3 + 0.5 * 4 - 2  # 3
    d1 = 2 + 0 - 1  # 1
    d0 = 1 + 0.5 * 1 - 0.5  # 1
    np.testing.assert_allclose(adv[:, 0], [d0 + 0.25 * d1, d1, d2])
    np.testing.assert_allclose(ret, adv + values)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(1, 3), st.floats(0, 1), st.floats(0, 1), st.integers(0, 10_000))
def test_gae_matches_naive(t, e, gamma, lam, seed):
    rng = np.random.default_rng(seed)
    r, v, nv = (rng.normal(size=(t, e, 2)) for _ in range(3))
    c = rng.integers(0, 2, (t, e, 2)).astype(float)
    adv, _ = compute_gae(r, v, nv, c, gamma, lam)
    np.testing.assert_allclose(adv, naive_gae(r, v, nv, c, gamma, lam), atol=1e-9)


def test_rollout_buffer_add_and_overflow():
    buf = RolloutBuffer(2, 3, {"x": ((2,), np.dtype(np.float32)), "d": ((), np.dtype(bool))})
    buf.add(x=np.ones((3, 2)), d=np.array([True, False, True]))
    buf.add(x=np.full((3, 2), 2.0), d=np.zeros(3, bool))
    assert buf.full and buf["x"][1, 0, 0] == 2.0 and buf["d"][0].tolist() == [True, False, True]
    with pytest.raises(IndexError):
        buf.add(x=np.zeros((3, 2)))


@settings(max_examples=25, deadline=None)
@given(st.lists(arrays(np.float64, st.tuples(st.integers(1, 20), st.just(2)),
                       elements=st.floats(-100, 100)), min_size=1, max_size=5))
def test_running_normalizer_matches_numpy(batches):
    norm = RunningNormalizer(shape=(2,), eps=0.0)
    norm.count.fill_(0.0)
    for b in batches:
        norm.update(torch.as_tensor(b))
    all_x = np.concatenate(batches)
    np.testing.assert_allclose(norm.mean.numpy(), all_x.mean(0), atol=1e-6)
    np.testing.assert_allclose(norm.var.numpy(), all_x.var(0), atol=1e-5, rtol=1e-6)


def test_normalizer_mask_and_roundtrip():
    norm = RunningNormalizer()
    x = torch.tensor([[1.0, 100.0], [3.0, -100.0]])
    norm.update(x, mask=torch.tensor([[True, False], [True, False]]))
    assert abs(float(norm.mean) - 2.0) < 1e-4
    y = torch.tensor([5.0])
    torch.testing.assert_close(norm.denormalize(norm.normalize(y)), y)


def test_ema_normalizer_is_the_debiased_moving_average_by_hand():
    """The MAPPO code's ValueNorm: one beta-weighted step per batch, whatever its size, divided by the same average
    of ones; the variance floored at 0.01 (so 0.1 is the scale before any batch)."""
    assert EMANormalizer().beta == 0.99999
    norm = EMANormalizer(beta=0.9)
    torch.testing.assert_close(norm.normalize(torch.tensor([1.0])), torch.tensor([10.0]))  # mean 0, var 0.01
    norm.update(torch.tensor([1.0, 3.0]))  # mean 2, mean square 5
    mean, var = norm.mean_var()
    assert (float(mean), float(var)) == pytest.approx((2.0, 1.0))  # the first batch's own moments, debiased
    norm.update(torch.tensor([[10.0], [20.0], [30.0]]))  # mean 20, mean square 1400 / 3
    debias = 0.1 * 0.9 + 0.1
    m = (0.1 * 0.9 * 2.0 + 0.1 * 20.0) / debias
    v = (0.1 * 0.9 * 5.0 + 0.1 * 1400 / 3) / debias - m**2
    mean, var = norm.mean_var()
    assert (float(mean), float(var)) == pytest.approx((m, v))
    x = torch.tensor([7.0, -2.0], dtype=torch.float64)
    torch.testing.assert_close(norm.normalize(x), (x - m) / v**0.5)
    torch.testing.assert_close(norm.denormalize(norm.normalize(x)), x)
    norm.update(torch.tensor([[5.0], [5.0]]), mask=torch.tensor([[False], [False]]))  # no rows: nothing moves
    assert float(norm.mean_var()[0]) == pytest.approx(m)
    flat = EMANormalizer(beta=0.9)
    flat.update(torch.full((4,), 3.0))
    assert float(flat.mean_var()[1]) == pytest.approx(0.01)  # a constant batch: the floor


def test_checkpoint_roundtrip_is_atomic_and_weights_only(tmp_path):
    net = torch.nn.Linear(3, 2)
    path = tmp_path / "ckpt"
    state = {"net": net.state_dict(), "buf": {"a/b": np.arange(4), "n": [np.float32(2.5), 3]}, "rng": (1, None)}
    save_checkpoint(path, state, {"step": 5})
    save_checkpoint(path, {**state, "step": torch.tensor(6)}, {"step": 6})  # overwrite in place
    torch.load(path / "tensors.pt", weights_only=True)
    loaded, meta = load_checkpoint(path)
    assert meta == {"format": FORMAT, "step": 6}
    torch.testing.assert_close(loaded["net"]["weight"], net.weight.detach())
    np.testing.assert_array_equal(loaded["buf"]["a/b"], np.arange(4))
    assert loaded["buf"]["n"] == [np.float32(2.5), 3] and type(loaded["buf"]["n"][0]) is np.float32
    assert loaded["rng"] == (1, None) and int(loaded["step"]) == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]  # no temp dirs left behind

    class Boom:
        pass
    with pytest.raises(TypeError):
        save_checkpoint(path, {}, {"bad": Boom()})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]
    assert load_checkpoint(path)[1]["step"] == 6


