"""lit configuration of irc's FileCheck tests: `.venv/bin/lit tests/filecheck`.

RUN lines call the installed tools (irc-opt, irc-run, irc-import-onnx) and the PyPI
`filecheck` package, which is also available as `FileCheck`. `not` is lit's built-in
(it inverts the exit status). Files under `Inputs/` directories are data, not tests.
"""

import os
import sys
from pathlib import Path

import lit.formats

# `config` is provided by lit.
config.name = "irc"  # noqa: F821
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.excludes = ["Inputs", "lit.cfg.py"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
config.test_exec_root = config.test_source_root  # noqa: F821

# The tools are the console scripts of the virtualenv that runs lit (or the
# repository's .venv), so tests run the code of this checkout.
repository = Path(__file__).resolve().parents[2]
tool_dirs = [str(repository / ".venv" / "bin"), os.path.dirname(sys.executable)]
config.environment["PATH"] = os.pathsep.join(  # noqa: F821
    [*tool_dirs, config.environment.get("PATH", "")]  # noqa: F821
)
config.substitutions.append((r"\bFileCheck\b", "filecheck"))  # noqa: F821
