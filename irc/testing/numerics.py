"""Numerical checks of passes for tests: run the IR before and after, compare.

`apply_and_compare` is what a pass's numerical test calls: it applies a pipeline to a
copy of a module and checks, on seeded random inputs, that the interpreter gives the
same outputs before and after (within tolerance), returning the transformed module for
structural checks.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from irc.interp import function_signature, run_function
from irc.ir.context import make_context
from irc.ir.weights import dtype_of
from irc.passes import parse_pipeline
from irc.testing.reference import compare


def random_function_inputs(module: ModuleOp, seed: int, entry: str = "main") -> dict[str, np.ndarray]:
    """Seeded inputs for the entry function: standard-normal floats, small integers."""
    rng = np.random.default_rng(seed)
    inputs: dict[str, np.ndarray] = {}
    for name, tensor_type in function_signature(module, entry)[0]:
        dtype = dtype_of(tensor_type.get_element_type())
        shape = tuple(tensor_type.get_shape())
        if dtype.kind == "f":
            inputs[name] = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            inputs[name] = rng.random(shape) < 0.5
        else:
            inputs[name] = rng.integers(0, 2, size=shape).astype(dtype)
    return inputs


def apply_and_compare(
    module: ModuleOp,
    pipeline: str,
    *,
    seed: int = 0,
    rtol: float = 1e-4,
    atol: float = 1e-5,
) -> ModuleOp:
    """Apply `pipeline` (flat syntax, e.g. "fold-batchnorm,canonicalize") to a clone of
    `module`, assert that the outputs agree on seeded random inputs, and return the
    transformed clone."""
    after = module.clone()
    ctx = make_context()
    for module_pass in parse_pipeline(pipeline):
        module_pass.apply(ctx, after)
    after.verify()
    inputs = random_function_inputs(module, seed)
    report = compare(run_function(after, inputs), run_function(module, inputs), rtol, atol)
    assert report.ok, f"after '{pipeline}':\n{report.format()}"
    return after
