"""The real `prometheus` and `promtool` (Debian package `prometheus`, installed by
scripts/install-prometheus): found on PATH, and a test that needs one fails (never skips)
without it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

INSTALL_HINT = "run scripts/install-prometheus (as root) or install the Debian package prometheus"
PROMTOOL_TIMEOUT_SECONDS = 60


def tool(name: str) -> Path:
    """The tool `name` on PATH; fails the calling test when absent."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: {INSTALL_HINT}")
    return Path(found)


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    """`promtool ARGS`, waited for at most a minute."""
    return subprocess.run(
        [str(tool("promtool")), *args],
        capture_output=True,
        text=True,
        timeout=PROMTOOL_TIMEOUT_SECONDS,
        check=False,
    )
