"""A model file as a verified module: an ONNX or TFLite model imported, or textual IR
parsed.

What the command-line tools and the driver read a model with. Imports nothing heavy
at module level (onnx only for an .onnx file, tflite for a .tflite one), so that a
tool's `--help` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from xdsl.dialects.builtin import ModuleOp


def load_module(tool: str, path: Path, input_shapes: dict[str, list[int]]) -> ModuleOp:
    """A model file as a verified module: `.onnx` imported (`input_shapes` fix its
    symbolic dimensions), `.tflite` imported into `qnn` (irc/importers/tflite.py),
    anything else parsed as textual IR (weights in a sidecar next to it are found). An
    unreadable file is an error reported as `TOOL: error: ...`."""
    from irc.diagnostics import Location, error
    from irc.ir.context import make_context
    from irc.ir.io import parse_module, verify_module

    if not path.is_file():
        raise error(f"cannot open '{path}': no such file", Location(file=tool))
    if path.suffix == ".onnx":
        from irc.importers.onnx import import_model

        module = import_model(path, input_shapes)
    elif path.suffix == ".tflite":
        from irc.importers.tflite import import_tflite

        if input_shapes:
            name = next(iter(input_shapes))
            raise error(
                f"--input-shape {name}=... has no effect on a TFLite model: its shapes are static",
                Location(file=tool),
                hint="drop --input-shape",
            )
        module = import_tflite(path)
    else:
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            raise error(
                f"'{path}' is not UTF-8 text",
                Location(file=str(path)),
                hint="textual IR is UTF-8; give an .onnx model its .onnx suffix",
            ) from None
        except OSError as failure:
            raise error(f"cannot read '{path}': {failure.strerror}", Location(file=tool)) from None
        module = parse_module(text, make_context(), str(path), weights_dir=path.parent)
    verify_module(module)
    return module
