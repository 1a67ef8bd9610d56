"""CPU floating-point modes that speed training up, switched on only while a run trains."""
from __future__ import annotations

import ctypes
import functools
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

import torch
from threadpoolctl import threadpool_limits

# internal precision of float32 matmuls (oneDNN on CPU): exact float32, bfloat16 inputs with float32
# accumulation (AMX / AVX512-BF16 units), or TensorFloat-32
MATMUL_PRECISIONS = ("ieee", "bf16", "tf32")

# OpenMP runtimes: GNU libgomp (torch's Linux wheels), Intel's libiomp5 and LLVM's libomp (both also export GOMP_)
_OPENMP_LIBRARY = re.compile(r"^lib(gomp|iomp5|omp)[.-]")
_PARALLEL_BODY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@contextmanager
def cpu_threads(n: int) -> Iterator[None]:
    """torch's intra-op threads and the BLAS threads of numpy (the built-in simulator's matrix products) set to
    `n` inside the block, restored on exit. Left alone, OpenBLAS runs one thread per core: two runs side by side
    on two cores then spin against each other (MAPPO on smac_8m ran 3.5x slower)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        with threadpool_limits(limits=n, user_api="blas"):
            yield
    finally:
        torch.set_num_threads(previous)


@contextmanager
def training_float_modes(matmul_precision: str = "ieee") -> Iterator[None]:
    """Flush denormals and set the float32 matmul precision (one of MATMUL_PRECISIONS; TrainConfig
    validates it); both are restored on exit.

    Adam's moment estimates decay into denormal floats, which the CPU handles up to 10x slower. Flushing them
    is a per-thread CPU mode that numpy obeys too, hence only while training, and on torch's intra-op worker
    threads as well as this one.
    """
    # set by torch's module wrapper at import, missing from torch's type hints
    matmul = torch.backends.mkldnn.matmul  # type: ignore[attr-defined]
    previous, flushing = matmul.fp32_precision, flushes_denormals()
    set_flush_denormal_all_threads(True)
    matmul.fp32_precision = matmul_precision
    try:
        yield
    finally:
        set_flush_denormal_all_threads(flushing)
        matmul.fp32_precision = previous


def flushes_denormals() -> bool:
    """Whether this thread's CPU treats denormal floats as zero (what `torch.set_flush_denormal` turns on)."""
    return bool(torch.tensor([1e-40], dtype=torch.float32).mul(1.0)[0] == 0.0)


def set_flush_denormal_all_threads(on: bool) -> None:
    """`torch.set_flush_denormal` on this thread and on every thread of torch's OpenMP team.

    torch's call sets the calling thread's CPU mode only, while the OpenMP workers keep the mode they started
    with; so it also runs once on each of them, in one parallel region of the intra-op team's size. Where no
    OpenMP runtime can be found (not Linux, or another threading backend), only this thread is set.
    """
    torch.set_flush_denormal(on)
    runtime = _openmp_runtime()
    if runtime is not None and torch.get_num_threads() > 1:
        body = _PARALLEL_BODY(lambda _: torch.set_flush_denormal(on))
        runtime.GOMP_parallel(body, None, ctypes.c_uint(torch.get_num_threads()), ctypes.c_uint(0))


@functools.cache
def _openmp_runtime() -> ctypes.CDLL | None:
    """The OpenMP runtime loaded in this process (found in /proc/self/maps), or None."""
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({line.split()[-1] for line in maps if "/" in line})
    except OSError:
        return None
    for path in paths:
        if _OPENMP_LIBRARY.match(os.path.basename(path)):
            try:
                runtime = ctypes.CDLL(path)
            except OSError:
                continue
            if hasattr(runtime, "GOMP_parallel"):
                return runtime
    return None
