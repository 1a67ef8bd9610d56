"""configs/reference/ holds published recipes: each must load and validate, and set every key of its algorithm so
that no tuned/ layer underneath changes the recipe; a renamed or added config key fails here."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from core.checkpoint import load_checkpoint
from core.config import load_yaml, to_dict
from core.paths import CONFIG_DIR
from core.run_config import resolve_config
from marl.algos import ALGOS
from marl.cli import main

FILES = sorted((CONFIG_DIR / "reference").glob("*.yaml"))


def algo_and_env(path: Path) -> tuple[str, str]:
    """`<algo>_smac_<map>.yaml` -> (algo, env name)."""
    algo, _, smac_map = path.stem.partition("_smac_")
    return algo, f"smac_{smac_map}"


def test_reference_files_exist():
    assert {algo_and_env(p)[0] for p in FILES} == {"mappo", "qmix"}
    envs = {algo_and_env(p)[1] for p in FILES}
    assert {"smac_3m", "smac_8m", "smac_2s3z", "smac_3s5z", "smac_5m_vs_6m", "smac_MMM2", "smac_corridor"} <= envs


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_reference_file_resolves_to_its_own_values(path):
    algo, env = algo_and_env(path)
    entry = ALGOS[algo]
    train, algo_cfg, env_kwargs = resolve_config(algo, env, entry.config_class, entry.defaults,
                                                 config_file=str(path))
    data = load_yaml(path)
    keys = {f.name for f in dataclasses.fields(entry.config_class)}
    assert set(data["algo"]) == keys, f"{path.name}: set every algo key; missing {sorted(keys - set(data['algo']))}"
    resolved = to_dict(algo_cfg)
    assert {k: resolved[k] for k in data["algo"]} == data["algo"]
    assert {k: getattr(train, k) for k in data["train"]} == data["train"]
    assert env_kwargs == {"fixed_enemy_order": False, **(data.get("env") or {})}  # recorded by every SMAC run


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_reference_file_cites_its_source(path):
    header = path.read_text().split("\ntrain:")[0]
    repo = {"mappo": "marlbenchmark/on-policy", "qmix": "hijkzzz/pymarl2"}[algo_and_env(path)[0]]
    assert f"Source: {repo} at commit " in header
    assert "Not mapped" in header


def test_the_mmm2_recipe_runs_one_update_through_the_command_line(tmp_path):
    """One rollout and update of the MAPPO MMM2 recipe (3,200 env steps on 8 envs): it exits 0, and the checkpoint
    holds LayerNorms after the hidden layers and the GRU and the MAPPO code's value normaliser, moved once per
    minibatch of each epoch (5 x 2 steps of beta 0.99999)."""
    path = CONFIG_DIR / "reference" / "mappo_smac_MMM2.yaml"
    assert main(["--algo", "mappo", "--env", "smac_MMM2", "--config", str(path), "--steps", "3200", "--n-envs", "8",
                 "--no-progress", "--logdir", str(tmp_path)]) == 0
    (checkpoint,) = tmp_path.glob("smac_MMM2/mappo/*/checkpoints/step-000003200")
    state, meta = load_checkpoint(checkpoint)
    algo = meta["config"]["algo"]
    assert (algo["layer_norm"], algo["value_normalizer"], algo["bootstrap_truncated"]) == (True, "ema", False)
    nets = state["agent"]["nets"]
    for net in ("actor", "critic"):
        assert nets[f"agent.{net}.mlp.2.weight"].shape == nets[f"agent.{net}.mlp.5.weight"].shape == (1, 64)
        assert nets[f"agent.{net}.rnn_norm.weight"].shape == (1, 64)
    assert float(state["agent"]["value_norm"]["agent.debias"]) == pytest.approx(1 - 0.99999 ** 10, rel=1e-9)
