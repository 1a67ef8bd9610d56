"""Weights & Biases as a logger (train.loggers=[tensorboard,wandb]), run in W&B's offline mode with no network:
the offline run's transaction log (<run dir>/wandb/offline-run-*/run-<id>.wandb) is read back record by record
and compared with metrics.csv, the run's config and its id in run.json."""
from __future__ import annotations

import csv
import json
import math
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from core.config import load_yaml
from core.experiments import ExperimentSpec, run_experiment
from core.experiments.grid import Cell, run_dir
from core.run_dir import run_id_of
from marl.cli import main as marl_main
from tests.test_hostile_inputs import SPREAD, assert_one_error_line

WANDB = "train.loggers=[tensorboard,wandb]"
TRAIN = [*SPREAD, "--n-envs", "2", "--steps", "64", "train.eval_interval=32", WANDB]  # 25-step episodes end


@pytest.fixture
def wandb_env(tmp_path, monkeypatch):
    """W&B's settings, cache and credentials confined to tmp_path, its process-wide setup fresh before and after
    (it reads the WANDB_* variables once)."""
    wandb = pytest.importorskip("wandb")
    home = tmp_path / "home"
    for var in ("WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_DATA_DIR", "WANDB_ARTIFACT_DIR", "WANDB_DIR"):
        monkeypatch.setenv(var, str(home / var.lower()))
    for var in ("WANDB_API_KEY", "WANDB_PROJECT", "WANDB_ENTITY", "WANDB_RUN_GROUP", "WANDB_RUN_ID", "WANDB_RESUME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NETRC", str(home / "netrc"))  # no credentials
    monkeypatch.setenv("WANDB_MODE", "offline")
    wandb.teardown()
    yield wandb
    wandb.teardown()


@dataclass
class OfflineRun:
    """What one offline W&B run recorded."""

    run_id: str = ""
    group: str = ""
    name: str = ""
    project: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    exit_code: int | None = None


def read_offline_run(path: Path) -> OfflineRun:
    """Decode a .wandb transaction log: a 7-byte header, then 32 KiB blocks of records (4-byte checksum,
    2-byte length, 1-byte type: full, or the first, middle and last parts of one split over blocks), each a
    protobuf Record."""
    from wandb.proto import wandb_internal_pb2 as pb

    data, block, pos, part, out = path.read_bytes(), 32768, 7, b"", OfflineRun()
    assert data[:4] == b":W&B"
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:  # too little room for a header: the block is padded
            pos += left
            continue
        _, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if length == 0 and kind == 0:
            pos += left
            continue
        part += data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind not in (1, 4):  # more of this record follows
            continue
        record = pb.Record()
        record.ParseFromString(part)
        part = b""
        which = record.WhichOneof("record_type")
        if which == "run":
            out.run_id, out.group, out.name = record.run.run_id, record.run.run_group, record.run.display_name
            out.project = record.run.project
            updates = record.run.config.update
        elif which == "config":
            updates = record.config.update
        elif which == "history":
            out.history.append({(item.key or "/".join(item.nested_key)): json.loads(item.value_json)
                                for item in record.history.item})
            continue
        elif which == "exit":
            out.exit_code = record.exit.exit_code
            continue
        else:
            continue
        out.config.update({u.key or "/".join(u.nested_key): json.loads(u.value_json) for u in updates})
    return out


def offline_runs(run: Path) -> list[OfflineRun]:
    """The offline W&B runs in run directory `run`, oldest first. W&B's service process may still be writing a
    finished run's log: teardown waits for it."""
    import wandb

    wandb.teardown()
    return [read_offline_run(p) for p in sorted(run.glob("wandb/offline-run-*/run-*.wandb"))]


def only_run(logdir: Path) -> Path:
    (run,) = logdir.glob("*/*/*/run.json")
    return run.parent


def metrics_csv(run: Path) -> list[tuple[int, str, float]]:
    with (run / "metrics.csv").open() as file:
        return [(int(r["step"]), r["tag"], float(r["value"])) for r in csv.DictReader(file)]


def assert_history_holds(history: list[dict[str, Any]], rows: list[tuple[int, str, float]]) -> None:
    """Every (env step, tag, value) row of metrics.csv is in a history row at that env step."""
    for step, tag, value in rows:
        logged = [h[tag] for h in history if h.get("env_steps") == step and tag in h]
        assert any(v == value or (math.isnan(value) and math.isnan(v)) for v in logged), (step, tag, value, logged)


def test_an_offline_run_holds_the_scalars_config_and_videos_and_a_resume_continues_it(wandb_env, tmp_path, capsys):
    logdir = tmp_path / "runs"
    assert marl_main([*TRAIN, "train.video_interval=32", "train.experiment=grid-a", "--logdir", str(logdir)]) == 0
    run = only_run(logdir)
    assert f"wandb sync {run / 'wandb' / 'offline-run-'}" in capsys.readouterr().out
    (first,) = offline_runs(run)
    assert first.run_id == run_id_of(run) and first.name == run.name and first.group == "grid-a"
    assert first.project == "concerto" and first.exit_code == 0
    assert {k: v for k, v in first.config.items() if k != "_wandb"} == load_yaml(run / "config.yaml")
    assert first.config["train"]["loggers"] == ["tensorboard", "wandb"]
    rows = metrics_csv(run)
    assert {tag for _, tag, _ in rows} >= {"train/episode_return", "eval/return_mean", "loss/policy"}
    assert_history_holds(first.history, rows)
    videos = [h for h in first.history if "video/greedy_episode/_type" in h]
    assert [h["env_steps"] for h in videos] == [32, 64] and videos[0]["video/greedy_episode/_type"] == "video-file"
    assert list(run.glob("events.out.tfevents.*"))  # TensorBoard as before

    assert marl_main(["--resume", str(run), "--steps", "96", "--no-progress"]) == 0
    runs = offline_runs(run)
    assert len(runs) == 2 and runs[1].run_id == first.run_id and runs[1].group == "grid-a"
    assert runs[1].config["train"]["steps"] == 96
    assert_history_holds(runs[1].history, metrics_csv(run)[len(rows):])
    assert min(h["env_steps"] for h in runs[1].history) > 64


def test_wandb_alone_writes_no_tensorboard_files(wandb_env, tmp_path, capsys):
    assert marl_main([*SPREAD, "train.loggers=[wandb]", "--logdir", str(tmp_path)]) == 0
    run = only_run(tmp_path)
    assert not list(run.glob("events.out.tfevents.*")) and (run / "metrics.csv").is_file()
    assert f"Run directory: {run}" in capsys.readouterr().out
    (offline,) = offline_runs(run)
    assert_history_holds(offline.history, metrics_csv(run))


def test_an_experiment_groups_its_cells_by_the_grid_name(wandb_env, tmp_path):
    spec = ExperimentSpec(["mappo"], ["mpe_simple_spread"], [0], 16,
                          overrides=[WANDB, "train.n_envs=1", "train.eval_episodes=1", "train.eval_envs=1",
                                     "algo.rollout_steps=8", "algo.ppo_epochs=1"])
    result = run_experiment(spec, tmp_path / "2024", in_process=True, progress=False, report=False)
    assert len(result.done) == 1 and not result.failed, result.failed
    run = run_dir(Cell("mappo", "mpe_simple_spread", 0).directory(tmp_path / "2024"))
    assert run is not None
    (offline,) = offline_runs(run)
    assert offline.group == "2024"  # quoted on the command line: a text, not the number 2024


def test_wandb_not_installed_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)  # `import wandb` raises ImportError
    assert marl_main([*SPREAD, WANDB, "--logdir", str(tmp_path)]) == 2
    assert_one_error_line(capsys.readouterr().err, "wandb, which is not installed: pip install 'concerto-marl[wandb]'")
    assert not list(tmp_path.rglob("run.json"))  # the run directory of a run that never started is removed


@pytest.mark.parametrize("mode, message", [
    ("online", "wandb, which is online but not logged in: run `wandb login`, set WANDB_API_KEY, or set "
               "WANDB_MODE=offline"),
    ("sometimes", "wandb rejects its settings: "),
])
def test_online_without_login_or_a_bad_mode_is_one_line_and_exit_2(mode, message, wandb_env, tmp_path, capsys,
                                                                    monkeypatch):
    monkeypatch.setenv("WANDB_MODE", mode)
    monkeypatch.setattr(sys, "stdin", None)  # a prompt would fail rather than wait
    assert marl_main([*SPREAD, WANDB, "--logdir", str(tmp_path / "runs")]) == 2
    assert_one_error_line(capsys.readouterr().err, message)
    assert not list((tmp_path / "runs").rglob("run.json"))
