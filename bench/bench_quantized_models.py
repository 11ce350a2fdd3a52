"""Measurement: irc's int8 against onnxruntime's on the nine light models.

    .venv/bin/python bench/bench_quantized_models.py [--models a,b] [--samples N]

Prints the two tables of docs/quantization.md ("Against onnxruntime"):

1. agreement with onnxruntime's integer kernels on its own QDQ models (int8 and
   uint8 activations; `quantize_static` as in irc/testing/quantized.py): per op
   (teacher forcing: every quantized tensor computed from onnxruntime's integers of
   its inputs, `compare_layers`), the share of elements within one step and exactly
   equal; end to end, the share of output elements within one step, for irc and for
   onnxruntime's own float execution of the same model;
2. int8 accuracy: the mean cosine similarity with the float model's outputs of irc's
   own int8 model (`quantize_with_irc`, percentile calibration) and of onnxruntime's
   (min-max), on `--samples` inputs, with the mean paired difference and its
   standard error.

The quantized models are kept in build/quantized-models/ (as for the tests).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx

from irc.diagnostics import collect_diagnostics
from irc.importers.onnx import import_model
from irc.interp import run_function
from irc.testing.models import light_models
from irc.testing.quantized import (
    compare_layers,
    cosine_similarity,
    ort_quantized_light_model,
    output_quantization,
    quantize_with_irc,
    quantized_tensors,
    run_plain_onnxruntime,
    run_quantized_onnxruntime,
    with_float_outputs,
)
from irc.testing.reference import random_inputs
from irc.transforms.lower_to_qnn import lower_module

DIRECTORY = Path(__file__).resolve().parents[1] / "build" / "quantized-models"


def within_one(ours: list[dict], theirs: list[dict], quantizations: dict) -> float:
    close = total = 0
    for a, b in zip(ours, theirs, strict=True):
        for output, quantization in quantizations.items():
            difference = quantization.stored(a[output]) - quantization.stored(b[output])
            close += int(np.count_nonzero(np.abs(difference) <= 1))
            total += difference.size
    return close / total


def agreement_row(name: str, activations: str) -> str:
    light = ort_quantized_light_model(name, DIRECTORY, activations)  # type: ignore[arg-type]
    model = onnx.load(str(light.quantized_path))
    module = import_model(light.quantized_path)
    with collect_diagnostics():
        lower_module(module, None)
    tensors = quantized_tensors(model)
    outputs = {output.name for output in model.graph.output}
    exported = [t.dequantized for t in tensors if t.dequantized not in outputs]
    reference = run_quantized_onnxruntime(with_float_outputs(model, exported), light.inputs[:1])
    layers = compare_layers(module, tensors, reference[0], light.inputs[0])
    elements = sum(layer.elements for layer in layers)
    within = sum(layer.within_one for layer in layers) / elements
    exact = sum(layer.exact for layer in layers) / elements
    quantizations = output_quantization(model)
    kernels = run_quantized_onnxruntime(model, light.inputs)
    ours = [run_function(module, sample) for sample in light.inputs]
    plain = run_plain_onnxruntime(model, light.inputs)
    return (
        f"| {name} | {activations} | {len(layers)} | {elements / 1e6:.1f} M | {within:.4%} "
        f"| {exact:.4%} | {within_one(ours, kernels, quantizations):.2%} "
        f"| {within_one(plain, kernels, quantizations):.2%} |"
    )


def accuracy_row(name: str, samples: int) -> str:
    light = ort_quantized_light_model(name, DIRECTORY, "int8")
    own = quantize_with_irc(light.float_model, light.calibration)
    inputs = [random_inputs(light.float_model, seed=1000 + index) for index in range(samples)]
    references = run_plain_onnxruntime(light.float_model, inputs)
    theirs = run_quantized_onnxruntime(onnx.load(str(light.quantized_path)), inputs)
    irc_cosines, ort_cosines = [], []
    for sample, reference, their_outputs in zip(inputs, references, theirs, strict=True):
        ours = run_function(own, sample)
        for output, expected in reference.items():
            irc_cosines.append(cosine_similarity(ours[output], expected))
            ort_cosines.append(cosine_similarity(their_outputs[output], expected))
    differences = np.array(irc_cosines) - np.array(ort_cosines)
    error = differences.std(ddof=1) / np.sqrt(differences.size)
    return (
        f"| {name} | {np.mean(irc_cosines):.5f} | {np.mean(ort_cosines):.5f} "
        f"| {differences.mean():+.5f} | {error:.5f} | {int((differences >= 0).sum())}/{differences.size} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", help="comma-separated light model names (default: all)")
    parser.add_argument("--samples", type=int, default=16, help="inputs for the accuracy table")
    args = parser.parse_args()
    names = [path.stem.removeprefix("light_") for path in light_models()]
    if args.models:
        names = [name for name in names if name in args.models.split(",")]
    print(
        "| model | activations | tensors | elements | per op: within 1 | per op: equal "
        "| outputs within 1: irc | outputs within 1: onnxruntime float |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        for activations in ("int8", "uint8"):
            print(agreement_row(name, activations), flush=True)
    print()
    print("| model | irc cosine | onnxruntime cosine | mean difference | standard error | irc >= |")
    print("|---|---|---|---|---|---|")
    for name in names:
        print(accuracy_row(name, args.samples), flush=True)


if __name__ == "__main__":
    main()
