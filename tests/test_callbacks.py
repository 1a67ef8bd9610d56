import json
from importlib import metadata
from typing import cast

import pytest

from core.callbacks import Callback, CallbackList, Trainer, load_callback
from core.errors import UnknownNameError, UserError
from examples.callback_plugin import BestReturnTracker
from marl.cli import main
from tests.test_cli import QUICK


class Recorder(Callback):
    calls: list[str] = []

    def on_train_start(self, trainer):
        Recorder.calls.append("train_start")

    def on_step(self, trainer, n_env_steps):
        Recorder.calls.append("step")

    def on_episode_end(self, trainer, episodes):
        Recorder.calls.append("episode_end")

    def on_update_end(self, trainer, metrics):
        assert "loss/policy" in metrics
        Recorder.calls.append("update_end")

    def on_eval_end(self, trainer, metrics):
        assert "eval/return_mean" in metrics
        Recorder.calls.append("eval_end")

    def on_checkpoint(self, trainer, path):
        assert (path / "tensors.pt").is_file()
        Recorder.calls.append("checkpoint")

    def on_train_end(self, trainer):
        Recorder.calls.append("train_end")


class StopAfterFirstUpdate(Callback):
    def on_update_end(self, trainer, metrics):
        trainer.request_stop("plugin says stop")


def test_every_hook_fires_in_a_cli_run(tmp_path):
    Recorder.calls = []
    assert main(["--algo", "mappo", "--env", "examples.custom_env:make_env", *QUICK, "--logdir", str(tmp_path),
                 "--callback", "tests.test_callbacks:Recorder"]) == 0
    calls = Recorder.calls
    assert calls[0] == "train_start" and calls[-1] == "train_end"
    assert calls.count("step") == 200 and calls.count("update_end") == 10
    assert calls.count("episode_end") == 20  # 400 steps / 10-step episodes, 2 envs finishing together
    assert calls.count("eval_end") == 2 and calls.count("checkpoint") == 1


def test_a_callback_can_stop_training_and_targets_stop_it(tmp_path):
    out = tmp_path / "s.json"
    assert main(["--algo", "mappo", "--env", "examples.custom_env:make_env", *QUICK, "--logdir", str(tmp_path),
                 "--callback", "tests.test_callbacks:StopAfterFirstUpdate", "--summary-json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["env_steps"] == 40 and data["stop_reason"] == "plugin says stop"
    assert main(["--algo", "mappo", "--env", "examples.custom_env:make_env", *QUICK, "--logdir", str(tmp_path),
                 "train.target_return=-1", "--summary-json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["env_steps"] == 200 and "reached target -1" in data["stop_reason"]


def test_load_callback_from_module_and_entry_point(monkeypatch):
    assert isinstance(load_callback("examples.callback_plugin:BestReturnTracker"), BestReturnTracker)
    with pytest.raises(UserError, match=r"not a subclass of core\.callbacks\.Callback"):
        load_callback("pathlib:Path")
    with pytest.raises(UserError, match="has no attribute"):
        load_callback("examples.callback_plugin:Nope")
    point = metadata.EntryPoint(name="best", value="examples.callback_plugin:BestReturnTracker",
                                group="concerto.callbacks")
    monkeypatch.setattr(metadata, "entry_points",
                        lambda group=None: [point] if group == "concerto.callbacks" else [])
    assert isinstance(load_callback("best"), BestReturnTracker)
    with pytest.raises(UnknownNameError, match=r"unknown callback 'other'.*\(best\)"):
        load_callback("other")


def test_callback_list_runs_in_order():
    seen = []

    class A(Callback):
        order = 5

        def on_train_end(self, trainer):
            seen.append("a")

    class B(Callback):
        order = 1

        def on_train_end(self, trainer):
            seen.append("b")

    CallbackList([A(), B()]).on_train_end(cast(Trainer, None))  # these hooks never touch the trainer
    assert seen == ["b", "a"]
