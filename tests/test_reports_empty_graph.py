"""A degenerate but valid model, its output its input, compiles with its reports and
plots and no warnings from matplotlib (issue 19, item 9)."""

from __future__ import annotations

import warnings
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from irc.driver.pipeline import CompileOptions, compile_model
from irc.driver.report import LAYERS_PNG, TIMELINE_PNG, plots_available, write_reports
from irc.fileio import StagedOutputs


def _identity_model(path: Path) -> Path:
    """The input returned as the output: a graph with no nodes."""
    value = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph([], "identity", [value], [value])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


@pytest.mark.skipif(not plots_available(), reason="the plots need matplotlib")
def test_a_graph_with_no_nodes_plots_without_warnings(tmp_path: Path) -> None:
    result = compile_model(_identity_model(tmp_path / "identity.onnx"), CompileOptions())
    assert not result.simulation.events
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a matplotlib UserWarning fails the test
        with StagedOutputs() as staged:
            written = write_reports(result, tmp_path / "out", staged)
    assert {TIMELINE_PNG, LAYERS_PNG} <= set(written)
    assert (tmp_path / "out" / LAYERS_PNG).stat().st_size > 0
