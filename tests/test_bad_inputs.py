"""The corpus of bad inputs (tests/bad_inputs/): each case gives one clear diagnostic.

Every case runs a tool in-process through its `main(argv)` and checks that it exits
with status 1 (2 for a malformed command line), prints exactly one `error:` line that
holds the expected text (and its location and hint where the case has them), prints
no traceback, and leaves no output file behind (nor a half-written one). A few cases
run the installed scripts as subprocesses, to check the real entry points too.

The ONNX models, data files and target files are written by
tests/bad_inputs/make_corpus.py (test_corpus_is_up_to_date checks they are current);
the textual IR cases are in tests/bad_inputs/mlir/, one mistake each.

NaN and Inf weights: an initializer holding NaN is an error naming it (no computation
means NaN, and calibration after it would be meaningless); infinities are imported as
they are, since models use -inf on purpose (masks, the padding of max pools).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from irc.codegen.package import manifest_checksum
from irc.diagnostics import IrcError
from irc.runtime import Session
from irc.tools import calibrate, compile, import_onnx, import_tflite, opt, quantize, run, target

CORPUS = Path(__file__).resolve().parent / "bad_inputs"
BIN = Path(sys.executable).parent

TOOLS: dict[str, Callable[[list[str]], int]] = {
    "irc-import-onnx": import_onnx.main,
    "irc-import-tflite": import_tflite.main,
    "irc-opt": opt.main,
    "irc-run": run.main,
    "irc-quantize": quantize.main,
    "irc-calibrate": calibrate.main,
    "irc-target": target.main,
    "irc-compile": compile.main,
}


@dataclass(frozen=True)
class Case:
    """One bad input: the command line and what its diagnostic must say.

    In `argv`, `{c}` is the corpus directory, `{out}` a fresh output path (a file, or a
    directory for irc-compile) that must not exist afterwards, and `{pkg}` a package
    damaged by `damage` (see PACKAGE_DAMAGE)."""

    name: str
    tool: str
    argv: tuple[str, ...]
    message: str
    location: str | None = None
    hint: str | None = None
    status: int = 1
    damage: str | None = None


def case(name: str, tool: str, argv: str, message: str, **more: object) -> Case:
    """A case whose command line is written as one string (split on spaces)."""
    return Case(name, tool, tuple(argv.split()), message, **more)  # type: ignore[arg-type]


IMPORT = "irc-import-onnx"
TFLITE = "irc-import-tflite"
CASES = [
    # ---- TFLite files (irc/importers/tflite.py)
    case("tflite: empty file", TFLITE, "{c}/tflite/empty.tflite -o {out}", "the file is empty",
         location="empty.tflite: error:", hint="did not finish"),
    case("tflite: missing file", TFLITE, "{c}/tflite/nowhere.tflite -o {out}", "no such file"),
    case("tflite: random bytes", TFLITE, "{c}/tflite/random-bytes.tflite -o {out}",
         "malformed TFLite flatbuffer: no TFLite file identifier", hint="truncated or damaged"),
    case("tflite: cut at 50%", TFLITE, "{c}/tflite/truncated-50.tflite -o {out}",
         "malformed TFLite flatbuffer: reading it failed", hint="truncated or damaged"),
    case("tflite: float model", TFLITE, "{c}/tflite/float-model.tflite -o {out}",
         "the model computes in float", location="tensor 'y'", hint="full-integer quantization"),
    case("tflite: unsupported ops listed together", TFLITE,
         "{c}/tflite/unsupported-ops.tflite -o {out}",
         "2 operators irc does not import: #0 CUSTOM 'Frobnicate' (writing 'y'), #1 GATHER",
         location="tensor 'y'", hint="docs/tflite.md"),
    case("tflite: int16 activations", TFLITE, "{c}/tflite/int16.tflite -o {out}",
         "reads or writes int16 tensors", hint="int16 activations (16x8)"),
    case("tflite: dynamic shape", TFLITE, "{c}/tflite/dynamic.tflite -o {out}",
         "tensor 'x' has a dynamic shape", location="tensor 'x'", hint="fixed input shape"),
    case("tflite: zero scale", TFLITE, "{c}/tflite/zero-scale.tflite -o {out}",
         "tensor 'x' has scale 0.0", location="tensor 'x'"),
    case("tflite: malformed to irc-compile", "irc-compile",
         "{c}/tflite/truncated-50.tflite -o {out} --no-progress", "malformed TFLite flatbuffer"),
    case("tflite: calibration data to irc-compile", "irc-compile",
         "{c}/tflite/valid.tflite -o {out} --no-progress --calibration-data {c}/data/calib-bad-sample",
         "--calibration-data has no effect: the model is quantized already", hint="drop"),
    case("tflite: --input-shape", "irc-compile",
         "{c}/tflite/valid.tflite -o {out} --no-progress --input-shape input=1x2x2x16",
         "has no effect on a TFLite model", hint="drop --input-shape"),
    case("tflite: float model to irc-run", "irc-run",
         "{c}/tflite/float-model.tflite --random-inputs --output-dir {out}",
         "the model computes in float"),
    # ---- truncated and garbage ONNX files
    case("empty file", IMPORT, "{c}/onnx/empty.onnx -o {out}", "the file is empty",
         location="empty.onnx: error:", hint="did not finish"),
    case("random bytes", IMPORT, "{c}/onnx/random-bytes.onnx -o {out}", "cannot read ONNX model",
         hint="not a valid ONNX protobuf"),
    case("text file", IMPORT, "{c}/onnx/text.onnx -o {out}", "cannot read ONNX model"),
    case("cut at 10%", IMPORT, "{c}/onnx/truncated-10.onnx -o {out}", "cannot read ONNX model"),
    case("cut at 50%", IMPORT, "{c}/onnx/truncated-50.onnx -o {out}", "cannot read ONNX model"),
    case("cut at 90%", IMPORT, "{c}/onnx/truncated-90.onnx -o {out}", "cannot read ONNX model"),
    case("last byte cut", IMPORT, "{c}/onnx/truncated-last-byte.onnx -o {out}", "cannot read ONNX model"),
    case("missing model", IMPORT, "{c}/onnx/nowhere.onnx -o {out}", "no such file"),
    case("garbage to irc-run", "irc-run", "{c}/onnx/random-bytes.onnx --random-inputs --output-dir {out}",
         "cannot read ONNX model"),
    case("garbage to irc-compile", "irc-compile", "{c}/onnx/truncated-50.onnx -o {out} --no-progress",
         "cannot read ONNX model"),
    # ---- models onnx.checker rejects
    case("checker: wrong input count", IMPORT, "{c}/onnx/checker-fails.onnx -o {out}",
         "has input size 2", hint="onnx.checker"),
    case("dangling edge", IMPORT, "{c}/onnx/dangling-edge.onnx -o {out}", "input 'ghost'"),
    case("duplicate output", IMPORT, "{c}/onnx/duplicate-output.onnx -o {out}", "single static assignment"),
    # ---- unsupported ops and opsets
    case("unsupported op", IMPORT, "{c}/onnx/unsupported-op.onnx -o {out}",
         "unsupported ONNX op 'Hardmax'", location="node 'hardmax_1'", hint="adding-an-op.md"),
    case("unsupported op without a name", IMPORT, "{c}/onnx/unnamed-unsupported-op.onnx -o {out}",
         "unsupported ONNX op 'Hardmax'", location="node 'Hardmax_1'"),
    case("custom domain op", IMPORT, "{c}/onnx/custom-domain.onnx -o {out}",
         "'Frobnicate' (domain 'com.example'", location="node 'frob'"),
    case("opset too old", IMPORT, "{c}/onnx/opset-too-old.onnx -o {out}",
         "opset 5; irc supports opsets 6 to 21", hint="convert_version(model, 6)"),
    case("opset too new", IMPORT, "{c}/onnx/opset-too-new.onnx -o {out}",
         "opset 40; irc supports", hint="convert_version(model, 21)"),
    case("only a non-default domain", IMPORT, "{c}/onnx/only-ml-domain.onnx -o {out}",
         "No opset import for domain ''"),
    case("no default opset", IMPORT, "{c}/onnx/no-opset.onnx -o {out}", "No opset import for domain ''"),
    # ---- dynamic shapes and --input-shape
    case("dynamic shape", IMPORT, "{c}/onnx/dynamic.onnx -o {out}", "has a dynamic shape (batchx4)",
         hint="--input-shape x=1x4"),
    case("dynamic shape to irc-compile", "irc-compile", "{c}/onnx/dynamic.onnx -o {out} --no-progress",
         "has a dynamic shape"),
    case("input shape of wrong rank", IMPORT, "{c}/onnx/dynamic.onnx -o {out} --input-shape x=1x4x4",
         "rank 3 (1x4x4), but the model declares rank 2", hint="give 2 dimensions"),
    case("input shape of unknown input", IMPORT, "{c}/onnx/dynamic.onnx -o {out} --input-shape z=1x4 --input-shape x=1x4",
         "names 'z', which is not a graph input", hint="the graph inputs are: x"),
    case("input shape changes a fixed dim", IMPORT, "{c}/onnx/dynamic.onnx -o {out} --input-shape x=1x5",
         "dimension 1 = 5, but the model fixes it to 4"),
    case("input shape not numbers", IMPORT, "{c}/onnx/dynamic.onnx -o {out} --input-shape x=1xN",
         "dimensions must be non-negative integers", status=2),
    case("input shape negative", IMPORT, "{c}/onnx/dynamic.onnx -o {out} --input-shape x=-1x4",
         "dimensions must be non-negative integers", status=2),
    # ---- shape products that overflow
    case("constant of shape 2**40", IMPORT, "{c}/onnx/constant-of-shape-overflow.onnx -o {out}",
         "1,099,511,627,776 elements, more than irc supports", location="node 'huge'"),
    case("expand to 2**42", "irc-run", "{c}/onnx/expand-overflow.onnx --random-inputs --output-dir {out}",
         "would have shape 1099511627776x4", location="node 'expand'"),
    case("huge declared input", "irc-run", "{c}/onnx/huge-input.onnx --random-inputs --output-dir {out}",
         "graph input 'x' would have shape 2147483648x2147483648x2147483648"),
    case("input shape too large", IMPORT,
         "{c}/onnx/dynamic.onnx -o {out} --input-shape x=4294967296x4", "more than irc supports"),
    # ---- NaN weights, external data
    case("NaN weight", IMPORT, "{c}/onnx/nan-weight.onnx -o {out}",
         "initializer 'w' holds 1 NaN value (of 4)", hint="weights are broken"),
    case("NaN weight to irc-compile", "irc-compile", "{c}/onnx/nan-weight.onnx -o {out} --no-progress",
         "initializer 'w' holds 1 NaN value"),
    case("external data outside", IMPORT, "{c}/onnx/external-outside.onnx -o {out}",
         "external data file '../outside.bin' lies outside the model directory",
         hint="relative path inside"),
    case("external data absolute", IMPORT, "{c}/onnx/external-absolute.onnx -o {out}",
         "'/etc/passwd' lies outside"),
    case("external data missing", IMPORT, "{c}/onnx/external-missing.onnx -o {out}",
         "missing.bin' does not exist"),
    # ---- textual IR: lexer, parser, verifier, unknown ops, types, sidecars
    case("lexer: bad character", "irc-opt", "{c}/mlir/lexer-bad-character.mlir -o {out}",
         "Unexpected character", location="lexer-bad-character.mlir:3:37:"),
    case("lexer: unterminated string", "irc-opt", "{c}/mlir/lexer-unterminated-string.mlir -o {out}",
         "before closing string literal", location="lexer-unterminated-string.mlir:2:"),
    case("parser: missing type", "irc-opt", "{c}/mlir/parser-missing-type.mlir -o {out}",
         "Expected ':'", location="parser-missing-type.mlir:4:3:"),
    case("parser: undefined value", "irc-run", "{c}/mlir/parser-undefined-value.mlir --random-inputs",
         "values used but not defined: [%ghost]"),
    case("parser: unbalanced braces", "irc-opt", "{c}/mlir/parser-unbalanced.mlir -o {out}",
         "unexpected end of the file", location="parser-unbalanced.mlir:5:1:", hint="'}' missing"),
    case("verifier: result type", "irc-opt", "{c}/mlir/verifier-result-type.mlir -o {out}",
         "does not match the inferred type tensor<1x4xf32>", location="verifier-result-type.mlir:3:3:"),
    case("verifier: return type", "irc-run", "{c}/mlir/verifier-return-type.mlir --random-inputs",
         "same types as the function output types", location="verifier-return-type.mlir:4:3:"),
    case("verifier: conv channels", "irc-opt", "{c}/mlir/verifier-conv-channels.mlir -o {out}",
         "weight expects 4 input channels, input has 3"),
    case("unknown op", "irc-opt", "{c}/mlir/unknown-op.mlir -o {out}",
         "nn.frobnicate is not registered", hint="--allow-unregistered-dialect"),
    case("unknown dialect", "irc-run", "{c}/mlir/unknown-dialect.mlir --random-inputs",
         "torch.relu is not registered", location="unknown-dialect.mlir:3:20:"),
    case("wrong element types", "irc-opt", "{c}/mlir/wrong-element-types.mlir -o {out}",
         "operand #1 has element type i32, expected f32"),
    case("not a tensor", "irc-opt", "{c}/mlir/not-a-tensor.mlir -o {out}", "operand 'input' at position 0 does not verify"),
    case("missing sidecar", "irc-run", "{c}/mlir/missing-sidecar.mlir --random-inputs",
         "missing-sidecar.weights.npz' does not exist", location="missing-sidecar.mlir:2:1:"),
    case("sidecar outside", "irc-opt", "{c}/mlir/sidecar-outside.mlir -o {out}", "lies outside"),
    case("no @main", "irc-run", "{c}/mlir/no-main.mlir --random-inputs",
         "no function @main", location="no-main.mlir:2:1:", hint="@forward"),
    case("IR not UTF-8 (irc-opt)", "irc-opt", "{c}/mlir/not-utf8.mlir -o {out}", "is not UTF-8 text"),
    case("IR not UTF-8 (irc-run)", "irc-run", "{c}/mlir/not-utf8.mlir --random-inputs",
         "is not UTF-8 text", location="not-utf8.mlir: error:"),
    # ---- passes, pass options, pipelines
    case("unknown pass", "irc-opt", "{c}/mlir/valid.mlir -o {out} -p frobnicate",
         "unknown pass 'frobnicate'", hint="--list-passes"),
    case("unknown option", "irc-opt", "{c}/mlir/valid.mlir -o {out} -p canonicalize{frob=1}",
         "'canonicalize' has no option 'frob'", location="<pass-pipeline>:1:14:", hint="top-down"),
    case("bool option", "irc-opt", "{c}/mlir/valid.mlir -o {out} -p canonicalize{top-down=maybe}",
         "expected true or false, got 'maybe'"),
    case("int option", "irc-opt", "{c}/mlir/valid.mlir -o {out} -p fold-constants{max-elements=abc}",
         "expected an integer, got 'abc'"),
    case("negative option", "irc-opt", "{c}/mlir/valid.mlir -o {out} -p fold-constants{max-elements=-5}",
         "max-elements must be at least 0"),
    case("enum option", "irc-opt", "{c}/mlir/valid.mlir -o {out} -p convert-layout{layout=nhcw}",
         "expected one of nhwc, nchw, got 'nhcw'"),
    case("tile sizes out of range", "irc-opt", "{c}/mlir/valid.mlir -o {out} -p plan-tiles{tile-sizes=0,1,1,1}",
         "4 positive sizes"),
    case("unclosed pipeline", "irc-opt", "{c}/mlir/valid.mlir -o {out} --pass-pipeline builtin.module(cse",
         "found the end of the pipeline"),
    case("extra parenthesis", "irc-opt", "{c}/mlir/valid.mlir -o {out} --pass-pipeline builtin.module(cse))",
         "expected ',' between passes"),
    case("function anchor", "irc-opt", "{c}/mlir/valid.mlir -o {out} --pass-pipeline func.func(cse)",
         "cannot anchor passes on 'func.func'"),
    case("empty pass name", "irc-opt", "{c}/mlir/valid.mlir -o {out} -p canonicalize,,cse",
         "expected a pass name, found ','"),
    # ---- target files
    case("target: missing section", "irc-target", "check {c}/targets/missing-section.toml",
         "missing table [placement]", location="missing-section.toml:1:1:", hint="weights, activations"),
    case("target: negative SRAM", "irc-target", "check {c}/targets/negative-sram.toml",
         "memories.sram.size_kib = -64 must be at least 1", location="negative-sram.toml:28:1:"),
    case("target: zero clock (irc-opt)", "irc-opt", "{c}/mlir/valid.mlir -o {out} --target {c}/targets/zero-clock.toml",
         "mac_array.clock_mhz = 0 must be more than 0", location="zero-clock.toml:20:1:"),
    case("target: not a number (irc-compile)", "irc-compile",
         "{c}/onnx/small.onnx -o {out} --no-progress --target {c}/targets/non-numeric.toml",
         'mac_array.columns must be an integer, got the string "sixteen"'),
    case("target: unknown key", "irc-compile", "{c}/onnx/small.onnx -o {out} --no-progress --target {c}/targets/unknown-key.toml",
         "unknown key 'bankz' in [memories.sram]", hint="did you mean 'banks'"),
    case("target: bad TOML", "irc-target", "show {c}/targets/bad-toml.toml", "invalid TOML"),
    case("target: unknown preset", "irc-opt", "{c}/mlir/valid.mlir -o {out} --target npu-dmo",
         "unknown target 'npu-dmo'", hint="did you mean 'npu-demo'"),
    case("target: missing file", "irc-target", "check {c}/targets/none.toml", "cannot read the target file"),
    # ---- an SRAM too small for a layer
    case("tiny SRAM (irc-compile --partition support)", "irc-compile",
         "{c}/onnx/conv.onnx -o {out} --no-progress --partition support --target {c}/targets/tiny-sram.toml",
         "needs at least 3072 bytes of SRAM", location="'conv'", hint="more SRAM"),
    case("tiny SRAM (plan-tiles)", "irc-opt",
         "{c}/mlir/valid.mlir -o {out} -p plan-tiles --target {c}/targets/tiny-sram.toml",
         "bytes of SRAM", location="valid.mlir:3:3:"),
    # ---- runtime inputs
    case("input: wrong name (.mlir)", "irc-run", "{c}/mlir/valid.mlir --input z={c}/data/x.npy --output-dir {out}",
         "--input names 'z', which is not an input", hint="the inputs are: x"),
    case("input: wrong shape (.mlir)", "irc-run", "{c}/mlir/valid.mlir --input x={c}/data/x-wrong-shape.npy --output-dir {out}",
         "shape"),
    case("input: wrong dtype (.mlir)", "irc-run", "{c}/mlir/valid.mlir --input x={c}/data/x-wrong-dtype.npy --output-dir {out}",
         "x"),
    case("input: wrong shape (.onnx)", "irc-run", "{c}/onnx/small.onnx --input x={c}/data/x-wrong-shape.npy --output-dir {out}",
         "shape"),
    case("input: missing (.onnx)", "irc-run", "{c}/onnx/small.onnx --output-dir {out}", "'x'"),
    case("input: not a .npy", "irc-run", "{c}/mlir/valid.mlir --input x={c}/data/not-npy.npy --output-dir {out}",
         "not-npy.npy"),
    case("input: truncated .npy", "irc-run", "{c}/onnx/small.onnx --input x={c}/data/truncated.npy --output-dir {out}",
         "truncated.npy"),
    case("input: missing .npy", "irc-run", "{c}/onnx/small.onnx --input x={c}/data/none.npy --output-dir {out}",
         "none.npy"),
    case("input: wrong name (package)", "irc-run", "{pkg} --input z={c}/data/x.npy --output-dir {out}", "--input names 'z'",
         damage="none"),
    case("input: wrong shape (package)", "irc-run", "{pkg} --input x={c}/data/x-wrong-shape.npy --output-dir {out}",
         "shape", damage="none"),
    case("input: wrong dtype (package)", "irc-run", "{pkg} --input x={c}/data/x-wrong-dtype.npy --output-dir {out}",
         "x", damage="none"),
    # ---- corrupted packages
    case("package: flipped weights byte", "irc-run", "{pkg} --random-inputs --output-dir {out}", "SHA-256",
         damage="flip weights"),
    case("package: flipped program byte", "irc-run", "{pkg} --random-inputs --output-dir {out}", "SHA-256",
         damage="flip program"),
    case("package: truncated program", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "bytes; the manifest", damage="truncate program"),
    case("package: missing manifest", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "not an irc package", damage="remove manifest"),
    case("package: manifest version", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "format version 7", damage="manifest version"),
    case("package: manifest not JSON", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "cannot read the manifest", damage="manifest not json"),
    case("package: garbage program, checksums match", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "program.bin", damage="garbage program"),
    case("package: program of the wrong magic", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "program.bin", damage="zero program header"),
    # ---- calibration data
    case("calibrate: missing data", "irc-calibrate", "{c}/onnx/small.onnx --data {c}/data/none.npz -o {out}",
         "none.npz"),
    case("calibrate: wrong shape", "irc-calibrate", "{c}/onnx/small.onnx --data {c}/data/calib-wrong-shape.npz -o {out}",
         "shape"),
    case("calibrate: empty directory", "irc-calibrate", "{c}/onnx/small.onnx --data {c}/data/calib-empty -o {out}",
         "calib-empty"),
    case("calibrate: not a .npz", "irc-calibrate", "{c}/onnx/small.onnx --data {c}/data/calib-not-npz.npz -o {out}",
         "calib-not-npz.npz"),
    case("quantize: empty directory", "irc-quantize", "{c}/onnx/small.onnx --data {c}/data/calib-empty -o {out}",
         "calib-empty"),
    case("quantize: broken sample", "irc-quantize", "{c}/onnx/small.onnx --data {c}/data/calib-bad-sample -o {out}",
         "0.npy"),
    case("quantize: wrong shape", "irc-quantize", "{c}/onnx/small.onnx --data {c}/data/calib-wrong-shape.npz -o {out}",
         "shape"),
    # ---- output paths and packages (helper: packages)
    Case("compile: empty -o", "irc-compile", ("{c}/mlir/valid.mlir", "-o", "", "--no-progress"),
         "argument -o: the path is empty", status=2),
    Case("import: empty -o", IMPORT, ("{c}/onnx/small.onnx", "-o", ""), "argument -o: the path is empty",
         status=2),
    Case("opt: empty -o", "irc-opt", ("{c}/mlir/valid.mlir", "-o", ""), "argument -o: the path is empty",
         status=2),
    Case("calibrate: empty -o", "irc-calibrate", ("{c}/mlir/valid.mlir", "--data", "{c}/data/x.npy", "-o", ""),
         "argument -o: the path is empty", status=2),
    Case("run: empty --output-dir", "irc-run", ("{c}/mlir/valid.mlir", "--random-inputs", "--output-dir", ""),
         "argument --output-dir: the path is empty", status=2),
    case("compile: -o below a file", "irc-compile", "{c}/mlir/valid.mlir -o {c}/onnx/small.onnx/pkg --no-progress",
         "small.onnx' is a file, not a directory", location="irc-compile: error:", hint="missing ones are created"),
    case("compile: -o in /proc", "irc-compile", "{c}/mlir/valid.mlir -o /proc/irc-package --no-progress",
         "cannot create files in '/proc'", hint="a directory you can write to"),
    case("compile: -o a file", "irc-compile", "{c}/mlir/valid.mlir -o {c}/mlir/valid.mlir --no-progress",
         "is a file; it must name a directory"),
    case("compile: -o a directory that is not a package", "irc-compile", "{c}/mlir/valid.mlir -o {pkg} --no-progress",
         "holds files but is not an irc package", hint="a new or empty directory", damage="remove manifest"),
    case("compile: -o a package holding other files", "irc-compile", "{c}/mlir/valid.mlir -o {pkg} --no-progress",
         "also holds notes.txt, which irc-compile did not write", hint="replaces the whole directory",
         damage="stray file"),
    case("import: -o a directory", IMPORT, "{c}/onnx/small.onnx -o {pkg}", "is a directory; it must name a file",
         location="irc-import-onnx: error:", damage="none"),
    case("import: -o below a file", IMPORT, "{c}/onnx/small.onnx -o {c}/onnx/small.onnx/out.mlir",
         "small.onnx' is a file, not a directory"),
    case("import: -o in /proc", IMPORT, "{c}/onnx/small.onnx -o /proc/irc.mlir", "cannot create files in '/proc'"),
    case("opt: -o a directory", "irc-opt", "{c}/mlir/valid.mlir -o {pkg}", "is a directory; it must name a file",
         damage="none"),
    case("opt: -o below a file", "irc-opt", "{c}/mlir/valid.mlir -o {c}/mlir/valid.mlir/out.mlir",
         "valid.mlir' is a file, not a directory"),
    case("quantize: -o in /proc", "irc-quantize", "{c}/onnx/small.onnx --data {c}/data/calib-empty -o /proc/q.mlir",
         "cannot create files in '/proc'"),
    case("quantize: --save-stats a directory", "irc-quantize",
         "{c}/onnx/small.onnx --data {c}/data/calib-empty -o {out} --save-stats {pkg}",
         "--save-stats", damage="none"),
    case("calibrate: -o a directory", "irc-calibrate", "{c}/mlir/valid.mlir --data {c}/data/x.npy -o {pkg}",
         "is a directory; it must name a file", damage="none"),
    case("calibrate: -o below a file", "irc-calibrate", "{c}/mlir/valid.mlir --data {c}/data/x.npy -o {c}/data/x.npy/s.json",
         "x.npy' is a file, not a directory"),
    case("run: --output-dir a file", "irc-run", "{c}/mlir/valid.mlir --random-inputs --output-dir {c}/mlir/valid.mlir",
         "is a file; it must name a directory"),
    case("run: --output-dir in /proc", "irc-run", "{c}/mlir/valid.mlir --random-inputs --output-dir /proc/irc-out",
         "cannot create files in '/proc'"),
    case("run: --trace a directory", "irc-run", "{pkg} --random-inputs --trace {pkg}",
         "--trace", damage="none"),
    # [end of output paths and packages]
    # ---- manifests (helper: packages)
    case("manifest: edited without its checksum", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "manifest.json does not match its own SHA-256", location="manifest.json: error:",
         hint="compile it again", damage="manifest edited, not resealed"),
    case("manifest: old format version", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "package format version 1; this irc reads version 2", damage="manifest version 1"),
    case("manifest: output shape", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "the manifest's outputs[0].shape[1] is 5, but the program's is 3", damage="manifest output shape"),
    case("manifest: dtype complex999", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "the manifest's outputs[0].dtype is 'complex999', not one of", damage="manifest dtype complex999"),
    case("manifest: inputs not a list", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "the manifest's inputs is {", damage="manifest inputs not a list"),
    case("manifest: input renamed", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "the manifest's inputs[0].name is 'z', but the program's is 'x'", damage="manifest input renamed"),
    case("manifest: shape of strings", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "inputs[0].shape[1] is '4', not a non-negative integer", damage="manifest shape of strings"),
    case("manifest: quantization the program lacks", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "inputs[0].npu_quantization is {", damage="manifest quantization added"),
    case("manifest: negative scale", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "inputs[0].npu_quantization.scale holds -0.5, not a positive number", damage="manifest negative scale"),
    case("manifest: missing key", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "the manifest's top level has no 'stream'", damage="manifest without stream"),
    case("manifest: unknown file", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "the manifest's files has an unknown key '../../etc/passwd'", damage="manifest unknown file"),
    case("manifest: file size as text", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "files.program.bin.bytes is", damage="manifest file size as text"),
    case("manifest: memory", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "the manifest's memory.ddr_bytes is", damage="manifest memory"),
    case("manifest: entry", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "the manifest's entry is 'forward', but the program's is 'main'", damage="manifest entry"),
    case("manifest: target name", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "the manifest's target.name is 'npu-other', but the program's is 'npu-demo'",
         damage="manifest target name"),
    case("manifest: not an object", "irc-run", "{pkg} --random-inputs --output-dir {out}",
         "not an irc-package manifest", damage="manifest a list"),
    # [end of manifests]
    # ---- calibration data (helper: calibration)
    case("calibrate: all-NaN samples", "irc-calibrate", "{c}/onnx/small.onnx --data {c}/data/calib-nan.npz -o {out}",
         "array 'x' in 'calib-nan.npz' has 12 NaN values (first in sample index 0 of 3)",
         location="calib-nan.npz: error:", hint="calibration needs finite inputs"),
    case("compile: all-NaN samples", "irc-compile",
         "{c}/onnx/small.onnx --calibration-data {c}/data/calib-nan.npz -o {out} --no-progress",
         "has 12 NaN values", location="calib-nan.npz: error:", hint="repair or drop these samples"),
    case("quantize: some infinite values", "irc-quantize", "{c}/onnx/small.onnx --data {c}/data/calib-some-inf.npz -o {out}",
         "array 'x' in 'calib-some-inf.npz' has 2 infinite values (first in sample index 2 of 3)",
         hint="numpy.isfinite finds them"),
    case("compile: some infinite values", "irc-compile",
         "{c}/onnx/small.onnx --calibration-data {c}/data/calib-some-inf.npz -o {out} --no-progress",
         "has 2 infinite values", location="calib-some-inf.npz: error:"),
    case("calibrate: array under a wrong name", "irc-calibrate",
         "{c}/onnx/small.onnx --data {c}/data/calib-wrong-name.npz -o {out}",
         "'calib-wrong-name.npz' has no array for input 'x'", hint="its arrays are 'images'; the model's inputs are 'x'"),
    case("quantize: array under a wrong name", "irc-quantize",
         "{c}/onnx/small.onnx --data {c}/data/calib-wrong-name.npz -o {out}",
         "has no array for input 'x'", hint="name the arrays after them"),
    case("calibrate: int32 data", "irc-calibrate", "{c}/onnx/small.onnx --data {c}/data/calib-int32.npz -o {out}",
         "array 'x' in 'calib-int32.npz' has element type int32, but input 'x' takes float32",
         hint="scale it as the model expects"),
    case("compile: int32 data", "irc-compile",
         "{c}/onnx/small.onnx --calibration-data {c}/data/calib-int32.npz -o {out} --no-progress",
         "has element type int32, but input 'x' takes float32", hint="astype('float32')"),
    case("calibrate: float64 beyond float32", "irc-calibrate",
         "{c}/onnx/small.onnx --data {c}/data/calib-float64-overflow.npy -o {out}",
         "input 'x' has float64 values beyond the range of float32 (the largest magnitude is 1e+300)",
         location="calib-float64-overflow.npy: error:", hint="scale the data into its range"),
    case("calibrate: header claims 1 TiB", "irc-calibrate", "{c}/onnx/small.onnx --data {c}/data/calib-huge-header.npy -o {out}",
         "claims 68719476736x1x4 float32 values (1.0 TiB), but the file holds 64 bytes of data",
         location="calib-huge-header.npy: error:", hint="truncated or its header is damaged"),
    case("compile: header claims 1 TiB", "irc-compile",
         "{c}/onnx/small.onnx --calibration-data {c}/data/calib-huge-header.npy -o {out} --no-progress",
         "claims 68719476736x1x4 float32 values (1.0 TiB)", hint="write it again"),
    case("quantize: .npz member claims 1 TiB", "irc-quantize",
         "{c}/onnx/small.onnx --data {c}/data/calib-huge-member.npz -o {out}",
         "the header of array 'x' in 'calib-huge-member.npz' claims 68719476736x1x4 float32 values"),
    case("quantize: unknown --exclude-names", "irc-quantize",
         "{c}/onnx/small.onnx --data {c}/data/x.npy --exclude-names matmull -o {out}",
         "--exclude-names names no layer of the model: 'matmull'", location="irc-quantize: error:",
         hint="close matches: 'matmul'"),
    case("compile: unknown --float-layers", "irc-compile",
         "{c}/onnx/small.onnx --float-layers matmul,nosuchlayer -o {out} --no-progress",
         "--float-layers names no layer of the model: 'nosuchlayer'", location="irc-compile: error:",
         hint="--mlir-print-debuginfo prints the names"),
    case("compile: --float-layers of a fused node", "irc-compile",
         "{c}/onnx/small.onnx --float-layers relu -o {out} --no-progress",
         "--float-layers names no layer of the model: 'relu'", hint="merge some nodes into others"),
    case("opt: unknown exclude-names", "irc-opt",
         "{c}/mlir/valid.mlir -o {out} --pass-pipeline=builtin.module(quantize{exclude-names=relu})",
         "exclude-names names no layer of the model: 'relu'", hint="layers are named after their ONNX nodes"),
    # [end of calibration data]
    # ---- importer checks (helper: importer)
    case("duplicate node names", IMPORT, "{c}/onnx/duplicate-node-names.onnx -o {out}",
         "two nodes are named 'relu' (#0 Relu and #1 Sigmoid)", location="node 'relu'",
         hint="must be unique"),
    case("initializer shape vs its input", IMPORT, "{c}/onnx/initializer-shape-vs-input.onnx -o {out}",
         "initializer 'w' is float32 4, but the graph input it initializes is declared as float32 1x4",
         location="initializer-shape-vs-input.onnx: error:", hint="onnxruntime refuses"),
    case("initializer type vs its input", "irc-compile",
         "{c}/onnx/initializer-type-vs-input.onnx -o {out} --no-progress",
         "is declared as int64 4", hint="remove the initializer from the graph inputs"),
    case("declared output type", IMPORT, "{c}/onnx/output-wrong-type.onnx -o {out}",
         "output 'y' is declared as int64 1x3, but Relu computes float32 1x3", location="node 'relu'",
         hint="strict_mode=True"),
    case("declared output shape", "irc-run", "{c}/onnx/output-wrong-shape.onnx --random-inputs --output-dir {out}",
         "output 'y' is declared as float32 1x5, but Relu computes float32 1x3", location="node 'relu'"),
    case("declared output shape (irc-compile)", "irc-compile",
         "{c}/onnx/output-wrong-shape.onnx -o {out} --no-progress", "declared as float32 1x5"),
    case("declared value_info shape", IMPORT, "{c}/onnx/value-info-wrong-shape.onnx -o {out}",
         "output 'xw' is declared as float32 2x2, but MatMul computes float32 1x3",
         location="node 'matmul'", hint="declared types are wrong"),
    case("declared shape of an initializer output", IMPORT,
         "{c}/onnx/initializer-output-wrong-shape.onnx -o {out}",
         "graph output 'w' is declared as float32 5, but it is float32 4"),
    case("constant with two values", IMPORT, "{c}/onnx/constant-two-values.onnx -o {out}",
         "2 values (value_float, value_ints); a Constant holds exactly one", location="node 'const'",
         hint="keep the one"),
    case("constant of shape: two fill values", IMPORT, "{c}/onnx/constant-of-shape-two-values.onnx -o {out}",
         "'value' must hold one element, but it is float32 2", location="node 'fill'"),
    case("split into zero outputs", IMPORT, "{c}/onnx/split-zero-outputs.onnx -o {out}",
         "num_outputs is 0, but the node has 1 output", location="node 'split'"),
    case("resize with scales and sizes", IMPORT, "{c}/onnx/resize-scales-and-sizes.onnx -o {out}",
         "both 'scales' and 'sizes'", location="node 'resize'", hint="give one of them"),
    case("reshape to a float shape", IMPORT, "{c}/onnx/reshape-float-shape.onnx -o {out}",
         "the shape (input #1, 'shape') must be a 1-D integer tensor, but it is float32 2",
         location="node 'reshape'", hint="1-D int64"),
    case("tile by 2-D repeats", IMPORT, "{c}/onnx/tile-2d-repeats.onnx -o {out}",
         "must be a 1-D integer tensor, but it is int64 1x2", location="node 'tile'"),
    case("gather index out of range", IMPORT, "{c}/onnx/gather-index-out-of-range.onnx -o {out}",
         "index 7 of 'indices' is out of range for axis 1 of size 4", location="node 'gather'",
         hint="[-4, 3]"),
    case("dropout ratio 1.5", IMPORT, "{c}/onnx/dropout-ratio.onnx -o {out}",
         "ratio 1.5 is not in [0, 1)", location="node 'dropout'"),
    case("conv transpose output padding", "irc-compile",
         "{c}/onnx/conv-transpose-output-padding.onnx -o {out} --no-progress",
         "output_padding [2, 2] must have 2 values, each at least 0 and smaller than the stride",
         location="node 'deconv'", hint="output_shape"),
    case("empty conv input", "irc-run", "{c}/onnx/empty-conv-input.onnx --random-inputs --output-dir {out}",
         "graph input 'x' has shape 0x8x16x16: no elements", hint="at least one element"),
    case("empty input by --input-shape", "irc-compile",
         "{c}/onnx/dynamic.onnx -o {out} --no-progress --input-shape x=0x4",
         "graph input 'x' has shape 0x4: no elements"),
    case("slice to nothing", IMPORT, "{c}/onnx/slice-to-nothing.onnx -o {out}",
         "output 's' would have shape 1x0: no elements", location="node 'slice'"),
    # [end of importer checks]
    # ---- targets and pass options (helper: numerics)
    case("target: vanishing clock", "irc-target", "check {c}/targets/vanishing-clock.toml",
         "mac_array.clock_mhz = 1e-300 must be at least 1", location="vanishing-clock.toml:20:1:",
         hint="clock_mhz: the NPU clock, in MHz"),
    case("target: vanishing clock (irc-compile)", "irc-compile",
         "{c}/onnx/conv.onnx -o {out} --no-progress --target {c}/targets/vanishing-clock.toml",
         "mac_array.clock_mhz = 1e-300 must be at least 1", location="vanishing-clock.toml:20:1:"),
    case("target: NaN clock", "irc-target", "show {c}/targets/nan-clock.toml",
         "mac_array.clock_mhz must be a finite number, got nan", location="nan-clock.toml:20:1:",
         hint="clock_mhz"),
    case("target: vanishing DDR bandwidth (irc-opt)", "irc-opt",
         "{c}/mlir/valid.mlir -o {out} --target {c}/targets/vanishing-ddr.toml",
         "memories.ddr.read_bandwidth_gb_per_s = 1e-300 must be at least 0.001",
         location="vanishing-ddr.toml:43:1:", hint="sustained read bandwidth, in GB/s"),
    case("target: vanishing host rate", "irc-target", "check {c}/targets/vanishing-host.toml",
         "host.gmacs_per_s = 1e-300 must be at least 0.001", location="vanishing-host.toml:65:1:",
         hint="gmacs_per_s"),
    case("target: infinite host bandwidth", "irc-target", "check {c}/targets/infinite-host-bandwidth.toml",
         "host.bandwidth_gb_per_s must be a finite number, got inf",
         location="infinite-host-bandwidth.toml:68:1:", hint="copies between host and NPU memory"),
    case("target: a TiB of SRAM (irc-compile)", "irc-compile",
         "{c}/onnx/conv.onnx -o {out} --no-progress --target {c}/targets/tebibyte-sram.toml",
         "memories.sram.size_kib = 1073741824 must be at most 262144", location="tebibyte-sram.toml:28:1:",
         hint="size_kib: capacity, in KiB"),
    case("target: integer too large for a float", "irc-target", "check {c}/targets/huge-latency.toml",
         "memories.ddr.read_latency_cycles = 1.000e+400 must be at most 1000000",
         location="huge-latency.toml:45:1:", hint="read_latency_cycles"),
    case("target: huge limit", "irc-opt", "{c}/mlir/valid.mlir -o {out} --target {c}/targets/huge-kernel-limit.toml",
         "ops.conv.max_kernel = 1.000e+400 is out of range: it must be between 1 and 65536",
         location="huge-kernel-limit.toml:81:1:", hint="max_kernel"),
    case("target: float for an integer", "irc-target", "check {c}/targets/float-rows.toml",
         "mac_array.rows must be an integer, got the float 16.0", location="float-rows.toml:18:1:",
         hint="write 16"),
    case("opt: NaN tolerance", "irc-opt", "{c}/mlir/valid.mlir -o {out} --verify-each-numerics --numerics-rtol nan",
         "expected a non-negative number, got 'nan'", status=2),
    case("opt: infinite tolerance", "irc-opt", "{c}/mlir/valid.mlir -o {out} --verify-each-numerics --numerics-atol=inf",
         "expected a non-negative number, got 'inf'", status=2),
    case("opt: negative seed", "irc-opt", "{c}/mlir/valid.mlir -o {out} --verify-each-numerics --numerics-seed=-1",
         "expected a non-negative integer, got '-1'", status=2),
    # [end of targets and pass options]
    # ---- runtime inputs (helper: runtime)
    case("input: wrong rank (package)", "irc-run", "{pkg} --input x={c}/data/x-rank-3.npy --output-dir {out}",
         "input 'x' has shape [1, 4]; got an array of shape [1, 1, 4]", hint="reshape the array", damage="none"),
    case("input: wrong rank (.mlir)", "irc-run", "{c}/mlir/valid.mlir --input x={c}/data/x-rank-3.npy --output-dir {out}",
         "input 'x' has shape [1, 1, 4], expected [1, 4]", location="valid.mlir:2:1:"),
    case("input: 0-d array (package)", "irc-run", "{pkg} --input x={c}/data/x-0d.npy --output-dir {out}",
         "got an array of shape []", hint="reshape the array", damage="none"),
    case("input: 0-d array (.onnx)", "irc-run", "{c}/onnx/small.onnx --input x={c}/data/x-0d.npy --output-dir {out}",
         "input 'x' has shape [], expected [1, 4]"),
    case("input: object array (package)", "irc-run", "{pkg} --input x={c}/data/x-object.npy --output-dir {out}",
         "Object arrays cannot be loaded", location="irc-run:", damage="none"),
    case("input: complex (package)", "irc-run", "{pkg} --input x={c}/data/x-complex.npy --output-dir {out}",
         "complex64, which cannot be converted to float32", hint=".astype('float32')", damage="none"),
    case("input: given twice (package)", "irc-run",
         "{pkg} --input x={c}/data/x.npy --input x={c}/data/x-nan.npy --output-dir {out}",
         "--input gives 'x' twice", location="irc-run:", hint="give each input once", damage="none"),
    case("input: given twice (.mlir)", "irc-run",
         "{c}/mlir/valid.mlir --input x={c}/data/x.npy --input x={c}/data/x.npy --output-dir {out}",
         "--input gives 'x' twice"),
    case("input: no '=' (package)", "irc-run", "{pkg} --input {c}/data/x.npy --output-dir {out}",
         "malformed --input", hint="NAME=FILE.npy", damage="none"),
    case("input: a directory", "irc-run", "{c}/mlir/valid.mlir --input x={c}/data --output-dir {out}",
         "cannot read input 'x'", hint="numpy.save"),
    # [end of runtime inputs]
    # ---- layer diff (helper: compare)
    case("compare: a package without its float model", "irc-run", "{pkg} --compare --random-inputs --output-dir {out}",
         "--compare on a package needs the float model it was compiled from", location="irc-run: error:",
         hint="give --float-model MODEL.onnx (the manifest names 'small.onnx')", damage="none"),
    case("compare: a package and a model with other inputs", "irc-run",
         "{pkg} --compare --float-model {c}/onnx/conv.onnx --random-inputs --output-dir {out}",
         "conv.onnx' does not match the package", hint="the model the package was compiled from", damage="none"),
    case("compare: a package and another model of the same inputs", "irc-run",
         "{pkg} --compare --float-model {c}/mlir/valid.mlir --random-inputs --output-dir {out}",
         "was not compiled from", hint="compile the package again", damage="none"),
    case("compare: a model already quantized", "irc-run",
         "{c}/mlir/quantized.mlir --compare --random-inputs --output-dir {out}",
         "is not a float model: it holds quant.qcast", location="quantized.mlir:3:", hint="--float-model MODEL.onnx"),
    case("compare: --float-model without --compare", "irc-run",
         "{c}/onnx/small.onnx --float-model {c}/onnx/small.onnx --random-inputs --output-dir {out}",
         "--float-model only applies with --compare", hint="add --compare"),
    case("compare: --float-model beside a model file", "irc-run",
         "{c}/onnx/small.onnx --compare --float-model {c}/onnx/small.onnx --random-inputs --output-dir {out}",
         "--float-model is for a package", hint="drop --float-model"),
    case("compare: with --layers", "irc-run", "{c}/onnx/small.onnx --compare --layers --random-inputs",
         "--compare does not combine with --trace, --layers", hint="without --compare"),
    case("compare: --target beside a package", "irc-run",
         "{pkg} --compare --float-model {c}/onnx/small.onnx --target npu-demo --random-inputs",
         "--target and --input-shape do not apply to a package", damage="none"),
    case("compare: no inputs given", "irc-run", "{c}/onnx/small.onnx --compare --output-dir {out}",
         "no value for input 'x'", hint="--random-inputs"),
    # [end of layer diff]
    # ---- malformed command lines (argparse: status 2)
    case("compile: bad -O", "irc-compile", "{c}/onnx/small.onnx -o {out} -O7", "invalid choice", status=2),
    case("run: unknown flag", "irc-run", "{c}/mlir/valid.mlir --frobnicate", "unrecognized arguments", status=2),
    case("compile: --input is not --input-shape", "irc-compile", "{c}/onnx/small.onnx -o {out} --no-progress --input x=1x4",
         "unrecognized arguments: --input", status=2),
    case("quantize: no abbreviations", "irc-quantize", "{c}/onnx/small.onnx --rand -o {out}",
         "unrecognized arguments: --rand", status=2),
    case("opt: no abbreviations", "irc-opt", "{c}/mlir/valid.mlir -o {out} --pass-pipe builtin.module(cse)",
         "unrecognized arguments", status=2),
    case("run: NaN tolerance", "irc-run", "{c}/onnx/small.onnx --random-inputs --compare-onnxruntime {c}/onnx/small.onnx --rtol nan",
         "expected a non-negative number, got 'nan'", status=2),
    case("opt: negative quantize seed", "irc-opt", "{c}/mlir/valid.mlir -o {out} -p quantize{seed=-1}",
         "seed must be 0 to 2**63 - 1, got -1"),
    case("opt: a billion calibration samples", "irc-opt",
         "{c}/mlir/valid.mlir -o {out} -p quantize{calibration-samples=1000000000}",
         "calibration-samples must be 1 to 100,000"),
    case("quantize: unknown --exclude-ops", "irc-quantize",
         "{c}/onnx/small.onnx --data {c}/data/x.npy --exclude-ops convv -o {out}",
         "--exclude-ops names no op type: 'convv'", hint="close matches: 'conv'"),
    case("opt: unknown exclude-ops", "irc-opt", "{c}/mlir/valid.mlir -o {out} -p quantize{exclude-ops=frob}",
         "exclude-ops names no op type: 'frob'"),
    case("run: no abbreviations", "irc-run", "{c}/mlir/valid.mlir --random --output-dir {out}",
         "unrecognized arguments", status=2),
]  # fmt: skip


def _flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _edit_manifest(directory: Path, edit: Callable[[dict], object], reseal: bool = True) -> None:
    """Edit the manifest; with `reseal`, record its new checksum too, so that only the
    checks of its fields can notice."""
    manifest = json.loads((directory / "manifest.json").read_text())
    edit(manifest)
    if reseal:
        manifest["manifest_sha256"] = manifest_checksum(manifest)
    (directory / "manifest.json").write_text(json.dumps(manifest))


def _edit_tensor(directory: Path, side: str, key: str, value: object) -> None:
    _edit_manifest(directory, lambda m: m[side][0].update({key: value}))


def _stray_file(directory: Path) -> None:
    (directory / "notes.txt").write_text("mine\n")


def _replace_with_checksum(directory: Path, name: str, content: bytes) -> None:
    """Replace a package file and record its new size and checksum in the manifest, so
    that only the decoder can notice."""
    (directory / name).write_bytes(content)

    def record(manifest: dict) -> None:
        manifest["files"][name] = {
            "bytes": len(content),
            "sha256": hashlib.sha256(content).hexdigest(),
        }

    _edit_manifest(directory, record)


def _garbage_program(directory: Path) -> None:
    # The right magic and version, then random bytes: the decoder must reject them.
    header = (directory / "program.bin").read_bytes()[:8]
    noise = np.random.default_rng(3).bytes(200)
    _replace_with_checksum(directory, "program.bin", header + noise)


def _zero_program_header(directory: Path) -> None:
    program = (directory / "program.bin").read_bytes()
    _replace_with_checksum(directory, "program.bin", b"\0" * 8 + program[8:])


PACKAGE_DAMAGE: dict[str, Callable[[Path], object]] = {
    "none": lambda d: None,
    "flip weights": lambda d: _flip_byte(d / "weights.bin"),
    "flip program": lambda d: _flip_byte(d / "program.bin"),
    "truncate program": lambda d: (d / "program.bin").write_bytes((d / "program.bin").read_bytes()[:-10]),
    "remove manifest": lambda d: (d / "manifest.json").unlink(),
    "manifest version": lambda d: _edit_manifest(d, lambda m: m.update(version=7)),
    "manifest not json": lambda d: (d / "manifest.json").write_text('{"version": 1,'),
    "garbage program": _garbage_program,
    "zero program header": _zero_program_header,
    # ---- manifests (helper: packages)
    "stray file": _stray_file,
    "manifest edited, not resealed": lambda d: _edit_manifest(d, lambda m: m.update(entry="forward"), reseal=False),
    "manifest version 1": lambda d: _edit_manifest(d, lambda m: m.update(version=1)),
    "manifest output shape": lambda d: _edit_tensor(d, "outputs", "shape", [1, 5]),
    "manifest dtype complex999": lambda d: _edit_tensor(d, "outputs", "dtype", "complex999"),
    "manifest inputs not a list": lambda d: _edit_manifest(d, lambda m: m.update(inputs={"x": m["inputs"][0]})),
    "manifest input renamed": lambda d: _edit_tensor(d, "inputs", "name", "z"),
    "manifest shape of strings": lambda d: _edit_tensor(d, "inputs", "shape", [1, "4"]),
    "manifest quantization added": lambda d: _edit_tensor(
        d, "inputs", "npu_quantization", {"storage": "i8", "scale": 0.5, "zero_point": 0, "axis": None}),
    "manifest negative scale": lambda d: _edit_tensor(
        d, "inputs", "npu_quantization", {"storage": "i8", "scale": -0.5, "zero_point": 0, "axis": None}),
    "manifest without stream": lambda d: _edit_manifest(d, lambda m: m.pop("stream")),
    "manifest unknown file": lambda d: _edit_manifest(
        d, lambda m: m["files"].update({"../../etc/passwd": m["files"]["program.bin"]})),
    "manifest file size as text": lambda d: _edit_manifest(
        d, lambda m: m["files"]["program.bin"].update(bytes=str(m["files"]["program.bin"]["bytes"]))),
    "manifest memory": lambda d: _edit_manifest(d, lambda m: m["memory"].update(ddr_bytes=m["memory"]["ddr_bytes"] + 64)),
    "manifest entry": lambda d: _edit_manifest(d, lambda m: m.update(entry="forward")),
    "manifest target name": lambda d: _edit_manifest(d, lambda m: m["target"].update(name="npu-other")),
    "manifest a list": lambda d: (d / "manifest.json").write_text("[]"),
    # [end of manifests]
}  # fmt: skip


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus's small model compiled once (relu(x @ w + b), x: 1x4)."""
    directory = tmp_path_factory.mktemp("package") / "small"
    status = compile.main(
        [str(CORPUS / "onnx" / "small.onnx"), "-o", str(directory), "--no-progress"]
    )
    assert status == 0
    return directory


def _run_tool(
    tool: str, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    try:
        status = TOOLS[tool](argv)
    except SystemExit as exit_request:  # argparse, in the tools that let it exit
        status = exit_request.code if isinstance(exit_request.code, int) else 1
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def substitute(argv: tuple[str, ...], out: Path, package_dir: Path) -> list[str]:
    """The command line with {c}, {out} and {pkg} replaced (pass options keep their braces)."""
    replacements = {"{c}": str(CORPUS), "{out}": str(out), "{pkg}": str(package_dir)}
    words = []
    for word in argv:
        for placeholder, value in replacements.items():
            word = word.replace(placeholder, value)
        words.append(word)
    return words


def check_one_diagnostic(the_case: Case, status: int, stdout: str, stderr: str) -> None:
    """Status, exactly one `error:` line with the message, location and hint, no traceback."""
    assert "Traceback" not in stdout + stderr, stderr
    assert status == the_case.status, stderr
    errors = [line for line in stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, stderr
    (line,) = errors
    assert the_case.message in line, stderr
    if the_case.location is not None:
        assert the_case.location in line, stderr
    if the_case.hint is not None:
        hints = [text for text in stderr.splitlines() if text.strip().startswith("hint:")]
        assert any(the_case.hint in text for text in hints), stderr


@pytest.mark.parametrize("the_case", CASES, ids=[c.name for c in CASES])
def test_bad_input(
    the_case: Case,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    out = tmp_path / ("out" if the_case.tool in ("irc-compile", "irc-run") else "out.mlir")
    package_dir = tmp_path / "pkg"
    if the_case.damage is not None:
        shutil.copytree(request.getfixturevalue("package"), package_dir)
        PACKAGE_DAMAGE[the_case.damage](package_dir)
    argv = substitute(the_case.argv, out, package_dir)
    status, stdout, stderr = _run_tool(the_case.tool, argv, capsys)
    check_one_diagnostic(the_case, status, stdout, stderr)
    # Nothing written: no output, no staged temporary beside it.
    assert not out.exists() or (out.is_dir() and not any(out.iterdir())), list(tmp_path.iterdir())
    leftovers = [path.name for path in tmp_path.iterdir() if path.name.endswith(".tmp")]
    assert not leftovers


def test_corpus_has_every_category() -> None:
    assert len(CASES) >= 150  # issue 19: the corpus grows past 150 cases
    assert len({c.name for c in CASES}) == len(CASES)
    assert set(PACKAGE_DAMAGE) == {c.damage for c in CASES if c.damage is not None}


def test_corpus_is_up_to_date(tmp_path: Path) -> None:
    """make_corpus.py writes exactly the committed files (deterministic, and current)."""
    sys.path.insert(0, str(CORPUS))
    try:
        import make_corpus
    finally:
        sys.path.remove(str(CORPUS))
    make_corpus.write_corpus(
        tmp_path / "onnx", tmp_path / "data", tmp_path / "targets", tmp_path / "tflite"
    )
    for directory in ("onnx", "data", "targets", "tflite"):
        written = {
            p.relative_to(tmp_path): p.read_bytes()
            for p in (tmp_path / directory).rglob("*")
            if p.is_file()
        }
        committed = {
            p.relative_to(CORPUS): p.read_bytes()
            for p in (CORPUS / directory).rglob("*")
            if p.is_file()
        }
        assert written == committed, f"run tests/bad_inputs/make_corpus.py ({directory} differs)"


def test_inf_weights_are_imported(capsys: pytest.CaptureFixture[str]) -> None:
    """-inf is a legitimate weight (masks): imported as it is, without a diagnostic."""
    status = import_onnx.main([str(CORPUS / "onnx" / "inf-weight.onnx"), "--weights", "inline"])
    captured = capsys.readouterr()
    assert status == 0 and captured.err == ""
    assert "0xff800000" in captured.out  # -inf, printed as its bits


SESSION_MISUSE: dict[str, tuple[Callable[[Session], object], str]] = {
    "unknown input name": (lambda s: s.set_input("z", np.zeros((1, 4), np.float32)), "no input 'z'"),
    "wrong shape": (lambda s: s.set_input("x", np.zeros((2, 3), np.float32)), "has shape [1, 4]"),
    "wrong dtype": (lambda s: s.run({"x": np.array([["a", "b", "c", "d"]])}), "'x'"),
    "missing input": (lambda s: s.run(), "input 'x' was not set"),
    "input index out of range": (lambda s: s.set_input(3, np.zeros((1, 4))), "input"),
}  # fmt: skip


@pytest.mark.parametrize("misuse", SESSION_MISUSE, ids=list(SESSION_MISUSE))
def test_session_misuse(package: Path, misuse: str) -> None:
    call, message = SESSION_MISUSE[misuse]
    session = Session(package)
    with pytest.raises(IrcError) as failure:
        call(session)
    (diagnostic,) = failure.value.diagnostics
    assert message in diagnostic.message
    assert diagnostic.hint


@pytest.mark.parametrize("damage", ["garbage program", "flip weights", "manifest version"])
def test_session_on_damaged_packages(package: Path, tmp_path: Path, damage: str) -> None:
    directory = tmp_path / "pkg"
    shutil.copytree(package, directory)
    PACKAGE_DAMAGE[damage](directory)
    with pytest.raises(IrcError) as failure:
        Session(directory)
    (diagnostic,) = failure.value.diagnostics
    assert diagnostic.hint


SCRIPTS = [c for c in CASES if c.name in {
    "truncated", "cut at 50%", "lexer: bad character", "unknown pass", "target: negative SRAM",
    "compile: bad -O", "expand to 2**42", "calibrate: empty directory",
}]  # fmt: skip


@pytest.mark.parametrize("the_case", SCRIPTS, ids=[c.name for c in SCRIPTS])
def test_installed_scripts(the_case: Case, tmp_path: Path) -> None:
    """The real entry points: the same one diagnostic and status, no traceback."""
    out = tmp_path / "out"
    argv = substitute(the_case.argv, out, tmp_path / "no-package")
    result = subprocess.run(
        [str(BIN / the_case.tool), *argv], capture_output=True, text=True, timeout=120
    )
    check_one_diagnostic(the_case, result.returncode, result.stdout, result.stderr)
    assert not out.exists()
