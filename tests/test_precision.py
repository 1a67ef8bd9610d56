"""Training's float modes reach torch's intra-op worker threads, and are undone afterwards."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from core.precision import training_float_modes


def flushed_fraction() -> float:
    """Fraction of a large denormal tensor an elementwise op (split across the intra-op threads) turns to 0."""
    # float32 bit pattern 2^20: exponent 0, so about 1.5e-39, made without float arithmetic (which would flush it)
    x = torch.full((1 << 22,), 1 << 20, dtype=torch.int32).view(torch.float32)
    return float(((x * 1.0) == 0).float().mean())


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores for a worker thread")
def test_denormals_are_flushed_on_every_intra_op_thread_only_while_training():
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert flushed_fraction() == 0.0  # the worker thread exists now, started without flushing
        with training_float_modes():
            assert flushed_fraction() == 1.0  # the main thread's half and the worker's
        assert flushed_fraction() == 0.0
    finally:
        torch.set_num_threads(threads)


def test_a_training_run_leaves_the_process_as_it_found_it(tmp_path):
    """Threads, the denormal mode and the matmul precision are the run's only while it trains."""
    from core.precision import flushes_denormals
    from marl.cli import main

    matmul = torch.backends.mkldnn.matmul  # type: ignore[attr-defined]  # set at import, missing from the stubs
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        before = (torch.get_num_threads(), flushes_denormals(), matmul.fp32_precision)
        assert main(["--algo", "mappo", "--env", "mpe_simple_spread", "--steps", "200", "--n-envs", "2",
                     "--no-progress", "--logdir", str(tmp_path), "rollout_steps=25", "train.torch_threads=1",
                     "train.matmul_precision=bf16"]) == 0
        assert (torch.get_num_threads(), flushes_denormals(), matmul.fp32_precision) == before
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("env, policy", [({}, "PASSIVE"), ({"OMP_WAIT_POLICY": "ACTIVE"}, "ACTIVE"),
                                         ({"GOMP_SPINCOUNT": "1000"}, None)])
def test_processes_let_idle_openmp_workers_sleep_unless_the_user_chose(env, policy):
    """prepare_process (every entry point's first call) sets OpenMP's passive wait policy before torch loads, and
    keeps a user's own wait policy or spin count."""
    code = ("import os; from core.startup import prepare_process; prepare_process(); "
            "print(os.environ.get('OMP_WAIT_POLICY'))")
    base = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    out = subprocess.run([sys.executable, "-c", code], env={**base, **env}, capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parent.parent).stdout.strip()
    assert out == str(policy)
