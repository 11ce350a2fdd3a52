"""`irc-run`: execute a model with the reference interpreter.

    irc-run model.mlir --input data=x.npy --output-dir out/
    irc-run model.onnx --random-inputs --seed 0 --compare-onnxruntime model.onnx
    irc-run build/model --random-inputs --layers      # a package from irc-compile
    irc-run build/model --compare --float-model model.onnx --random-inputs

The input is textual IR (`.mlir`) or an ONNX model (imported on the fly). Inputs come
from `.npy` files, by the names the model gives them, or are drawn at random from a
seed. Each output is written as `NAME.npy` into `--output-dir`. A command stream
(`npu` level) runs on the NPU simulator of `--target` (default: the target it was
compiled for): the run's cycles, engine utilisation and DDR traffic are printed
(`--layers`: per layer too), and `--trace FILE` writes its timeline as Chrome trace
events (open it in Perfetto or chrome://tracing). With
`--compare-onnxruntime`, the same inputs are run through onnxruntime and the maximum
absolute and relative error of every output is printed; the exit status is 1 if any
output differs beyond `--rtol`/`--atol` (`irc.numerics.compare_arrays`: atol + rtol
times the tensor's largest |value|). `--compare` compiles the float model in memory
and compares every layer's output of the float interpreter, the integer reference and
the simulator (irc/driver/compare.py); the exit status is 1 if the simulator differs
from the reference on any layer.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from irc.diagnostics import IrcError
from irc.fileio import StagedOutputs
from irc.importers.load import load_module
from irc.tools.common import (
    add_input_shape_argument,
    check_output_directory,
    check_output_file,
    collect_input_shapes,
    nonempty_path,
    report,
    run_interruptibly,
    tolerance,
    tool_error,
)

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from irc.driver.pipeline import CompileOptions
    from irc.runtime import Session
    from irc.sim.run import Simulator

TOOL = "irc-run"


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        prog=TOOL,
        description="Run a model (.mlir, .onnx, or a package directory from irc-compile) "
        "with irc's reference interpreter or the NPU simulator.",
    )
    parser.add_argument(
        "model",
        help="textual IR (.mlir), an ONNX model (.onnx), or a package directory (irc-compile -o)",
    )
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=FILE.npy",
        help="an input by name, from a .npy file (repeat for each input)",
    )
    parser.add_argument(
        "--random-inputs", action="store_true", help="draw every input not given at random"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for --random-inputs (default 0)")
    add_input_shape_argument(parser)
    parser.add_argument("--entry", default="main", help="function to run (default main)")
    parser.add_argument(
        "--output-dir", type=nonempty_path, help="write each output as NAME.npy here"
    )
    parser.add_argument(
        "--compare-onnxruntime",
        type=Path,
        metavar="MODEL.onnx",
        help="run the same inputs through onnxruntime and compare",
    )
    parser.add_argument("--rtol", type=tolerance, default=1e-4, help="relative tolerance (1e-4)")
    parser.add_argument("--atol", type=tolerance, default=1e-5, help="absolute tolerance (1e-5)")
    parser.add_argument(
        "--target",
        metavar="NAME|FILE",
        help="the NPU that runs a command stream (default: the one it was compiled for)",
    )
    parser.add_argument(
        "--trace", type=nonempty_path, metavar="FILE.json", help="write a command stream's timeline"
    )
    parser.add_argument(
        "--layers", action="store_true", help="print a command stream's figures per layer"
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="compare every layer's output of the float model, the int8 reference and the "
        "simulator (the model: an .onnx or float .mlir, compiled in memory as irc-compile "
        "does; or a package with --float-model); exit status 1 if the simulator differs",
    )
    parser.add_argument(
        "--float-model",
        type=Path,
        metavar="MODEL.onnx",
        help="with --compare on a package: the float model it was compiled from",
    )
    return parser.parse_args(argv)


def _read_inputs(options: Sequence[str]) -> dict[str, np.ndarray]:
    inputs: dict[str, np.ndarray] = {}
    for option in options:
        name, sep, file = option.rpartition("=")
        if not sep or not name:
            raise tool_error(TOOL, f"malformed --input '{option}'", hint="write NAME=FILE.npy")
        if name in inputs:
            raise tool_error(
                TOOL, f"--input gives '{name}' twice", hint="give each input once: NAME=FILE.npy"
            )
        try:
            inputs[name] = np.load(file, allow_pickle=False)
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as failure:
            # A file that starts like a zip archive is read as an .npz: BadZipFile.
            raise tool_error(
                TOOL,
                f"cannot read input '{name}' from '{file}': {failure}",
                hint="give a .npy file written by numpy.save",
            ) from None
    return inputs


def random_array(shape: Sequence[int], dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    """A random input: standard normal floats, small non-negative integers, random bools."""
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    return rng.integers(0, 2, size=shape).astype(dtype)


def _output_file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".npy"


def run(args: argparse.Namespace) -> int:
    """The command, with parsed arguments; returns the exit status."""
    from irc.interp import run_function

    if args.output_dir is not None:
        check_output_directory(TOOL, "--output-dir", args.output_dir)
    if args.trace is not None:
        check_output_file(TOOL, "--trace", args.trace, [args.model])
    if args.compare or args.float_model is not None:
        return _compare_layers(args)
    package = None
    if Path(args.model).is_dir():  # a package from irc-compile: run it through the runtime
        package = _open_package(args)
        module = package.package.module
    else:
        module = load_module(TOOL, Path(args.model), collect_input_shapes(args.input_shape, TOOL))
    inputs = _model_inputs(module, args)
    stream = _is_command_stream(module, args.entry)
    if (args.trace or args.layers) and not stream:
        raise tool_error(
            TOOL,
            "--trace and --layers need a command stream (npu level)",
            hint="lower the model with lower-to-npu first",
        )
    if stream:
        simulator = package.simulator if package is not None else _load_stream(module, args)
        start = time.perf_counter()
        # A package runs through its session, which warns of inputs it cannot represent.
        outputs = package.run(inputs) if package is not None else simulator.run(inputs)
    else:
        start = time.perf_counter()
        outputs = run_function(module, inputs, args.entry)
    elapsed = time.perf_counter() - start
    print(f"ran @{args.entry} in {elapsed * 1000:.1f} ms")
    for name, array in outputs.items():
        print(f"  {name}: {array.dtype}{list(array.shape)}")

    if args.output_dir is not None:
        with StagedOutputs() as staged:
            for name, array in outputs.items():
                staged.stage(
                    args.output_dir / _output_file_name(name), functools.partial(np.save, arr=array)
                )
        print(f"wrote {len(outputs)} output(s) to {args.output_dir}")

    if args.compare_onnxruntime is not None:
        return _compare(args, inputs, outputs)
    return 0


def _model_inputs(module: ModuleOp, args: argparse.Namespace) -> dict[str, np.ndarray]:
    """The inputs of `module`'s entry function: from --input, else --random-inputs."""
    from irc.interp import function_signature
    from irc.ir.weights import dtype_of

    inputs = _read_inputs(args.input)
    signature_inputs, _ = function_signature(module, args.entry)
    rng = np.random.default_rng(args.seed)
    for name, tensor_type in signature_inputs:
        if name in inputs or not args.random_inputs:
            continue
        dtype = dtype_of(tensor_type.get_element_type())
        inputs[name] = random_array(tuple(tensor_type.get_shape()), dtype, rng)

    known = [name for name, _ in signature_inputs]
    unknown = [name for name in inputs if name not in known]
    if unknown:
        # Before the missing inputs: a misspelt name is the likelier mistake.
        raise tool_error(
            TOOL,
            f"--input names '{unknown[0]}', which is not an input of the model",
            hint=f"the inputs are: {', '.join(known) or 'none'}",
        )
    missing = [name for name in known if name not in inputs]
    if missing:
        raise tool_error(
            TOOL,
            f"no value for input{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}",
            hint="give --input NAME=FILE.npy for each input, or --random-inputs",
        )
    return inputs


def _is_command_stream(module: ModuleOp, entry: str) -> bool:
    from xdsl.dialects.func import FuncOp

    for op in module.ops:
        if isinstance(op, FuncOp) and op.sym_name.data == entry:
            return any(inner.name.startswith("npu.") for inner in op.walk())
    return False


def _open_package(args: argparse.Namespace) -> Session:
    """Open a package directory with the runtime; print what the simulator measures."""
    from irc.runtime import Session

    if args.target or args.entry != "main" or args.input_shape:
        raise tool_error(
            TOOL,
            "--target, --entry and --input-shape do not apply to a package",
            hint="a package runs on the target and entry it was compiled for",
        )
    start = time.perf_counter()
    session = Session(Path(args.model))
    elapsed = time.perf_counter() - start
    print(
        f"opened the package in {elapsed * 1000:.1f} ms (checksums, decoding, hazard checks, "
        "timing)"
    )
    _print_measures(session.simulator, args)
    return session


def _print_measures(simulator: Simulator, args: argparse.Namespace) -> None:
    from irc.sim.run import write_trace

    result = simulator.report
    print(result.summary())
    if args.layers:
        print(result.layer_table())
    if args.trace is not None:
        write_trace(result, args.trace)
        print(f"wrote the trace to {args.trace}")


def _load_stream(module: ModuleOp, args: argparse.Namespace) -> Simulator:
    """Load a command stream into the simulator; print (and write) what it measures."""
    from xdsl.dialects.func import FuncOp

    from irc.sim.run import Simulator
    from irc.targets import load_target

    function = next(
        op for op in module.ops if isinstance(op, FuncOp) and op.sym_name.data == args.entry
    )
    name = args.target or getattr(function.attributes.get("npu.target"), "data", None)
    if name is None:
        raise tool_error(
            TOOL,
            "the command stream names no target",
            hint="give --target NAME|FILE (irc-target --list shows the presets)",
        )
    target = load_target(name)
    start = time.perf_counter()
    simulator = Simulator(module, target, args.entry)
    elapsed = time.perf_counter() - start
    print(f"loaded the command stream in {elapsed * 1000:.1f} ms (hazard checks, timing)")
    _print_measures(simulator, args)
    return simulator


def _compare(args: argparse.Namespace, inputs: dict, outputs: dict) -> int:
    import onnx

    from irc.importers.reference import run_onnxruntime
    from irc.numerics import compare

    path: Path = args.compare_onnxruntime
    if not path.is_file():
        raise tool_error(TOOL, f"cannot open '{path}': no such file")
    try:
        model = onnx.load(str(path))
    except Exception as failure:  # protobuf raises several unrelated types
        raise tool_error(TOOL, f"cannot read ONNX model '{path}': {failure}") from None
    expected = run_onnxruntime(model, inputs)
    report = compare(outputs, expected, rtol=args.rtol, atol=args.atol)
    print(report.format())
    return 0 if report.ok else 1


def _compare_layers(args: argparse.Namespace) -> int:
    """`--compare`: the three-way layer diff (irc/driver/compare.py); 1 if the
    simulator differs from the integer reference on any layer."""
    from irc.driver.compare import LAYERS_DIR, compare_layers, compile_levels, dump_file_name
    from irc.driver.pipeline import CompileOptions

    if not args.compare:
        raise tool_error(
            TOOL, "--float-model only applies with --compare", hint="add --compare, or drop it"
        )
    if args.trace or args.layers or args.compare_onnxruntime is not None or args.entry != "main":
        raise tool_error(
            TOOL,
            "--compare does not combine with --trace, --layers, --compare-onnxruntime or --entry",
            hint="run them without --compare",
        )
    model = Path(args.model)
    check = None
    expected: dict[str, bytes] = {}
    if model.is_dir():
        path, options, check, expected = _package_to_compare(args)
    else:
        if args.float_model is not None:
            raise tool_error(
                TOOL,
                "--float-model is for a package; the model given is the float model itself",
                hint=f"drop --float-model, or give the package directory instead of '{model}'",
            )
        path = model
        options = CompileOptions(
            target=args.target or "npu-demo",
            input_shapes=collect_input_shapes(args.input_shape, TOOL),
        )
    start = time.perf_counter()
    levels = compile_levels(path, options, check)
    for warning in levels.warnings:
        print(f"warning: {warning}")
    for name, content in expected.items():
        if levels.files[name] != content:
            raise tool_error(
                TOOL,
                f"the package '{model}' was not compiled from '{path}' with the options its "
                f"manifest records: its {name} differs",
                hint="give --float-model the model the package was compiled from, or "
                "compile the package again",
            )
    print(f"compiled '{path}' in memory in {time.perf_counter() - start:.1f} s")
    # The model's inputs: the float module's, or the integer module's (a TFLite model).
    comparison = compare_layers(levels, _model_inputs(levels.float_module or levels.planned, args))
    print(comparison.format_text())
    if args.output_dir is not None:
        count = 0
        with StagedOutputs() as staged:
            for index, layer in enumerate(comparison.layers):
                for level, array in layer.arrays.items():
                    file = args.output_dir / LAYERS_DIR / dump_file_name(index, layer.name, level)
                    staged.stage(file, functools.partial(np.save, arr=array))
                    count += 1
        print(f"wrote {count} layer output(s) to {args.output_dir / LAYERS_DIR}")
    return 0 if comparison.matches else 1


def _package_to_compare(
    args: argparse.Namespace,
) -> tuple[Path, CompileOptions, Callable[[ModuleOp], None], dict[str, bytes]]:
    """For `--compare` on a package: the float model, the options the manifest records,
    a check that the model has the package's inputs, and the files to match."""
    from irc.codegen.package import (
        PROGRAM,
        TARGET,
        WEIGHTS,
        entry_function,
        read_file,
        read_manifest,
        read_package,
    )
    from irc.driver.pipeline import CompileOptions
    from irc.interp import function_signature
    from irc.targets import load_target

    package = Path(args.model)
    if args.target or args.input_shape:
        raise tool_error(
            TOOL,
            "--target and --input-shape do not apply to a package",
            hint="a package is compared as it was compiled",
        )
    manifest = read_manifest(package)
    source = manifest.get("model", {}).get("source", "?")
    if args.float_model is None:
        raise tool_error(
            TOOL,
            "--compare on a package needs the float model it was compiled from",
            hint=f"give --float-model MODEL.onnx (the manifest names '{source}')",
        )
    recorded = manifest.get("options", {})
    for option in ("calibration_data", "calibration_stats"):
        given = recorded.get(option)
        if given and not Path(given).exists():
            raise tool_error(
                TOOL,
                f"the package was compiled with {option.replace('_', '-')} '{given}', "
                "which is not there from here",
                hint="run irc-run in the directory irc-compile ran in",
            )
    # What irc-compile's --target was: recorded in the program. Another spelling of the
    # same target would change the program's bytes.
    stream = read_package(package).module
    given = getattr(entry_function(stream).attributes.get("npu.target"), "data", None)
    compared: tuple[str, ...] = (PROGRAM, WEIGHTS)
    try:
        load_target(given or "")
        target = str(given)
    except IrcError:  # a target file not there from here: the package's copy of it
        target, compared = str(package / TARGET), (WEIGHTS,)
    options = CompileOptions(
        target=target,
        quantize=recorded.get("quantize", "int8"),
        calibration_data=Path(recorded["calibration_data"])
        if recorded.get("calibration_data")
        else None,
        calibration_samples=recorded.get("calibration_samples", 8),
        float_layers=tuple(recorded.get("float_layers", ())),
        opt_level=recorded.get("opt_level", 2),
        observer=recorded.get("observer"),
        input_shapes=recorded.get("input_shapes", {}),
        calibration_stats=Path(recorded["calibration_stats"])
        if recorded.get("calibration_stats")
        else None,
        partition=recorded.get("partition", "cost"),
    )
    wanted = [(entry["name"], list(entry["shape"])) for entry in manifest["inputs"]]

    def check(module: ModuleOp) -> None:
        inputs = [(name, list(t.get_shape())) for name, t in function_signature(module)[0]]
        if inputs != wanted:
            shown = ", ".join(f"{name}{shape}" for name, shape in inputs)
            expected = ", ".join(f"{name}{shape}" for name, shape in wanted)
            raise tool_error(
                TOOL,
                f"'{args.float_model}' does not match the package '{package}': it takes "
                f"{shown or 'no inputs'}, the package {expected or 'no inputs'}",
                hint=f"give --float-model the model the package was compiled from ('{source}')",
            )

    files = {name: read_file(package, manifest, name) for name in compared}
    return args.float_model, options, check, files


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `irc-run`."""
    args = _parse_args(argv)
    try:
        return run_interruptibly(TOOL, lambda: run(args))
    except IrcError as failure:
        report(failure.diagnostics)
        return 1


if __name__ == "__main__":
    sys.exit(main())
