"""The runtime: run a model package (`irc-compile -o DIR`) on the simulated NPU.

In the style of onert's and onnxruntime's session APIs:

    from irc.runtime import Session

    session = Session("build/digits")
    outputs = session.run({"input": image})          # a dict of outputs by name
    session.set_input("input", image)                 # or step by step
    session.run()
    logits = session.get_output("logits")
    timing = session.stream(frames=8)                 # frames in flight: FPS, latency

Opening a session reads the manifest, checks every file against its size and SHA-256,
decodes the program and loads it into the simulator once (hazard checks, timing: see
docs/simulator.md); each `run` then only computes. Sessions are independent: each has
its own simulated memories, so several can be open, and run, at the same time (from
different threads too). One session may be shared by threads as well: its runs take
turns on its memories, and what `set_input` stages and `get_output` reads belongs to
the calling thread (see `Session`). Every problem with the package or with the inputs
is an `IrcError` with a hint, never a traceback; inputs that the NPU cannot represent
faithfully (NaN, float64 values beyond float32) are warnings.
"""

from __future__ import annotations

import itertools
import numbers
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from irc.diagnostics import Diagnostic, IrcError, Location, Severity, emit, error

if TYPE_CHECKING:
    from irc.codegen.package import Package
    from irc.sim.run import Report, Simulator
    from irc.sim.streaming import StreamTiming


@dataclass(frozen=True)
class TensorInfo:
    """An input or output of the package's model."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    quantization: dict[str, Any] | None
    """Scale and zero point when the tensor itself is quantized (else None)."""
    npu_quantization: dict[str, Any] | None
    """For a float tensor that the host quantizes (or dequantizes): the parameters of
    the int8 tensor the NPU holds."""

    @classmethod
    def of(cls, entry: Mapping[str, Any]) -> TensorInfo:
        """From a manifest entry."""
        return cls(
            entry["name"],
            tuple(entry["shape"]),
            np.dtype(entry["dtype"]),
            entry.get("quantization"),
            entry.get("npu_quantization"),
        )


@dataclass
class StreamResult:
    """What `Session.stream` measured, and the outputs of every frame."""

    timing: StreamTiming
    outputs: list[dict[str, np.ndarray]]

    def summary(self) -> str:
        """Throughput and latency, and what holds the frames apart (`StreamTiming`)."""
        return self.timing.summary()


class _Staged(threading.local):
    """One thread's step-by-step state: the inputs it set, the outputs of its last run."""

    def __init__(self) -> None:
        self.feeds: dict[str, np.ndarray] = {}
        self.results: dict[str, np.ndarray] | None = None


class Session:
    """A package loaded on the simulated NPU, to run any number of times.

    A session may be shared by threads. Each call gives what the same call gives when
    the calls run one after the other: runs take turns on the session's simulated
    memories (a lock; streams of frames too), so threads gain no speed from sharing one
    session: open one per thread for that. The step-by-step state is per thread:
    `set_input` stages an input for the calling thread's next `run()`, and
    `get_output` reads the outputs of the calling thread's last run.

    An output that the model lists more than once is one output: `outputs` lists it
    once, where it first appears, as `run` returns it once (a dict by name).
    """

    def __init__(self, path: str | Path) -> None:
        from irc.codegen.package import read_package
        from irc.resources import fewer_collections
        from irc.sim.run import Simulator

        if not isinstance(path, (str, os.PathLike)):
            raise error(
                f"Session() takes the path of a package directory, got {_kind(path)}",
                Location(file="irc.runtime.Session"),
                "Session('build/model'), the directory irc-compile -o wrote",
            )
        with fewer_collections():  # decoding and loading build a large graph of objects
            self.package: Package = read_package(path)
            self.simulator: Simulator = Simulator(
                self.package.module, self.package.target, self.package.manifest["entry"]
            )
        self.inputs = [TensorInfo.of(entry) for entry in self.package.inputs]
        listed: dict[str, TensorInfo] = {}  # an output listed twice is one output
        for entry in self.package.outputs:
            listed.setdefault(entry["name"], TensorInfo.of(entry))
        self.outputs = list(listed.values())
        self._staged = _Staged()
        self._running = threading.Lock()  # the simulated memories: one run at a time
        self._closed = False

    @property
    def path(self) -> Path:
        """The package directory."""
        return self.package.path

    @property
    def report(self) -> Report:
        """One inference in time: cycles, engines, DDR traffic, per layer."""
        self._check_open()
        return self.simulator.report

    # ---- step by step -----------------------------------------------------------------

    def _info(self, key: object, tensors: list[TensorInfo], what: str) -> TensorInfo:
        names = ", ".join(f"'{tensor.name}'" for tensor in tensors)
        if isinstance(key, numbers.Integral) and not isinstance(key, bool):
            if 0 <= int(key) < len(tensors):
                return tensors[int(key)]
            raise self._error(
                f"the model has {len(tensors)} {what}s; there is no {what} {key}",
                f"the {what}s are {names}",
            )
        if not isinstance(key, str):
            raise self._error(
                f"an {what} is named by a string or numbered by an int, got {_kind(key)}",
                f"the {what}s are {names}",
            )
        for tensor in tensors:
            if tensor.name == key:
                return tensor
        raise self._error(f"the model has no {what} '{key}'", f"its {what}s are {names}")

    def _error(self, message: str, hint: str) -> IrcError:
        return error(message, Location(file=str(self.path)), hint)

    def _warn(self, message: str, hint: str) -> None:
        emit(Diagnostic(message, Location(file=str(self.path)), Severity.WARNING, hint))

    def set_input(self, key: str | int | np.integer, value: object) -> None:
        """Set an input (by name or index) for the calling thread's next `run()`.

        Float data is narrowed to the input's type (float64 for float32). Values that
        narrowing turns into infinities, and NaN in the input of a quantized model, are
        warnings (`irc.diagnostics.emit`): the NPU computes on other values than these.
        """
        info = self._info(key, self.inputs, "input")
        try:
            array = np.asarray(value)
        except (TypeError, ValueError) as failure:  # ragged nested lists, mostly
            raise self._error(
                f"input '{info.name}' is not an array: {failure}",
                f"give an array of shape {list(info.shape)} and type {info.dtype.name}",
            ) from None
        if array.shape != info.shape:
            raise self._error(
                f"input '{info.name}' has shape {list(info.shape)}; got an array of shape "
                f"{list(array.shape)}",
                "reshape the array to the input's shape (Session.inputs lists them)",
            )
        staged = self._staged
        staged.feeds[info.name] = self._narrowed(info, array)
        staged.results = None

    def _narrowed(self, info: TensorInfo, array: np.ndarray) -> np.ndarray:
        """Float data in the input's float type; a warning for each kind of value the
        NPU will not see as given. Other data is converted, or refused, by the run."""
        if array.dtype.kind != "f" or info.dtype.kind != "f":
            return array
        narrowed = array
        if array.dtype != info.dtype:
            with np.errstate(over="ignore"):
                narrowed = array.astype(info.dtype)
            overflowed = np.count_nonzero(np.isfinite(array) & ~np.isfinite(narrowed))
            if overflowed:
                self._warn(
                    f"input '{info.name}': {overflowed} of its {array.size} values are beyond "
                    f"the range of {info.dtype.name} and become infinities",
                    f"scale the data into {info.dtype.name}'s range "
                    f"(±{float(np.finfo(info.dtype).max):.4g})",
                )
        options = self.package.manifest.get("options")
        quantized = info.npu_quantization is not None or (
            isinstance(options, Mapping) and options.get("quantize") == "int8"
        )
        nans = np.count_nonzero(np.isnan(narrowed))
        if quantized and nans:
            self._warn(
                f"input '{info.name}' holds {nans} NaN value{'s' if nans > 1 else ''} (of "
                f"{array.size}), which the quantized model turns into arbitrary integers",
                "replace the NaNs before running (numpy.nan_to_num); the outputs mean nothing",
            )
        return narrowed

    def _feed_items(self, feeds: object, call: str) -> Iterable[tuple[object, object]]:
        """The (input key, value) pairs of a feed: a dict by name, or a list in order."""
        if isinstance(feeds, Mapping):
            return feeds.items()
        names = ", ".join(f"'{info.name}'" for info in self.inputs)
        if isinstance(feeds, (list, tuple)):
            if len(feeds) != len(self.inputs):
                raise self._error(
                    f"{call} was given a list of {len(feeds)} inputs; the model has "
                    f"{len(self.inputs)}",
                    f"list every input, in the order of Session.inputs: {names}",
                )
            return enumerate(feeds)
        first = self.inputs[0].name if self.inputs else "input"
        raise self._error(
            f"{call} takes the inputs as a dict by name or a list in the order of "
            f"Session.inputs, got {_kind(feeds)}",
            f"{call.removesuffix('()')}({{'{first}': array}}); the inputs are {names}",
        )

    @overload
    def run(self, feeds: Mapping[str, object] | Sequence[object]) -> dict[str, np.ndarray]: ...

    @overload
    def run(self, feeds: None = None) -> None: ...

    def run(
        self, feeds: Mapping[str, object] | Sequence[object] | None = None
    ) -> dict[str, np.ndarray] | None:
        """Run one inference.

        With `feeds`, runs on them and returns the outputs by name: `feeds` maps input
        names (or indices) to arrays, as onnxruntime's `run` takes them, or lists one
        array per input in the order of `inputs`. Inputs a dict leaves out keep what
        `set_input` gave them. Without `feeds`, runs on the inputs the calling thread
        gave to `set_input`; read the outputs with `get_output`.
        """
        if feeds is not None:
            for key, value in self._feed_items(feeds, "run()"):
                self.set_input(key, value)  # type: ignore[arg-type]  # _info checks the key
        staged = self._staged
        missing = [info.name for info in self.inputs if info.name not in staged.feeds]
        if missing:
            raise self._error(
                f"input '{missing[0]}' was not set",
                "set every input with set_input(name, array), or pass run({name: array})",
            )
        arrays = {info.name: staged.feeds[info.name] for info in self.inputs}
        with self._running:
            self._check_open()
            results = self.simulator.run(arrays)
        staged.results = results
        return dict(results) if feeds is not None else None

    def get_output(self, key: str | int | np.integer) -> np.ndarray:
        """An output (by name or index) of the calling thread's last `run()`."""
        info = self._info(key, self.outputs, "output")
        results = self._staged.results
        if results is None:
            raise self._error(
                f"output '{info.name}' is not available: run() has not run in this thread "
                "since its inputs were set",
                "call run() first (in the thread that calls get_output)",
            )
        return results[info.name]

    # ---- streaming ---------------------------------------------------------------------

    def stream(
        self,
        frames: int | np.integer | Sequence[Mapping[str, object] | Sequence[object]],
        *,
        keep_outputs: bool = True,
        cores: int | None = None,
    ) -> StreamResult:
        """Run frames back to back with the NPU pipelining them.

        `frames` is a list of feeds (one per frame, each as `run` takes it), or a count
        of frames that all use the inputs the calling thread set with `set_input`.
        Every frame is computed exactly; the timing lets frame k+1's input transfers
        and early layers overlap frame k's compute wherever the memories allow
        (irc/sim/streaming.py). On a target of several cores, the frames of a package
        whose layers all run on one core (`irc-compile --layer-cores 1`) take turns on
        `cores` of them (default: as many as have room for an arena of activations
        each), frame k on core k % cores; a package with layers split across the cores
        runs every frame on them.
        """
        from irc.sim.streaming import layout_of, stream_timing

        feeds: Iterable[Mapping[str, object] | Sequence[object] | None]
        if isinstance(frames, numbers.Integral) and not isinstance(frames, bool):
            if frames < 1:
                raise self._error(f"stream() needs at least one frame, got {frames}", "frames=8")
            count = int(frames)
            feeds = itertools.repeat(None, count)
        elif isinstance(frames, Iterable) and not isinstance(
            frames, (str, bytes, Mapping, np.ndarray)
        ):
            listed = list(frames)
            if not listed:
                raise self._error("stream() was given no frames", "pass a list of feeds")
            for index, frame in enumerate(listed):
                if not isinstance(frame, (Mapping, list, tuple)):
                    raise self._error(
                        f"frame {index} of stream() is {_kind(frame)}, not a feed",
                        "each frame is a feed as run() takes it: {name: array}",
                    )
            count, feeds = len(listed), listed
        else:
            raise self._error(
                f"stream() takes a count of frames or a list of feeds, got {_kind(frames)}",
                "stream(8) runs 8 frames of the inputs set with set_input; "
                "stream([{name: array}, ...]) runs one frame per feed",
            )
        with self._running:
            self._check_open()
            program = self.simulator.functions.program
            assert program is not None
            layout_of(program, cores)  # a bad `cores` fails before any frame runs
        outputs = []
        for feed in feeds:
            self.run(feed)
            if keep_outputs:
                results = self._staged.results
                assert results is not None
                outputs.append(dict(results))
        with self._running:
            self._check_open()
            program = self.simulator.functions.program
            assert program is not None
            timing = stream_timing(program, count, cores)
        return StreamResult(timing, outputs)

    # ---- lifetime ----------------------------------------------------------------------

    def close(self) -> None:
        """Release what the session holds: the simulated memories, the decoded program
        and the package's module (`package.manifest` and `package.target`, `inputs`
        and `outputs` stay), then hand the freed heap back to the system
        (`irc.resources.release_memory`). A closed session cannot run; closing it
        again does nothing. `with Session(path) as session:` closes it at the end of
        the block. A session dropped without `close` releases its memories and
        program at once too (nothing of them is in a reference cycle); its module's
        IR, a graph of cycles, goes at the garbage collector's next collection."""
        from dataclasses import replace

        from xdsl.dialects.builtin import ModuleOp

        from irc.resources import release_memory

        with self._running:  # never in the middle of a run
            if self._closed:
                return
            self._closed = True
            self.simulator.close()
            self.package = replace(self.package, module=ModuleOp([]))
        release_memory()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise self._error(
                "the session is closed: its program and memories are released",
                "open the package again: Session(path)",
            )


def _kind(value: object) -> str:
    """A wrong argument as a message shows it: `2.5 (type float)`."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {list(value.shape)}"
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{text} (type {type(value).__name__})"
