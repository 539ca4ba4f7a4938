"""The wheel's ``oomwhy`` command is the native binary's code
(``oomwhy_cli::run``): same help, same reports, same exit status.

The binary built by cargo is named by ``OOMWHY_NATIVE_BIN``. Without it the
comparison is skipped, unless ``OOMWHY_REQUIRE_NATIVE=1`` (as in CI), which
makes a missing binary a failure."""

import os
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, PATIENCE_S, fixture_logs, oomwhy_command

#: The same terminal for both: no colour, a fixed width, English.
ENV = {
    **os.environ,
    "TERM": "dumb",
    "NO_COLOR": "1",
    "COLUMNS": "100",
    "LC_ALL": "C.UTF-8",
    "LANG": "C.UTF-8",
}


def native_command():
    named = os.environ.get("OOMWHY_NATIVE_BIN")
    required = os.environ.get("OOMWHY_REQUIRE_NATIVE") == "1"
    if named and Path(named).is_file():
        return named
    message = f"the native binary (OOMWHY_NATIVE_BIN={named!r}) is not there"
    if required:
        pytest.fail(message)
    pytest.skip(message)


def run(command, *args):
    result = subprocess.run(
        [command, *args],
        cwd=FIXTURES,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=PATIENCE_S,
        env=ENV,
    )
    return result.returncode, result.stdout, result.stderr


def assert_same(*args):
    wheel = run(oomwhy_command(), *args)
    native = run(native_command(), *args)
    assert wheel[0] == native[0], f"exit status of {args}"
    assert wheel[1] == native[1], f"standard output of {args}"
    assert wheel[2] == native[2], f"standard error of {args}"
    return wheel


def test_the_native_binary_is_another_file():
    assert Path(native_command()).resolve() != Path(oomwhy_command()).resolve()


@pytest.mark.parametrize("args", [["--help"], ["--lang", "zh", "--help"]], ids=" ".join)
def test_help_is_the_native_binarys(args):
    status, out, _ = assert_same(*args)
    assert status == 0 and b"oomwhy" in out


@pytest.mark.parametrize("log", fixture_logs(), ids=lambda p: p.stem)
def test_reports_are_the_native_binarys(log):
    status, out, _ = assert_same("--format", "json", log.name)
    assert status in (0, 1) and out.startswith(b"{")
    assert_same(log.name)
