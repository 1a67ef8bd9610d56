"""Which float path does this machine's PyTorch take? A fingerprint for comparing training runs across CPUs.

    python benchmarks/float_path.py
    ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 python benchmarks/float_path.py

Runs the kernels a MAPPO update uses (linear layers with LayerNorm and ReLU on batch sizes of a rollout,
log-softmax, tanh, a GRU, and their backward passes) on fixed random inputs with one thread and prints a hash
of every result's bytes, with the CPU's name and the versions. Two machines that print the same hash round
these kernels alike, so the same seed is likely to give the same training run on both (the simulator is NumPy
and was the same everywhere it was checked); different hashes mean different trajectories from the first
updates on, and a learning claim has to be checked on each. BENCHMARKS.md ("Clip range 0.1") lists what it
printed on the machines used there.
"""
from __future__ import annotations

import hashlib
import platform

import numpy as np
import torch

SHAPES = [(3200, 150, 64), (256, 64, 64), (25600, 64, 64), (32, 64, 14), (1, 130, 64), (800, 64, 14)]


def fingerprint() -> str:
    """sha256 (first 16 hex digits) of the kernels' outputs and gradients."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    digest = hashlib.sha256()
    for n, k, m in SHAPES:
        x = torch.randn(n, k, requires_grad=True)
        linear, norm = torch.nn.Linear(k, m), torch.nn.LayerNorm(k)
        y = torch.relu(linear(norm(x)))
        (torch.log_softmax(y, -1).exp().sum() + torch.tanh(y).mean()).backward()
        for t in (y, x.grad, linear.weight.grad):
            digest.update(_bytes(t))
    gru = torch.nn.GRU(64, 64, batch_first=True)
    out, _ = gru(torch.randn(32, 10, 64))
    out.sum().backward()
    digest.update(_bytes(out))
    for p in gru.parameters():
        digest.update(_bytes(p.grad))
    return digest.hexdigest()[:16]


def _bytes(t: torch.Tensor | None) -> bytes:
    if t is None:
        raise RuntimeError("a kernel left no gradient")
    return t.detach().numpy().tobytes()


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown"


if __name__ == "__main__":
    print(f"{fingerprint()}  {cpu_name()}; torch {torch.__version__} ({torch.backends.cpu.get_cpu_capability()}), "
          f"numpy {np.__version__}")
