"""`scripts/bootstrap` says what it is doing, one line per step, instead of a silent minute;
run here in a copy of the repository's layout with a stand-in Python that records its calls."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAKE_PYTHON = """#!/usr/bin/env bash
# A stand-in interpreter: `-m venv DIR` makes DIR/bin/python (itself); the rest is recorded.
echo "$*" >> "$(dirname "$0")/calls"
if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; fi
if [ "$1" = "--version" ]; then echo "Python 3.11.7"; fi
"""


def _layout(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "bootstrap", tmp_path / "scripts" / "bootstrap")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    python = tmp_path / "fake-python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return python


def _bootstrap(tmp_path: Path, python: Path) -> list[str]:
    done = subprocess.run(
        [str(tmp_path / "scripts" / "bootstrap")], env={"PATH": "/usr/bin:/bin",
        "PYTHON": str(python)}, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout.splitlines()


def test_a_first_bootstrap_prints_one_line_per_step(tmp_path: Path) -> None:
    lines = _bootstrap(tmp_path, _layout(tmp_path))

    assert lines == [
        "bootstrap: creating .venv with Python 3.11.7",
        "bootstrap: upgrading pip",
        "bootstrap: installing brupop with its dev and simulate extras (a minute or two)",
        "bootstrap: done: .venv/bin/brupop is ready",
    ]
    calls = (tmp_path / ".venv" / "bin" / "calls").read_text().splitlines()
    assert any("pip install" in call and "-e .[dev,simulate]" in call for call in calls)


def test_a_bootstrap_with_nothing_to_do_says_so(tmp_path: Path) -> None:
    python = _layout(tmp_path)
    _bootstrap(tmp_path, python)

    assert _bootstrap(tmp_path, python) == [
        "bootstrap: .venv is up to date with pyproject.toml (nothing to install)"
    ]
