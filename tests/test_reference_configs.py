"""configs/reference/ holds published recipes: each must load and validate, and set every key of its algorithm so
that no tuned/ layer underneath changes the recipe; a renamed or added config key fails here."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from core.config import load_yaml, to_dict
from core.paths import CONFIG_DIR
from core.run_config import resolve_config
from marl.algos import ALGOS

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
    assert env_kwargs == (data.get("env") or {})


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_reference_file_cites_its_source(path):
    header = path.read_text().split("\ntrain:")[0]
    repo = {"mappo": "marlbenchmark/on-policy", "qmix": "hijkzzz/pymarl2"}[algo_and_env(path)[0]]
    assert f"Source: {repo} at commit " in header
    assert "Not mapped" in header
