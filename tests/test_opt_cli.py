"""irc-opt and the pass registry: what the lit tests cannot check well.

- bad input never gives a traceback, only `file:line:col: error:` diagnostics and exit 1;
- `-o` never leaves a half-written or stale file, nor a temporary file;
- every --weights mode that promises it round-trips constants bit-exactly;
- passes that fail, break the IR or emit warnings are reported naming the pass;
- the registry: lazy imports, typed options, pattern filters of `canonicalize`.

Test passes are registered for the duration of a test by adding them to
`irc.passes.PASSES`, which points at this module.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType, f32
from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation, irdl_op_definition, traits_def
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait
from xdsl.utils.exceptions import PassFailedException

from irc import passes
from irc.diagnostics import Diagnostic, IrcError, Location, Severity, emit
from irc.dialects import nn
from irc.ir.context import make_context
from irc.ir.io import parse_module
from irc.passes import PassOptionError, option, parse_pipeline
from irc.tools.opt import main

REPOSITORY = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

VALID = """\
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = nn.relu %x : tensor<2x3xf32>
  %b = nn.relu %x : tensor<2x3xf32>
  %sum = nn.add %a, %b : tensor<2x3xf32>
  func.return %sum : tensor<2x3xf32>
}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """Run irc-opt in-process; returns (exit status, stdout, stderr)."""
    status = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def valid_file(tmp_path: Path) -> Path:
    path = tmp_path / "valid.mlir"
    path.write_text(VALID)
    return path


# --------------------------------------------------------------------------------------
# Test passes


@dataclass(frozen=True)
class FailingPass(ModulePass):
    """Always fails, as a pass does when it cannot do its job."""

    name = "test-fail"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise PassFailedException("no NPU can run this")


@dataclass(frozen=True)
class BreakIRPass(ModulePass):
    """Gives the first nn.relu a wrong result type, leaving IR that does not verify."""

    name = "test-break-ir"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        relu = next(o for o in op.walk() if isinstance(o, nn.ReluOp))
        broken = nn.ReluOp.create(operands=[relu.operands[0]], result_types=[TensorType(f32, [7])])
        broken.location = relu.location
        PatternRewriter(relu).replace(relu, [broken], broken.results)


@dataclass(frozen=True)
class BuggyPass(ModulePass):
    """Has a bug: the exception must keep its traceback."""

    name = "test-buggy"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise ZeroDivisionError("a bug in a pass")


@dataclass(frozen=True)
class EmitPass(ModulePass):
    """Reports a diagnostic with a note at every nn.relu, without failing."""

    name = "test-emit"
    severity: Literal["warning", "remark"] = option("warning", "the severity to emit")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for relu in (o for o in op.walk() if isinstance(o, nn.ReluOp)):
            where = Location.of(relu)
            note = Diagnostic("the relu is here", where, Severity.NOTE)
            emit(Diagnostic("relu seen", where, Severity(self.severity), notes=[note]))


@dataclass(frozen=True)
class OptionsPass(ModulePass):
    """Has an option of every supported type."""

    name = "test-options"
    count: int = option(1, "an integer")
    scale: float = option(0.5, "a number")
    label: str = option("x", "a string")
    sizes: tuple[int, ...] = option((), "integers")
    limit: int | None = option(None, "an optional integer")
    mode: Literal["fast", "exact"] = option("fast", "one of two words")
    enabled: bool = option(False, "a boolean")
    required: int = option(0, "a positive integer")

    def __post_init__(self) -> None:
        if self.count < 0:
            raise PassOptionError("'count' must not be negative")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


TEST_PASSES = {
    "test-fail": "FailingPass",
    "test-break-ir": "BreakIRPass",
    "test-buggy": "BuggyPass",
    "test-emit": "EmitPass",
    "test-options": "OptionsPass",
}


@pytest.fixture(autouse=True)
def register_test_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, class_name in TEST_PASSES.items():
        monkeypatch.setitem(passes.PASSES, name, (__name__, class_name))


# --------------------------------------------------------------------------------------
# No tracebacks, exit codes


BAD_INPUTS = {
    "missing file": (None, [], "cannot open input file"),
    "parse error": ("func.func @f( {\n", [], ":1:"),
    "unknown op": (
        "func.func @f(%x: tensor<2xf32>) {\n  %y = nn.nope %x : tensor<2xf32>\n  func.return\n}\n",
        [],
        "nn.nope is not registered",
    ),
    "verifier error": (
        "func.func @f(%x: tensor<2xf32>) {\n"
        "  %y = nn.relu %x : (tensor<2xf32>) -> tensor<3xf32>\n  func.return\n}\n",
        [],
        ":2:3: error: result type tensor<3xf32> does not match",
    ),
    "undefined value": (
        "func.func @f() -> tensor<2xf32> {\n  func.return %nowhere : tensor<2xf32>\n}\n",
        [],
        "error:",
    ),
    "missing sidecar": (
        'builtin.module attributes {irc.weights = "gone.weights.npz"} {\n}\n',
        [],
        "does not exist",
    ),
    "sidecar outside the directory": (
        'builtin.module attributes {irc.weights = "../up.weights.npz"} {\n}\n',
        [],
        "lies outside",
    ),
    "unknown pass": (VALID, ["-p", "cse,frobnicate"], "<pass-pipeline>:1:5: error: unknown pass"),
    "unknown option": (
        VALID,
        ["-p", "cse{x=1}"],
        "<pass-pipeline>:1:5: error: 'cse' has no option",
    ),
    "bad option value": (
        VALID,
        ["-p", "test-options{count=three}"],
        "<pass-pipeline>:1:20: error: invalid value for option 'count'",
    ),
    "option value out of range": (
        VALID,
        ["-p", "test-options{count=-1}"],
        "<pass-pipeline>:1:1: error: invalid options for 'test-options'",
    ),
    "bad pipeline syntax": (
        VALID,
        ["--pass-pipeline", "builtin.module(cse"],
        "<pass-pipeline>:1:19",
    ),
    "non-module anchor": (VALID, ["-p", "func.func(cse)"], "irc's passes are module passes"),
    "failing pass": (VALID, ["-p", "test-fail"], "pass 'test-fail' failed: no NPU can run this"),
    "pass that breaks the IR": (VALID, ["-p", "test-break-ir"], "which broke it"),
    "sidecar on stdout": (VALID, ["--weights=sidecar"], "irc-opt: error: --weights=sidecar"),
}


@pytest.mark.parametrize("case", BAD_INPUTS, ids=list(BAD_INPUTS))
def test_bad_input_is_a_diagnostic_not_a_traceback(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, flags, expected = BAD_INPUTS[case]
    path = tmp_path / "input.mlir"
    if text is not None:
        path.write_text(text)
    status, out, err = run(capsys, path, *flags)
    assert status == 1, err
    assert expected in err
    assert "Traceback" not in err
    assert "builtin.module" not in out


def test_non_utf8_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "binary.mlir"
    path.write_bytes(b"\xff\xfe\x00garbage")
    status, _, err = run(capsys, path)
    assert status == 1
    assert f"{path}: error: input file '{path}' is not UTF-8 text" in err


def test_directory_as_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, tmp_path)
    assert status == 1
    assert "error: cannot read input file" in err


def test_a_bug_in_a_pass_keeps_its_traceback(valid_file: Path) -> None:
    with pytest.raises(ZeroDivisionError, match="a bug in a pass"):
        main([str(valid_file), "-p", "test-buggy"])


def test_exit_codes(valid_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, valid_file)[0] == 0
    assert run(capsys, "--help")[0] == 0
    assert run(capsys, "--list-passes")[0] == 0
    status, _, err = run(capsys, valid_file, "--no-such-flag")
    assert status == 2
    assert "unrecognized arguments: --no-such-flag" in err
    assert run(capsys, valid_file, "--weights=everywhere")[0] == 2
    assert run(capsys, valid_file, "--verify-each=perhaps")[0] == 2
    assert run(capsys, tmp_path / "missing.mlir")[0] == 1


def test_console_script_and_thin_executable(valid_file: Path) -> None:
    for tool in (BIN / "irc-opt", REPOSITORY / "tools" / "irc-opt"):
        result = subprocess.run(
            [str(tool), str(valid_file), "-p", "cse"], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stderr
        assert "%sum = nn.add %a, %a" in result.stdout
        bad = subprocess.run(
            [str(tool), str(valid_file), "-p", "cse{x}"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert bad.returncode == 1
        assert bad.stderr.startswith("<pass-pipeline>:1:5: error: 'cse' has no option 'x'")
        assert "Traceback" not in bad.stderr


def test_stdin_and_stdout() -> None:
    result = subprocess.run(
        [str(BIN / "irc-opt"), "-", "-p", "cse"],
        input=VALID,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0
    assert "%sum = nn.add %a, %a" in result.stdout
    result = subprocess.run(
        [str(BIN / "irc-opt")], input="func.func @f(", capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert result.stderr.startswith("<stdin>:1:")


# --------------------------------------------------------------------------------------
# -o: all or nothing


@pytest.mark.parametrize(
    "flags", [["-p", "test-fail"], ["-p", "test-break-ir"], ["-p", "nope"]], ids=str
)
def test_failed_run_leaves_output_untouched(
    flags: list[str], valid_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "out" / "result.mlir"
    output.parent.mkdir()
    output.write_text("previous result\n")
    status, _, _ = run(capsys, valid_file, "-o", output, *flags)
    assert status == 1
    assert output.read_text() == "previous result\n"
    assert sorted(p.name for p in output.parent.iterdir()) == ["result.mlir"]


def test_failed_run_creates_no_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "bad.mlir"
    source.write_text(BAD_INPUTS["verifier error"][0])
    output = tmp_path / "out"
    output.mkdir()
    assert run(capsys, source, "-o", output / "result.mlir")[0] == 1
    assert list(output.iterdir()) == []


def test_bug_leaves_no_file(valid_file: Path, tmp_path: Path) -> None:
    output = tmp_path / "out"
    output.mkdir()
    with pytest.raises(ZeroDivisionError):
        main([str(valid_file), "-p", "test-buggy", "-o", str(output / "result.mlir")])
    assert list(output.iterdir()) == []


def test_successful_run_writes_output(
    valid_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "result.mlir"
    status, out, _ = run(capsys, valid_file, "-p", "cse", "-o", output, "--weights=resource")
    assert status == 0
    assert out == ""
    assert "%sum = nn.add %a, %a" in output.read_text()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# --------------------------------------------------------------------------------------
# Weights round-trip


def weights_module(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """An input file with large constants of several dtypes, in MLIR's lossless hex form."""
    rng = np.random.default_rng(7)
    arrays = {
        "conv_w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
        "bias": rng.standard_normal(40).astype(np.float32) * 1e-3,
        "shape": rng.integers(-(2**40), 2**40, size=20, dtype=np.int64),
        "table": rng.integers(-128, 127, size=(5, 7), dtype=np.int8),
        "halves": rng.standard_normal(33).astype(np.float16),
        # Names that np.savez(file, **blobs) would take for its own parameters.
        "file": rng.standard_normal(20).astype(np.float32),
        "allow_pickle": rng.integers(0, 9, size=24, dtype=np.int32),
    }
    arrays["bias"][0] = -0.0  # the sign of zero must survive
    arrays["bias"][1] = np.float32(1e-40)  # and subnormals
    types = {
        name: str(nn.ConstantOp.from_array(array).result.type) for name, array in arrays.items()
    }
    lines = ["func.func @main() -> (" + ", ".join(types.values()) + ") {"]
    for name, array in arrays.items():
        data = array.astype(array.dtype.newbyteorder("<")).tobytes().hex().upper()
        lines.append(f'  %{name} = nn.constant dense<"0x{data}"> : {types[name]} loc("{name}")')
    results = ", ".join(f"%{name}" for name in arrays)
    lines += [f"  func.return {results} : " + ", ".join(types.values()), "}", ""]
    path = tmp_path / "weights.mlir"
    path.write_text("\n".join(lines))
    return path, arrays


def constants_of(path: Path) -> dict[str, np.ndarray]:
    module = parse_module(path.read_text(), make_context(), str(path), weights_dir=path.parent)
    found = {}
    for op in module.walk():
        if isinstance(op, nn.ConstantOp):
            found[Location.of(op).name] = op.array() if op.has_data() else None
    return found


@pytest.mark.parametrize(
    "mode",
    ["resource", "sidecar", "inline"],
)
def test_weights_round_trip_losslessly(
    mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, arrays = weights_module(tmp_path)
    assert {k: v.tobytes() for k, v in constants_of(source).items()} == {
        k: v.tobytes() for k, v in arrays.items()
    }
    output = tmp_path / "out" / "model.mlir"
    status, _, err = run(
        capsys, source, "-o", output, f"--weights={mode}", "--mlir-print-debuginfo"
    )
    assert status == 0, err
    text = output.read_text()
    assert ("dense_resource<" in text) == (mode != "inline")
    assert (output.parent / "model.weights.npz").exists() == (mode == "sidecar")
    # A second round trip through irc-opt keeps the bytes too.
    again = tmp_path / "again" / "model.mlir"
    assert run(capsys, output, "-o", again, f"--weights={mode}", "--mlir-print-debuginfo")[0] == 0
    for path in (output, again):
        parsed = constants_of(path)
        assert parsed.keys() == arrays.keys()
        for name, array in arrays.items():
            assert parsed[name].dtype == array.dtype
            assert parsed[name].shape == array.shape
            assert parsed[name].tobytes() == array.tobytes(), name


def test_split_chunks_with_the_same_resource_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chunk = (
        "func.func @f() -> tensor<4xf32> {\n"
        '  %w = nn.constant dense<"0x0000803F000000400000404000008040"> : tensor<4xf32> loc("w")\n'
        "  func.return %w : tensor<4xf32>\n}\n"
    )
    source = tmp_path / "chunks.mlir"
    source.write_text(chunk + "// -----\n" + chunk)
    printed = tmp_path / "printed.mlir"
    flags = ["--split-input-file", "--weights-inline-limit=2"]
    assert run(capsys, source, *flags, "--weights=resource", "-o", printed)[0] == 0
    assert printed.read_text().count('w: "0x04000000') == 2
    status, out, _ = run(capsys, printed, "--split-input-file")
    assert status == 0
    assert out.count("dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>") == 2


def test_elided_weights_keep_shapes_but_no_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, arrays = weights_module(tmp_path)
    status, out, _ = run(capsys, source, "--mlir-print-debuginfo")
    assert status == 0
    elided = tmp_path / "elided.mlir"
    elided.write_text(out)
    parsed = constants_of(elided)
    assert parsed == dict.fromkeys(arrays)
    assert len(out) < 3000


def test_inline_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source, arrays = weights_module(tmp_path)
    for limit in (0, 33, 40, 108):
        status, out, _ = run(capsys, source, f"--weights-inline-limit={limit}")
        assert status == 0
        assert out.count("dense_resource<") == sum(a.size > limit for a in arrays.values())


# --------------------------------------------------------------------------------------
# Pass failures, verification, emitted diagnostics


def test_failed_pass_is_reported_with_ir_dump(
    valid_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(
        capsys, valid_file, "-p", "cse,test-fail", "--mlir-print-ir-after-failure"
    )
    assert status == 1
    assert out == ""
    dump, _, diagnostic = err.partition("\n\n")
    assert dump.startswith("// -----// IR Dump After Failing Failed (test-fail) //----- //\n")
    assert "%sum = nn.add %a, %a" in dump  # the IR as cse left it
    assert (
        diagnostic.strip() == f"{valid_file}: error: pass 'test-fail' failed: no NPU can run this"
    )


def test_pass_that_breaks_the_ir_is_named(
    valid_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run(capsys, valid_file, "-p", "test-break-ir", "--mlir-print-ir-after-failure")
    assert status == 1
    assert err.startswith("// -----// IR Dump After BreakIR Failed (test-break-ir) //----- //\n")
    assert "tensor<7xf32>" in err
    assert f"{valid_file}:2:3: error: result type tensor<7xf32> does not match" in err
    assert "hint: the IR verified before pass 'test-break-ir', which broke it" in err


def test_verify_each_false_skips_verification(
    valid_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, valid_file, "-p", "test-break-ir", "--verify-each=false")
    assert status == 0, err
    assert "nn.relu %x : (tensor<2x3xf32>) -> tensor<7xf32>" in out
    # mlir-opt's bare spelling is the default, true.
    assert run(capsys, valid_file, "-p", "test-break-ir", "-verify-each")[0] == 1


def test_emitted_warnings_are_printed_and_do_not_fail(
    valid_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, valid_file, "-p", "test-emit")
    assert status == 0
    assert "nn.add" in out
    assert err.splitlines() == [
        f"{valid_file}:2:3: warning: relu seen",
        f"{valid_file}:2:3: note: the relu is here",
        f"{valid_file}:3:3: warning: relu seen",
        f"{valid_file}:3:3: note: the relu is here",
    ]


def test_verify_diagnostics_matches_warnings_remarks_and_notes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "expectations.mlir"
    path.write_text(
        "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  // expected-remark @+2 {{relu seen}}\n"
        "  // expected-note @+1 {{the relu is here}}\n"
        "  %y = nn.relu %x : tensor<2xf32>\n"
        "  func.return %y : tensor<2xf32>\n"
        "}\n"
    )
    flags = ["--verify-diagnostics", "-p", "test-emit{severity=remark}"]
    status, out, err = run(capsys, path, *flags)
    assert (status, err) == (0, "")
    assert "nn.relu" in out
    # As warnings they are unexpected, and the remark is unmet.
    status, _, err = run(capsys, path, "--verify-diagnostics", "-p", "test-emit")
    assert status == 1
    assert err.splitlines() == [
        f"{path}:4:3: error: unexpected warning: relu seen",
        f'{path}:2:6: error: expected remark "relu seen" was not produced',
    ]


def test_verify_diagnostics_unknown_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "unknown.mlir"
    # A pass failure is located at the module; an implicit module has no line.
    path.write_text(VALID + "// expected-error @unknown {{pass 'test-fail' failed}}\n")
    status, _, err = run(capsys, path, "--verify-diagnostics", "-p", "test-fail")
    assert (status, err) == (0, "")
    assert run(capsys, path, "--verify-diagnostics")[0] == 1  # unmet without the pass
    path.write_text(
        "builtin.module {\n"
        "// expected-error @-1 {{pass 'test-fail' failed: no NPU can run this}}\n}\n"
    )
    status, _, err = run(capsys, path, "--verify-diagnostics", "-p", "test-fail")
    assert (status, err) == (0, "")


# --------------------------------------------------------------------------------------
# The registry


def test_every_registered_pass_is_documented() -> None:
    infos = passes.list_passes()
    assert [info.name for info in infos] == sorted(passes.PASSES)
    for info in infos:
        assert info.pass_class.name == info.name
        assert info.summary, info.name
        for opt in info.options:
            assert opt.help, f"{info.name}: option {opt.name} has no help"
    assert passes.pass_reference_markdown().count("\n## `") == len(infos)


def test_option_values_are_typed() -> None:
    (pass_,) = parse_pipeline(
        'test-options{count=3 scale=2 label="a b" sizes=1,2,3 limit=7 mode=exact enabled}'
    )
    assert pass_ == OptionsPass(
        count=3, scale=2.0, label="a b", sizes=(1, 2, 3), limit=7, mode="exact", enabled=True
    )
    assert parse_pipeline("test-options")[0] == OptionsPass()
    assert parse_pipeline("test-options{enabled=false limit=none}")[0] == OptionsPass()


@pytest.mark.parametrize(
    ("pipeline", "column", "message"),
    [
        ("test-options{mode=slow}", 19, "expected one of fast, exact, got 'slow'"),
        ("test-options{sizes=1,x}", 20, "expected an integer, got 'x'"),
        ("test-options{scale=big}", 20, "expected a number, got 'big'"),
        ("test-options{count}", 14, "a value is required"),
        ("test-options{count=1 count=2}", 22, "option 'count' is given twice"),
        ('test-options{label="open}', 20, "unterminated string"),
        ("cse dce", 5, "expected ',' between passes, found 'd'"),
        ("builtin.module cse", 16, "expected '(' after the anchor 'builtin.module'"),
    ],
)
def test_pipeline_errors(pipeline: str, column: int, message: str) -> None:
    with pytest.raises(IrcError) as failure:
        parse_pipeline(pipeline)
    (diagnostic,) = failure.value.diagnostics
    assert diagnostic.location == Location(file="<pass-pipeline>", line=1, col=column)
    assert message in diagnostic.message


def test_get_pass_class() -> None:
    from irc.transforms.cse import CSEPass

    assert passes.get_pass_class("cse") is CSEPass
    with pytest.raises(IrcError, match="unknown pass 'csee'") as failure:
        passes.get_pass_class("csee")
    assert failure.value.diagnostics[0].hint.startswith("did you mean 'cse'?")


def loaded_modules(code: str) -> set[str]:
    """The modules loaded after running `code` in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPOSITORY
    )
    return set(result.stdout.split())


def test_help_imports_nothing_heavy() -> None:
    modules = loaded_modules(
        "import contextlib, io\nfrom irc.tools.opt import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    main(['--help'])"
    )
    heavy = {
        m for m in modules if m.split(".")[0] in {"xdsl", "numpy", "onnx", "onnxruntime", "lark"}
    }
    assert heavy == set()


def test_a_pipeline_imports_only_its_passes(valid_file: Path) -> None:
    modules = loaded_modules(
        "import contextlib, io\nfrom irc.tools.opt import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()):\n    main([{str(valid_file)!r}, '-p', 'cse'])"
    )
    assert "irc.transforms.cse" in modules
    assert "irc.transforms.canonicalize" not in modules
    assert "irc.transforms.fold_constants" not in modules
    assert not {m for m in modules if m.split(".")[0] in {"onnx", "onnxruntime", "lark"}}


# --------------------------------------------------------------------------------------
# canonicalize's options


class RenameMarkedOp(RewritePattern):
    """test.mark {done = "no"} -> test.mark {done = "yes"}"""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if op.attributes.get("done") == StringAttr("no"):
            op.attributes["done"] = StringAttr("yes")
            rewriter.notify_op_modified(op)


VISITS: list[str] = []


class RecordVisit(RewritePattern):
    """Records the order in which ops are visited; rewrites nothing."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        VISITS.append(op.attributes["id"].data)  # type: ignore[union-attr]


class MarkPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (RenameMarkedOp(), RecordVisit())


@irdl_op_definition
class MarkOp(IRDLOperation):
    """An op with canonicalization patterns, and side effects so it is never dead."""

    name = "test.mark"
    traits = traits_def(MarkPatterns())


def marked_module() -> ModuleOp:
    ops = [
        MarkOp.create(attributes={"done": StringAttr("no"), "id": StringAttr(str(i))})
        for i in range(3)
    ]
    return ModuleOp(ops)


def canonicalized(pipeline: str) -> tuple[list[str], list[str]]:
    module = marked_module()
    VISITS.clear()
    (pass_,) = parse_pipeline(pipeline)
    pass_.apply(Context(), module)
    done = [op.attributes["done"].data for op in module.ops]  # type: ignore[union-attr]
    return done, list(VISITS)


def test_canonicalize_applies_op_patterns() -> None:
    done, visits = canonicalized("canonicalize")
    assert done == ["yes", "yes", "yes"]
    assert visits[:3] == ["0", "1", "2"]


def test_canonicalize_bottom_up() -> None:
    _, visits = canonicalized("canonicalize{top-down=false}")
    assert visits[:3] == ["2", "1", "0"]


def test_canonicalize_pattern_filters() -> None:
    assert canonicalized("canonicalize{disable-patterns=RenameMarkedOp}")[0] == ["no"] * 3
    assert canonicalized("canonicalize{enable-patterns=RecordVisit}")[0] == ["no"] * 3
    done, visits = canonicalized("canonicalize{enable-patterns=RenameMarkedOp,Other}")
    assert (done, visits) == (["yes"] * 3, [])
