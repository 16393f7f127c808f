"""`scripts/test` says at once, in one line, what it needs when Go is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_test_command_without_go_stops_at_once_with_one_line_naming_go(tmp_path: Path) -> None:
    tools = tmp_path / "bin"  # a PATH with what the script's first lines use, and no go
    tools.mkdir()
    for tool in ("bash", "dirname"):
        found = shutil.which(tool)
        assert found is not None
        (tools / tool).symlink_to(found)
    environment = {k: v for k, v in os.environ.items() if k != "BRUPOP_SKIP_CONTROL_PLANE"}
    environment["PATH"] = str(tools)

    run = subprocess.run(
        [str(tools / "bash"), str(ROOT / "scripts" / "test")],
        capture_output=True,
        text=True,
        env=environment,
        timeout=30,
    )

    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.count("\n") == 1
    assert "needs Go 1.26 or newer" in run.stderr
    assert "BRUPOP_SKIP_CONTROL_PLANE=1" in run.stderr
