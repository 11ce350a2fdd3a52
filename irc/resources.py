"""Memory and the garbage collector in long runs over large IR.

A compile holds a large, long-lived graph of IR objects (tens of thousands of ops for
a ResNet-50 stream). Two things help it:

- `fewer_collections()`: Python's default thresholds start a collection every 700
  allocations, and each older generation rescans the whole graph: on ResNet-50 that
  was a third of the compile (and of calibration, which allocates an array per op).
  Inside the block, the young generation is collected every 50,000 allocations.
- `release_memory()`: a stage leaves large arrays behind (the ONNX model's bytes after
  import, the float weights after quantization); freed, their memory stays in the
  process's heap, where fragmentation keeps the next stage from reusing all of it, so
  the peak resident memory grows stage by stage (ResNet-50: 587 MB instead of 456 MB).
  It collects garbage and hands the free heap back to the system.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the cyclic garbage collector less often inside the block (see the module
    docstring); the thresholds are restored after it."""
    thresholds = gc.get_threshold()
    gc.set_threshold(50_000, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def release_memory() -> None:
    """Collect garbage, and hand the free heap back to the system (glibc's
    `malloc_trim`, where there is one)."""
    gc.collect()
    if _malloc_trim is not None:
        _malloc_trim(0)


def _find_malloc_trim() -> Callable[[int], int] | None:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        library = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return getattr(library, "malloc_trim", None)


_malloc_trim = _find_malloc_trim()
