"""Session-wide test settings."""
from collections.abc import Iterator

import pytest

from core.precision import cpu_threads


@pytest.fixture(autouse=True, scope="session")
def one_thread() -> Iterator[None]:
    """Tests compute with one torch and one BLAS thread, as training does by default (train.torch_threads=1):
    learning tests follow the same trajectory whatever the core count, and tests in parallel do not
    oversubscribe the cores."""
    with cpu_threads(1):
        yield
