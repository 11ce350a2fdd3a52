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
different threads too). Every problem with the package or with the inputs is an
`IrcError` with a hint, never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from irc.diagnostics import IrcError, Location, error

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
        """Throughput and latency in a line or two."""
        return self.timing.summary()


class Session:
    """A package loaded on the simulated NPU, to run any number of times."""

    def __init__(self, path: str | Path) -> None:
        from irc.codegen.package import read_package
        from irc.resources import fewer_collections
        from irc.sim.run import Simulator

        with fewer_collections():  # decoding and loading build a large graph of objects
            self.package: Package = read_package(path)
            self.simulator: Simulator = Simulator(
                self.package.module, self.package.target, self.package.manifest["entry"]
            )
        self.inputs = [TensorInfo.of(entry) for entry in self.package.inputs]
        self.outputs = [TensorInfo.of(entry) for entry in self.package.outputs]
        self._feeds: dict[str, np.ndarray] = {}
        self._results: dict[str, np.ndarray] | None = None

    @property
    def path(self) -> Path:
        """The package directory."""
        return self.package.path

    @property
    def report(self) -> Report:
        """One inference in time: cycles, engines, DDR traffic, per layer."""
        return self.simulator.report

    # ---- step by step -----------------------------------------------------------------

    def _info(self, key: str | int, tensors: list[TensorInfo], what: str) -> TensorInfo:
        names = ", ".join(f"'{tensor.name}'" for tensor in tensors)
        if isinstance(key, int) and not isinstance(key, bool):
            if 0 <= key < len(tensors):
                return tensors[key]
            raise self._error(
                f"the model has {len(tensors)} {what}s; there is no {what} {key}",
                f"the {what}s are {names}",
            )
        for tensor in tensors:
            if tensor.name == key:
                return tensor
        raise self._error(f"the model has no {what} '{key}'", f"its {what}s are {names}")

    def _error(self, message: str, hint: str) -> IrcError:
        return error(message, Location(file=str(self.path)), hint)

    def set_input(self, key: str | int, value: object) -> None:
        """Set an input (by name or index) for the next `run()`."""
        info = self._info(key, self.inputs, "input")
        array = np.asarray(value)
        if array.shape != info.shape:
            raise self._error(
                f"input '{info.name}' has shape {list(info.shape)}; got an array of shape "
                f"{list(array.shape)}",
                "reshape the array to the input's shape (Session.inputs lists them)",
            )
        self._feeds[info.name] = array
        self._results = None

    def run(self, feeds: Mapping[str, object] | None = None) -> dict[str, np.ndarray] | None:
        """Run one inference.

        With `feeds` (input name -> array), runs on them and returns the outputs by
        name. Without, runs on the inputs given to `set_input`; read the outputs with
        `get_output`.
        """
        if feeds is not None:
            for name, value in feeds.items():
                self.set_input(name, value)
        missing = [info.name for info in self.inputs if info.name not in self._feeds]
        if missing:
            raise self._error(
                f"input '{missing[0]}' was not set",
                "set every input with set_input(name, array), or pass run({name: array})",
            )
        self._results = self.simulator.run(
            {info.name: self._feeds[info.name] for info in self.inputs}
        )
        return dict(self._results) if feeds is not None else None

    def get_output(self, key: str | int) -> np.ndarray:
        """An output (by name or index) of the last `run()`."""
        info = self._info(key, self.outputs, "output")
        if self._results is None:
            raise self._error(
                f"output '{info.name}' is not available: run() has not run since the inputs "
                "were set",
                "call run() first",
            )
        return self._results[info.name]

    # ---- streaming ---------------------------------------------------------------------

    def stream(
        self, frames: int | Sequence[Mapping[str, object]], *, keep_outputs: bool = True
    ) -> StreamResult:
        """Run frames back to back with the NPU pipelining them.

        `frames` is a list of feeds (one per frame), or a count of frames that all use
        the inputs set with `set_input`. Every frame is computed exactly; the timing
        lets frame k+1's input transfers and early layers overlap frame k's compute
        wherever the memories allow (irc/sim/streaming.py).
        """
        from irc.sim.streaming import stream_timing

        feeds: list[Mapping[str, object] | None]
        if isinstance(frames, int):
            if frames < 1:
                raise self._error(f"stream() needs at least one frame, got {frames}", "frames=8")
            feeds = [None] * frames
        else:
            feeds = list(frames)
            if not feeds:
                raise self._error("stream() was given no frames", "pass a list of feeds")
        outputs = []
        for feed in feeds:
            if feed is not None:
                self.run(feed)
            else:
                self.run()
            if keep_outputs:
                assert self._results is not None
                outputs.append(dict(self._results))
        program = self.simulator.functions.program
        assert program is not None
        return StreamResult(stream_timing(program, len(feeds)), outputs)
