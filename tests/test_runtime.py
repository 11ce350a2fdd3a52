"""irc.runtime: a package from irc-compile runs through the Session API with the
outputs irc-run gives on the command-level IR; sessions are independent; streaming
runs every frame exactly; misuse is a clear error."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest

from irc.diagnostics import Diagnostic, IrcError, Severity, collect_diagnostics
from irc.driver.pipeline import CompileOptions, compile_model
from irc.fileio import StagedOutputs
from irc.ir.io import PrintOptions, write_module
from irc.ir.weights import WeightsMode
from irc.runtime import Session
from irc.sim.streaming import HOST_LANES
from irc.tools.compile import main as compile_main
from irc.tools.run import main as run_main

ROOT = Path(__file__).resolve().parent.parent
DIGITS = ROOT / "models" / "digits"


@pytest.fixture(scope="module")
def digits_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The digits CNN compiled by the irc-compile command line."""
    out = tmp_path_factory.mktemp("digits") / "pkg"
    status = compile_main(
        [
            str(DIGITS / "digits_cnn.onnx"),
            "-o",
            str(out),
            "--calibration-data",
            str(DIGITS / "digits_calibration.npz"),
            "--partition",
            "support",  # every layer npu-demo takes on its NPU: frames overlap there
            "--no-progress",
        ]
    )
    assert status == 0
    return out


@pytest.fixture(scope="module")
def mobilenet_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from irc.testing.networks import NETWORKS

    directory = tmp_path_factory.mktemp("mobilenet")
    model = directory / "mobilenet.onnx"
    onnx.save(NETWORKS["mobilenet_v2_style"](0), model)
    out = directory / "pkg"
    assert (
        compile_main([str(model), "-o", str(out), "--calibration-samples", "2", "--no-progress"])
        == 0
    )
    return out


def images(count: int, seed: int = 0) -> list[np.ndarray]:
    test = np.load(DIGITS / "digits_test.npz")["images"]
    return [
        test[index : index + 1] for index in np.random.default_rng(seed).choice(len(test), count)
    ]


def test_package_outputs_equal_irc_run_on_the_command_level_ir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Compiled in memory, the command-level module is printed as IR and run by
    irc-run; written as a package, it is run by the runtime: the same bytes."""
    result = compile_model(
        DIGITS / "digits_cnn.onnx",
        CompileOptions(calibration_data=DIGITS / "digits_calibration.npz"),
    )
    stream = tmp_path / "digits.npu.mlir"
    with StagedOutputs() as staged:
        write_module(result.module, stream, PrintOptions(weights=WeightsMode.SIDECAR), staged)
    package = tmp_path / "pkg"
    package.mkdir()
    for name, content in result.files.items():
        (package / name).write_bytes(content)
    session = Session(package)
    for index, image in enumerate(images(3)):
        np.save(tmp_path / "image.npy", image)
        out = tmp_path / f"out{index}"
        status = run_main(
            [str(stream), "--input", f"image={tmp_path / 'image.npy'}", "--output-dir", str(out)]
        )
        assert status == 0, capsys.readouterr().err
        expected = np.load(out / "logits.npy")
        got = session.run({"image": image})["logits"]
        assert got.dtype == expected.dtype == np.float32
        np.testing.assert_array_equal(got, expected)


def test_digits_package_classifies_like_the_float_model(digits_package: Path) -> None:
    from irc.importers.reference import run_onnxruntime

    model = onnx.load(DIGITS / "digits_cnn.onnx")
    session = Session(digits_package)
    test = np.load(DIGITS / "digits_test.npz")
    agree = 0
    chosen = range(0, 450, 15)
    for index in chosen:
        image = test["images"][index : index + 1]
        reference = run_onnxruntime(model, {"image": image})["logits"]
        agree += int(np.argmax(session.run({"image": image})["logits"]) == np.argmax(reference))
    assert agree >= len(chosen) - 1


def test_step_by_step_api(digits_package: Path) -> None:
    session = Session(digits_package)
    assert [(t.name, t.shape, t.dtype) for t in session.inputs] == [
        ("image", (1, 1, 8, 8), np.dtype("float32"))
    ]
    assert [(t.name, t.shape) for t in session.outputs] == [("logits", (1, 10))]
    # npu-demo's vector unit quantizes the float image itself: the NPU reads float32.
    assert session.inputs[0].npu_quantization is None
    (image,) = images(1)
    session.set_input(0, image)
    assert session.run() is None
    by_index = session.get_output(0)
    np.testing.assert_array_equal(by_index, session.get_output("logits"))
    np.testing.assert_array_equal(by_index, session.run({"image": image})["logits"])
    assert session.report.cycles > 0 and session.report.total.commands > 0


def test_sessions_are_independent(digits_package: Path, mobilenet_package: Path) -> None:
    """Two packages open at once, run interleaved and from threads: each gives what
    it gives alone."""
    digits, mobilenet = Session(digits_package), Session(mobilenet_package)
    other = Session(digits_package)
    rng = np.random.default_rng(3)
    frames = [rng.standard_normal((1, 3, 96, 96)).astype(np.float32) for _ in range(2)]
    alone_digits = [Session(digits_package).run({"image": i})["logits"] for i in images(4)]
    alone_mobilenet = [mobilenet.run({"input": f})["logits"] for f in frames]
    for index, image in enumerate(images(4)):
        np.testing.assert_array_equal(digits.run({"image": image})["logits"], alone_digits[index])
        np.testing.assert_array_equal(
            mobilenet.run({"input": frames[index % 2]})["logits"], alone_mobilenet[index % 2]
        )
        np.testing.assert_array_equal(
            other.run({"image": images(4)[3 - index]})["logits"], alone_digits[3 - index]
        )

    results: dict[int, list[np.ndarray]] = {}

    def work(index: int) -> None:
        session = Session(digits_package) if index % 2 else digits
        results[index] = [session.run({"image": image})["logits"] for image in images(4)]

    threads = [threading.Thread(target=work, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for outputs in results.values():
        for got, expected in zip(outputs, alone_digits):
            np.testing.assert_array_equal(got, expected)


def test_streaming_runs_every_frame_exactly(digits_package: Path) -> None:
    session = Session(digits_package)
    frames = [{"image": image} for image in images(5, seed=7)]
    streamed = session.stream(frames)
    assert len(streamed.outputs) == 5
    for feed, outputs in zip(frames, streamed.outputs):
        np.testing.assert_array_equal(
            outputs["logits"], Session(digits_package).run(feed)["logits"]
        )
    timing = streamed.timing
    assert timing.frames == 5
    single = session.report.cycles
    assert timing.single_frame_cycles == single
    # Frames overlap at best down to the busiest engine, and run no slower than one
    # after the other (but for a later frame's early loads taking DDR turns from an
    # earlier one's stores: first come, first served; see tests/test_streaming.py).
    assert timing.total_cycles <= 5 * single * 1.001
    # Each engine runs every frame's commands; the host runs consecutive frames' host
    # calls on HOST_LANES threads, so one lane runs ceil(5 / HOST_LANES) frames' calls.
    busy = dict(session.report.total.busy)
    host = busy.pop("host")
    assert timing.total_cycles >= max(5 * max(busy.values()), -(-5 // HOST_LANES) * host)
    clock = session.package.target.mac_array.clock_hz
    assert timing.fps == pytest.approx(5 / (timing.total_cycles / clock))
    assert "FPS" in streamed.summary()
    session.set_input("image", frames[0]["image"])
    assert session.stream(3).timing.frames == 3


@pytest.mark.parametrize(
    ("misuse", "message"),
    [
        (lambda s: s.set_input("pixels", np.zeros((1, 1, 8, 8), np.float32)), "no input 'pixels'"),
        (lambda s: s.set_input(1, np.zeros((1, 1, 8, 8), np.float32)), "there is no input 1"),
        (lambda s: s.set_input("image", np.zeros((1, 8, 8), np.float32)), "shape \\[1, 1, 8, 8\\]"),
        (lambda s: s.run(), "input 'image' was not set"),
        (lambda s: s.get_output("logits"), "run\\(\\) has not run"),
        (lambda s: s.get_output("probabilities"), "no output 'probabilities'"),
        (lambda s: s.run({"image": np.full((1, 1, 8, 8), 0.5 + 0.5j)}), "image"),
        (lambda s: s.stream(0), "at least one frame"),
        # Arguments of the wrong type, each named in the message.
        (lambda s: s.set_input(None, np.zeros((1, 1, 8, 8))), "got None \\(type NoneType\\)"),
        (lambda s: s.set_input("image", [[1, 2], [3]]), "input 'image' is not an array"),
        (lambda s: s.get_output(2.5), "named by a string or numbered by an int, got 2.5"),
        (lambda s: s.run(np.zeros((1, 1, 8, 8))), "got an array of shape \\[1, 1, 8, 8\\]"),
        (lambda s: s.run(3), "a dict by name or a list"),
        (lambda s: s.run([np.zeros((1, 1, 8, 8))] * 2), "a list of 2 inputs; the model has 1"),
        (lambda s: s.stream(2.5), "a count of frames or a list of feeds, got 2.5"),
        (lambda s: s.stream(None), "a count of frames or a list of feeds, got None"),
        (lambda s: s.stream(True), "got True"),
        (lambda s: s.stream("image"), "got 'image'"),
        (lambda s: s.stream({"image": np.zeros((1, 1, 8, 8))}), "got \\{'image'"),
        (lambda s: s.stream([np.zeros((1, 1, 8, 8))]), "frame 0 of stream\\(\\) is an array"),
        (lambda s: s.stream([None]), "frame 0 of stream\\(\\) is None"),
        (lambda s: s.stream(-2), "at least one frame, got -2"),
        (lambda s: type(s)(None), "the path of a package directory, got None"),
    ],
)
def test_misuse_is_a_clear_error(digits_package: Path, misuse, message: str) -> None:
    session = Session(digits_package)
    with pytest.raises(IrcError, match=message) as failure:
        misuse(session)
    (diagnostic,) = failure.value.diagnostics
    assert diagnostic.hint


def test_not_a_package(tmp_path: Path) -> None:
    with pytest.raises(IrcError, match="not a package directory"):
        Session(tmp_path / "missing")
    with pytest.raises(IrcError, match="not an irc package"):
        Session(tmp_path)


# ---- one session shared by threads; inputs the NPU cannot represent; misuse -------------

CORPUS = ROOT / "tests" / "bad_inputs"


def test_one_session_shared_by_threads_gives_the_sequential_results(
    digits_package: Path,
) -> None:
    """Many threads run one session at once, each on its own inputs, by run(feeds)
    and step by step in turn: every result is the one the same input gives alone."""
    session = Session(digits_package)
    threads, runs = 6, 8
    test = np.load(DIGITS / "digits_test.npz")["images"]
    inputs = [test[index : index + 1] for index in range(threads * runs)]
    expected = [session.run({"image": image})["logits"] for image in inputs]
    # Distinct results, so that a result swapped between threads cannot pass.
    assert len({result.tobytes() for result in expected}) == len(expected)
    got: dict[int, np.ndarray] = {}
    failures: list[BaseException] = []
    start = threading.Barrier(threads)

    def work(thread: int) -> None:
        try:
            start.wait()
            for run in range(runs):
                index = thread * runs + run
                if run % 2:
                    got[index] = session.run({"image": inputs[index]})["logits"]
                else:
                    session.set_input("image", inputs[index])
                    session.run()
                    got[index] = session.get_output("logits")
        except BaseException as failure:  # a thread's exception must fail the test
            failures.append(failure)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch inside every run: races cannot hide
    try:
        workers = [threading.Thread(target=work, args=(thread,)) for thread in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        sys.setswitchinterval(interval)
    assert not failures, failures[0]
    assert sorted(got) == list(range(threads * runs))
    for index, result in got.items():
        np.testing.assert_array_equal(result, expected[index], err_msg=f"input {index}")


def test_step_by_step_state_belongs_to_the_calling_thread(digits_package: Path) -> None:
    session = Session(digits_package)
    first, second = images(2, seed=5)
    session.set_input("image", first)
    session.run()
    outcome: dict[str, object] = {}

    def other_thread() -> None:
        for name, call in {
            "run": session.run,
            "get_output": lambda: session.get_output("logits"),
        }.items():
            try:
                call()
            except IrcError as failure:
                outcome[name] = failure.diagnostics[0].message
        outcome["own run"] = session.run({"image": second})["logits"]

    worker = threading.Thread(target=other_thread)
    worker.start()
    worker.join()
    assert outcome["run"] == "input 'image' was not set"
    assert "has not run in this thread" in str(outcome["get_output"])
    # The other thread's run left this thread's outputs alone.
    np.testing.assert_array_equal(
        session.get_output("logits"), Session(digits_package).run({"image": first})["logits"]
    )
    assert not np.array_equal(outcome["own run"], session.get_output("logits"))


@pytest.fixture(scope="module")
def small_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bad-input corpus's small model (y = relu(x @ w + b), x: 1x4), int8."""
    out = tmp_path_factory.mktemp("small") / "pkg"
    status = compile_main([str(CORPUS / "onnx" / "small.onnx"), "-o", str(out), "--no-progress"])
    assert status == 0
    return out


def test_an_output_listed_twice_is_one_output(tmp_path: Path) -> None:
    """onnxruntime lists such an output twice and returns it twice in its list; a
    session returns outputs by name, so it lists it once, where it first appears."""
    from onnx import TensorProto, helper

    def tensor(name: str) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 4])

    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["y"], name="relu"),
            helper.make_node("Neg", ["x"], ["z"], name="neg"),
        ],
        "twice",
        [tensor("x")],
        [tensor("y"), tensor("z"), tensor("y")],
    )
    model = tmp_path / "twice.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    package = tmp_path / "pkg"
    assert compile_main([str(model), "-o", str(package), "--no-progress"]) == 0
    session = Session(package)
    assert [info.name for info in session.outputs] == ["y", "z"]
    outputs = session.run({"x": np.linspace(-1, 1, 4, dtype=np.float32).reshape(1, 4)})
    assert list(outputs) == [info.name for info in session.outputs]
    np.testing.assert_array_equal(session.get_output(1), outputs["z"])
    with pytest.raises(IrcError, match="there is no output 2"):
        session.get_output(2)


def _warnings_of(call: Callable[[], object]) -> list[Diagnostic]:
    with collect_diagnostics() as diagnostics:
        call()
    return [d for d in diagnostics if d.severity == Severity.WARNING]


def test_inputs_the_npu_cannot_represent_are_warnings(digits_package: Path) -> None:
    session = Session(digits_package)
    (image,) = images(1)
    assert _warnings_of(lambda: session.run({"image": image.astype(np.float64)})) == []

    huge = image.astype(np.float64)
    huge.flat[[3, 7, 11]] = [1e300, -1e300, 1e39]
    (warning,) = _warnings_of(lambda: session.run({"image": huge}))
    assert warning.message == (
        "input 'image': 3 of its 64 values are beyond the range of float32 and become infinities"
    )
    assert warning.hint and "3.403e+38" in warning.hint
    assert str(session.path) in str(warning.location)
    # The run goes on, on what the NPU gets: the infinities.
    with np.errstate(over="ignore"):
        infinities = huge.astype(np.float32)
    np.testing.assert_array_equal(
        session.get_output("logits"), session.run({"image": infinities})["logits"]
    )

    nan = image.copy()
    nan.flat[[0, 5]] = np.nan
    (warning,) = _warnings_of(lambda: session.run([nan]))
    assert warning.message.startswith("input 'image' holds 2 NaN values (of 64)")
    assert warning.hint and "nan_to_num" in warning.hint


@pytest.mark.parametrize(
    ("data", "warning"),
    [
        ("x-nan.npy", "input 'x' holds 2 NaN values (of 4)"),
        ("x-beyond-float32.npy", "input 'x': 3 of its 4 values are beyond the range of float32"),
    ],
)
def test_irc_run_warns_of_inputs_the_npu_cannot_represent(
    small_package: Path, data: str, warning: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = run_main([str(small_package), "--input", f"x={CORPUS / 'data' / data}"])
    stderr = capsys.readouterr().err
    assert status == 0, stderr
    assert "Traceback" not in stderr and "error:" not in stderr
    (line,) = [line for line in stderr.splitlines() if "warning:" in line]
    assert f"{small_package}: warning: {warning}" in line
    assert "RuntimeWarning" not in stderr


def test_run_takes_a_list_of_inputs_in_declaration_order(digits_package: Path) -> None:
    session = Session(digits_package)
    (image,) = images(1, seed=9)
    by_name = session.run({"image": image})
    np.testing.assert_array_equal(session.run([image])["logits"], by_name["logits"])
    np.testing.assert_array_equal(session.run((image,))["logits"], by_name["logits"])
    np.testing.assert_array_equal(session.run({0: image})["logits"], by_name["logits"])
    streamed = session.stream([[image], {"image": image}])
    for outputs in streamed.outputs:
        np.testing.assert_array_equal(outputs["logits"], by_name["logits"])
    session.set_input(np.int64(0), image)  # a numpy integer is an index too
    assert session.stream(np.int64(2)).timing.frames == 2
