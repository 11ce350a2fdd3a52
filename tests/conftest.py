"""Suite-wide fixtures and hooks.

A test process may hold at most 2 GB (docs/testing.md). Two things here keep an
xdist worker, which runs hundreds of tests in turn, near what its current test needs:

- Test modules cache their models at module level (a light model with its weights,
  imported or quantized): each module's caches are emptied when its tests are done
  (irc.testing.quantized's shared cache of materialized models has a bound of its
  own, MATERIALIZED_CACHE_BYTES).
- Memory a test freed goes back to the system: erased ops hold their weights in
  reference cycles (an op and its results) that only a full collection frees, and
  the C heap keeps freed blocks unless trimmed. Measured on the ZFNet-512 tests, a
  worker started its tests at 1.1-1.5 GB without this and at 0.45-0.56 GB with it.
  Both run only when the process holds more than TRIM_ABOVE_BYTES, so that the many
  small tests pay nothing.

And the workers share the cores: `pytest -n N` gives each worker's BLAS (numpy's
OpenBLAS) its share of the cores (`_share_the_cores_among_workers`), not all of them.
OpenBLAS's threads spin while they wait for each other, so two workers with two
threads each on two cores slowed each other's matrix products 8-18 times (measured on
a 2-core machine beside another busy process, DenseNet-121's tile-level test took 52 s
with two threads and 24 s with one).

Property tests (hypothesis) are derandomized: the same examples every run.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
"""Property tests draw the same examples on every run (`ci`, the default: a run of
the suite passes or fails whatever the seed); `HYPOTHESIS_PROFILE=explore` draws new
ones each run, to look for counterexamples (docs/testing.md)."""

TRIM_ABOVE_BYTES = 512 * 2**20
"""A worker above this resident size collects and trims after each test."""

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""What numpy's BLAS (OpenBLAS, or MKL) reads its thread count from when it loads."""


def pytest_configure(config: pytest.Config) -> None:
    _share_the_cores_among_workers(config)


def _share_the_cores_among_workers(config: pytest.Config) -> None:
    """Under `pytest -n N`, give each worker's BLAS cores // N threads (at least one)
    unless the environment sets a count. The controller sets the variables before it
    starts the workers, which inherit them (as do the processes tests start) and read
    them when numpy loads; its own numpy, if loaded, is not affected and does no work."""
    workers = getattr(config.option, "numprocesses", None)
    if os.environ.get("PYTEST_XDIST_WORKER") or not isinstance(workers, int) or workers < 1:
        return
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = str(max(1, (cores or 1) // workers))
    for variable in THREAD_VARIABLES:
        os.environ.setdefault(variable, threads)


def _resident_bytes() -> int:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0  # not Linux: nothing to measure, nothing trimmed


def _malloc_trim() -> None:
    """glibc's malloc_trim(0), where there is one."""
    name = ctypes.util.find_library("c")
    if name is None:
        return
    trim = getattr(ctypes.CDLL(name), "malloc_trim", None)
    if trim is not None:
        trim(0)


@pytest.fixture(autouse=True, scope="module")
def _release_module_caches(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    for value in vars(request.module).values():
        if isinstance(value, functools._lru_cache_wrapper):
            value.cache_clear()
    gc.collect()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    yield
    if _resident_bytes() > TRIM_ABOVE_BYTES:
        gc.collect()
        _malloc_trim()
