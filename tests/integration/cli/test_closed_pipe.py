"""A reader that goes away (`brupop doctor | head -1`) ends any command quietly: no
BrokenPipeError traceback, and the exit code a shell gives a death by SIGPIPE."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from brupop.cli.main import EXIT_STDOUT_CLOSED

# Commands that print to stdout without a cluster.
COMMANDS = {
    "crd": ["crd"],
    "plan --simulate": ["plan", "--simulate", "--nodes", "3"],
}


@pytest.mark.parametrize("words", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_closed_stdout_ends_the_command_without_a_traceback(words: list[str]) -> None:
    reader, writer = os.pipe()
    os.close(reader)  # gone before the first line is written
    try:
        done = subprocess.run(
            [sys.executable, "-m", "brupop", *words],
            stdout=writer, stderr=subprocess.PIPE, text=True, timeout=120, check=False,
        )  # fmt: skip
    finally:
        os.close(writer)

    assert done.stderr == ""
    assert done.returncode == EXIT_STDOUT_CLOSED == 141
