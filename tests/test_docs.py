"""The documentation site's generated pages: the config reference covers every key, the benchmark pages every report."""
from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import marl.algos
import single_agent.algos
from core.run_config import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / "docs" / "hooks"


def hook(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"docs_hooks_{name}", HOOKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_config_reference_lists_every_field_of_every_config_class():
    reference = hook("config_reference").reference()
    classes = {TrainConfig: "train"} | {entry.config_class: "algo" for registry in
                                        (marl.algos.ALGOS, single_agent.algos.ALGOS) for entry in registry.values()}
    assert len(classes) == 8  # train, MAPPO, COMA, IQL/VDN/QMIX, DQN, TD3/DDPG, SAC, PPO
    for cls, section in classes.items():
        assert f"`{cls.__module__}.{cls.__qualname__}`" in reference
        for field in dataclasses.fields(cls):
            assert f"| `{section}.{field.name}` |" in reference, f"{cls.__name__}.{field.name} missing"


def test_config_reference_reads_each_fields_comment_and_default():
    ref = hook("config_reference")
    shown = {f.name: f for f in ref.fields(TrainConfig)}
    assert shown["checkpoint_interval"].doc == "env steps between periodic checkpoints (0: only at the end)"
    assert shown["checkpoint_interval"].default == "100000"
    assert shown["target_return"].default == "null"
    assert "schedules annealed over the run" in shown["schedule_steps"].doc  # comment lines above the field
    dqn = {f.name: f for f in ref.fields(single_agent.algos.ALGOS["dqn"].config_class, ["dqn"])}
    assert dqn["fast_path"].doc.startswith("true: the learner's fast update")  # inherited from OffPolicyConfig
    assert dqn["hidden_sizes"].default.startswith("[")  # a default_factory's value


def test_config_reference_describes_each_class_by_its_docstring_never_by_a_generated_signature():
    ref = hook("config_reference")
    reference = ref.reference()
    for cls, _, _ in ref.config_classes().values():
        summary = ref.description(cls)
        assert summary and f"`{cls.__module__}.{cls.__qualname__}`: {summary}" in reference, cls.__name__
        assert f"{cls.__name__}(" not in reference  # the signature dataclass writes as a missing docstring
    assert "<factory>" not in reference

    @dataclasses.dataclass
    class Undocumented:
        sizes: list[int] = dataclasses.field(default_factory=list)

    assert ref.description(Undocumented) == ""


def test_config_markers_expand_and_unknown_ones_fail():
    ref = hook("config_reference")
    page = ref.expand("# x\n\n<!-- config: COMAConfig -->\n")
    assert "| `algo.temperature` |" in page and "<!--" not in page
    try:
        ref.expand("<!-- config: NoSuchConfig -->")
    except ValueError as err:
        assert "NoSuchConfig" in str(err)
    else:
        raise AssertionError("an unknown config marker must fail the build")


def test_benchmark_index_links_every_committed_report():
    reports = hook("benchmark_reports")
    found = reports.reports()
    assert found and all((r / "summary.md").exists() for r in found)
    index = reports.index()
    for report in found:
        assert f"(reports/{report.name}.md)" in index
    tasks, algos = reports.tasks_and_algos((reports.RESULTS / "smac_3m_retaliation" / "summary.md").read_text())
    assert tasks == ["smac_3m"] and sorted(algos) == ["coma", "ippo", "iql", "mappo", "qmix", "vdn"]


def test_the_quickstart_says_the_first_smac_run_waits_for_numba_at_step_0():
    """Else a newcomer takes the half minute at step 0 of the quickstart's command for a hang."""
    for page in (ROOT / "README.md", ROOT / "docs" / "getting-started.md"):
        text = " ".join(page.read_text().split())
        assert "The first SMAC run sits at step 0 for about half a minute while numba compiles the simulator" in text


def test_the_runs_page_names_every_file_a_run_writes(tmp_path: Path) -> None:
    from marl.cli import main

    assert main(["--algo", "mappo", "--env", "examples.custom_env:make_env", "--steps", "40", "--n-envs", "2",
                 "--no-progress", "--logdir", str(tmp_path), "rollout_steps=20", "train.eval_episodes=2",
                 "train.eval_envs=2", "train.eval_interval=40"]) == 0
    (run,) = tmp_path.glob("*/*/*")
    page = (ROOT / "docs" / "guide" / "runs.md").read_text()
    for entry in run.iterdir():
        name = "events.out.tfevents.*" if entry.name.startswith("events.out.tfevents.") else entry.name
        assert f"`{name}{'/' if entry.is_dir() else ''}" in page, entry.name
