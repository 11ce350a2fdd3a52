"""Memory a long-lived process keeps: a service that reopens models and a worker that
compiles many must stay flat.

Each measurement runs in a fresh Python process (`_measure`), so that it sees only
what the code under test keeps, not the pytest worker's own heap: a closed or dropped
`Session` frees its simulated memories and decoded program at once (no reference
cycle keeps them for the garbage collector); 30 sessions opened, run and closed, and
50 compiles of models of 50 shapes, end under 1 GiB with little growth after the
first few; every process-wide cache of the compiler and runtime is bounded, or keyed
by a closed set of small things.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import irc

ROOT = Path(__file__).resolve().parent.parent
DIGITS = ROOT / "models" / "digits"
MIB = 1 << 20

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").is_file(), reason="resident memory is read from /proc"
)

PRELUDE = """
import gc, json, sys, weakref
from pathlib import Path
import numpy as np

def rss() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")

def zeros(session):
    return {info.name: np.zeros(info.shape, info.dtype) for info in session.inputs}
"""


def _measure(script: str, *arguments: object) -> dict:
    """Run `script` (after PRELUDE) in a fresh interpreter with `arguments` as
    sys.argv[1:]; the JSON object it prints last."""
    completed = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(script), *map(str, arguments)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def digits_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled digits CNN compiled by irc-compile (in its own process)."""
    out = tmp_path_factory.mktemp("memory") / "digits"
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from irc.tools.compile import main; sys.exit(main(sys.argv[1:]))",
            str(DIGITS / "digits_cnn.onnx"),
            "-o",
            str(out),
            "--calibration-data",
            str(DIGITS / "digits_calibration.npz"),
            "--no-progress",
        ],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    return out


def test_a_dropped_session_frees_its_memories_and_program_without_the_collector(
    digits_package: Path,
) -> None:
    """With the cyclic garbage collector off, dropping the last reference to a session
    frees its simulated DDR and SRAM and its decoded program: nothing of them is in a
    reference cycle."""
    result = _measure(
        """
        from irc.runtime import Session
        gc.disable()
        session = Session(sys.argv[1])
        session.run(zeros(session))
        program = session.simulator.functions.program
        refs = {"session": weakref.ref(session), "program": weakref.ref(program)}
        refs.update((space, weakref.ref(memory)) for space, memory in program.machine.memories.items())
        del session, program
        print(json.dumps({name: ref() is None for name, ref in refs.items()}))
        """,
        digits_package,
    )
    assert result == {"session": True, "program": True, "ddr": True, "sram": True}


def test_a_closed_session_releases_what_it_held_and_refuses_to_run(digits_package: Path) -> None:
    """`close()` (and the end of a `with` block) releases the memories, the program and
    the module while the session object lives on; a run after is one clear error."""
    result = _measure(
        """
        from irc.diagnostics import IrcError
        from irc.runtime import Session
        gc.disable()
        with Session(sys.argv[1]) as session:
            outputs = session.run(zeros(session))
            program = session.simulator.functions.program
            refs = {"program": weakref.ref(program), "ddr": weakref.ref(program.machine.memories["ddr"]),
                    "module": weakref.ref(session.package.module)}
            del program
        released = {name: ref() is None for name, ref in refs.items()}
        session.close()  # a second close does nothing
        try:
            session.run(zeros(session))
            message = None
        except IrcError as failure:
            message = str(failure)
        print(json.dumps({"released": released, "outputs": sorted(outputs), "message": message,
                          "inputs": [info.name for info in session.inputs]}))
        """,
        digits_package,
    )
    assert result["released"] == {"program": True, "ddr": True, "module": True}
    assert result["outputs"] and result["inputs"]  # what describes the model stays
    message = result["message"]
    assert message is not None and "error: the session is closed" in message
    assert "hint: open the package again" in message


def test_30_sessions_opened_run_and_closed_keep_the_memory_flat(digits_package: Path) -> None:
    """A service that reloads a model: 30 open/run/close cycles, then 30 of sessions
    dropped without close, in one process. (Before sessions freed their memories
    without the collector, 30 dropped digits sessions took a process from 31 to
    302 MiB.)"""
    result = _measure(
        """
        from irc.runtime import Session
        closed, dropped = [], []
        for cycle in range(30):
            with Session(sys.argv[1]) as session:
                session.run(zeros(session))
            closed.append(rss())
        for cycle in range(30):
            session = Session(sys.argv[1])
            session.run(zeros(session))
            del session
            dropped.append(rss())
        print(json.dumps({"closed": closed, "dropped": dropped}))
        """,
        digits_package,
    )
    closed, dropped = result["closed"], result["dropped"]
    assert max(closed + dropped) < 1024 * MIB
    assert closed[29] - closed[4] < 50 * MIB, [size // MIB for size in closed]
    assert dropped[29] - dropped[4] < 50 * MIB, [size // MIB for size in dropped]


TINY_MODEL = """
import onnx
from onnx import TensorProto, helper, numpy_helper

def tiny_model(size: int, seed: int) -> onnx.ModelProto:
    # conv 3x3, relu, max pool, flatten, gemm on a size x size image: a small real CNN
    rng = np.random.default_rng(seed)
    def tensor(name, shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
    half = size // 2
    initializers = [
        tensor("w", (8, 3, 3, 3)), tensor("b", (8,)), tensor("fc", (10, 8 * half * half)),
        numpy_helper.from_array(np.array([1, -1], np.int64), "shape"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
        helper.make_node("Reshape", ["p", "shape"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1, name="fc"),
    ]
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
"""


def test_50_compiles_in_one_process_keep_the_memory_flat(tmp_path: Path) -> None:
    """A worker that compiles many models: 50 compiles of a small CNN, each at another
    input size (new layer shapes, plans and types every time), in one process."""
    result = _measure(
        TINY_MODEL
        + textwrap.dedent(
            """
        from irc.driver.pipeline import CompileOptions, compile_model
        sizes = []
        for index in range(50):
            path = Path(sys.argv[1]) / "tiny.onnx"
            onnx.save(tiny_model(8 + 2 * index, index), path)
            compiled = compile_model(path, CompileOptions(calibration_samples=1))
            assert compiled.files, "the compile wrote no package"
            del compiled
            sizes.append(rss())
        print(json.dumps({"sizes": sizes}))
        """
        ),
        tmp_path,
    )
    sizes = result["sizes"]
    assert max(sizes) < 1024 * MIB
    # What the process keeps is the floor of its resident size: a compile's transient
    # peak (a larger model's buffers not yet given back) may sit on any one sample
    # (measured in a full suite run: 82 -> 106 MiB over 40 compiles, with peaks of
    # 128-143 MiB on single samples), so the floors of the first and last samples are
    # compared, not two samples.
    early, late = min(sizes[5:15]), min(sizes[40:])
    assert late - early < 50 * MIB, str([size // MIB for size in sizes])


# Unbounded caches that are fine: keyed by a closed set of small things.
CLOSED_KEYS = {
    "irc.dialects.base._property_defaults": "an op class",
    "irc.stream.lowering._segments": "which optional operands a command has",
}


def test_every_process_wide_cache_is_bounded() -> None:
    """Every functools cache at module level in irc (test helpers aside: irc.testing
    lives only in test processes) has a maxsize, takes no arguments (it is computed
    once), or is keyed by a closed set of small things (CLOSED_KEYS). A cache keyed by
    layer shapes, targets, plans or files grows with every model a process compiles."""
    unbounded = []
    for info in pkgutil.walk_packages(irc.__path__, "irc."):
        if info.name.startswith("irc.testing"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if not isinstance(value, functools._lru_cache_wrapper) or value.__module__ != info.name:
                continue
            qualified = f"{info.name}.{name}"
            bounded = value.cache_parameters()["maxsize"] is not None
            computed_once = not inspect.signature(value.__wrapped__).parameters
            if not (bounded or computed_once or qualified in CLOSED_KEYS):
                unbounded.append(qualified)
    assert unbounded == []
