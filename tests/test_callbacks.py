import ast
import inspect
import json
from importlib import metadata
from pathlib import Path
from typing import cast

import pytest

from core.callbacks import Callback, CallbackList, Trainer, load_callback
from core.errors import UnknownNameError, UserError
from core.trainer import Trainer as LoopTrainer
from examples.callback_plugin import BestReturnTracker
from marl.cli import main
from tests.test_cli import QUICK

DOCS = Path(__file__).resolve().parents[1] / "docs"


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


def test_the_guide_and_the_api_reference_give_every_hook_and_what_the_trainer_offers():
    """The guide names each hook with its arguments and each Trainer member a callback may use; the API
    reference shows them all (mkdocstrings leaves out members without a docstring)."""
    page = (DOCS / "guide" / "callbacks.md").read_text()
    hooks = [(name, f) for name, f in inspect.getmembers(Callback, inspect.isfunction) if name.startswith("on_")]
    assert len(hooks) == 7
    for name, hook in hooks:
        assert f"`{name}({', '.join(list(inspect.signature(hook).parameters)[1:])})`" in page
        assert hook.__doc__, f"Callback.{name} has no docstring"
    protocol = ast.parse(inspect.getsource(Trainer)).body[0]
    assert isinstance(protocol, ast.ClassDef)
    members: dict[str, bool] = {}
    for stmt, after in zip(protocol.body, [*protocol.body[1:], None], strict=True):
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):  # documented by the next string
            members[stmt.target.id] = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
        elif isinstance(stmt, ast.FunctionDef):
            members[stmt.name] = ast.get_docstring(stmt) is not None
    assert members == dict.fromkeys(["run_dir", "env_steps", "total_steps", "updates", "request_stop", "evaluate",
                                     "save_checkpoint"], True)
    for member in ("run_dir", "env_steps", "total_steps", "updates", "request_stop(reason)", "evaluate()",
                   "save_checkpoint()"):
        assert f"`{member}`" in page
    assert "members: [Callback, Trainer, load_callback]" in (DOCS / "reference" / "api.md").read_text()
    assert "run_dir:" in (LoopTrainer.__doc__ or "") and LoopTrainer.request_stop.__doc__
