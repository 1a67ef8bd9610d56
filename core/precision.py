"""CPU floating-point modes that speed training up, switched on only while a run trains."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch

# internal precision of float32 matmuls (oneDNN on CPU): exact float32, bfloat16 inputs with float32
# accumulation (AMX / AVX512-BF16 units), or TensorFloat-32
MATMUL_PRECISIONS = ("ieee", "bf16", "tf32")


@contextmanager
def training_float_modes(matmul_precision: str = "ieee") -> Iterator[None]:
    """Flush denormals and set the float32 matmul precision (one of MATMUL_PRECISIONS; TrainConfig
    validates it); both are restored on exit.

    Adam's second-moment estimates drift into denormal floats, which the CPU handles up to 10x slower.
    Flushing them is a per-thread CPU mode that numpy obeys too, hence only while training.
    """
    previous = torch.backends.mkldnn.matmul.fp32_precision
    torch.set_flush_denormal(True)
    torch.backends.mkldnn.matmul.fp32_precision = matmul_precision
    try:
        yield
    finally:
        torch.set_flush_denormal(False)
        torch.backends.mkldnn.matmul.fp32_precision = previous
