"""Shared helpers of the Python tests. They test the *installed* package
(a wheel in a virtual environment), never the source tree: see README
"Python" for how CI runs them."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
#: Longest wait for one run of the command.
PATIENCE_S = 120


def fixture_logs():
    return sorted(FIXTURES.glob("*.log"))


def oomwhy_command():
    """The `oomwhy` command installed with the package (next to this
    interpreter), or the one OOMWHY_BIN names."""
    named = os.environ.get("OOMWHY_BIN")
    if named:
        return named
    beside = Path(sys.executable).parent / "oomwhy"
    if beside.exists():
        return str(beside)
    found = shutil.which("oomwhy")
    if found is None:
        pytest.fail("the oomwhy command is not installed")
    return found


def run_oomwhy(*args, cwd=None, stdin=None):
    """Runs the command; bounded by PATIENCE_S (killed after it)."""
    return subprocess.run(
        [oomwhy_command(), *map(str, args)],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        env={**os.environ, "TERM": "dumb", "NO_COLOR": "1"},
    )
