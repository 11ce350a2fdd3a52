"""Suite-wide fixtures.

A test process may hold at most 2 GB (docs/testing.md). Test modules cache their
models at module level (a light model with its weights, imported or quantized), and
an xdist worker runs many modules in turn: without this, every module's last model
stays alive while the next module's are made. So each module's caches are emptied
when its tests are done (irc.testing.quantized's shared cache of materialized models
has a bound of its own, MATERIALIZED_CACHE_BYTES).
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="module")
def _release_module_caches(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    for value in vars(request.module).values():
        if isinstance(value, functools._lru_cache_wrapper):
            value.cache_clear()
    gc.collect()
