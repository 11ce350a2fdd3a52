"""What the demo scripts share: where things are, and running a command as a user would."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "demo"
BIN = Path(sys.executable).parent


def step(*command: str | Path) -> None:
    """Print a command as a user would type it, run it, stop the demo if it fails."""
    words = [str(word) for word in command]
    shown = [
        Path(words[0]).name,
        *(str(Path(w).relative_to(ROOT)) if w.startswith(str(ROOT)) else w for w in words[1:]),
    ]
    print(f"\n$ {shlex.join(shown)}", flush=True)
    completed = subprocess.run(words, cwd=ROOT, check=False)
    if completed.returncode != 0:
        sys.exit(completed.returncode)
