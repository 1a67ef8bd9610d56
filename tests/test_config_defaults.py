"""The typed config dataclasses are the one source of defaults: configs/algos/*.yaml show them, unchanged."""
from __future__ import annotations

import dataclasses

import pytest

import marl.algos
import single_agent.algos
from core.config import load_yaml, to_dict
from core.paths import CONFIG_DIR

AnyAlgoEntry = marl.algos.AlgoEntry | single_agent.algos.AlgoEntry
ENTRIES: dict[str, AnyAlgoEntry] = {**marl.algos.ALGOS, **single_agent.algos.ALGOS}
VARIANTS = {"ippo": "mappo", "iql": "qmix", "vdn": "qmix", "ddpg": "td3"}  # variant -> the file listing every key


def shown(algo: str) -> dict:
    return load_yaml(CONFIG_DIR / "algos" / f"{algo}.yaml").get("algo") or {}


@pytest.mark.parametrize("algo", sorted(ENTRIES))
def test_algo_yaml_values_are_the_dataclass_defaults(algo):
    entry = ENTRIES[algo]
    defaults = to_dict(entry.config_class(**entry.defaults))
    assert shown(algo) == {key: defaults[key] for key in shown(algo)}


@pytest.mark.parametrize("algo", sorted(ENTRIES))
def test_base_files_list_every_key_and_variants_only_what_they_fix(algo):
    entry = ENTRIES[algo]
    keys = {f.name for f in dataclasses.fields(entry.config_class)}
    if algo in VARIANTS:
        assert ENTRIES[VARIANTS[algo]].config_class is entry.config_class
        assert set(shown(algo)) <= set(entry.defaults)
    else:
        assert set(shown(algo)) == keys, f"{algo}.yaml misses {sorted(keys - set(shown(algo)))}"
