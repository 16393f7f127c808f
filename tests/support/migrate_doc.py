"""The shell steps of docs/migrate.md that the migration rehearsal runs as they are written: each
is the fenced `sh` block after a `<!-- rehearsed: NAME -->` line, run with the page's
`variables` block before it, against the kubeconfig given."""

from __future__ import annotations

import os
import re
import subprocess
from functools import cache
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "migrate.md"
_BLOCK = re.compile(r"<!-- rehearsed: ([a-z-]+) -->\n+```sh\n(.*?)```", re.S)


@cache
def rehearsed_blocks() -> dict[str, str]:
    """Each rehearsed block of the page, by name."""
    return dict(_BLOCK.findall(PAGE.read_text(encoding="utf-8")))


def run_step(name: str, kubeconfig: Path, cwd: Path) -> str:
    """Run the page's block `name` with `sh -e` (kubectl on the kubeconfig); its stdout, or
    AssertionError with what it printed when it fails."""
    blocks = rehearsed_blocks()
    script = blocks["variables"] + blocks[name]
    env = dict(os.environ) | {"KUBECONFIG": str(kubeconfig)}
    done = subprocess.run(
        ["sh", "-e", "-c", script], capture_output=True, text=True, env=env, cwd=cwd, timeout=60
    )
    if done.returncode != 0:
        raise AssertionError(f"docs/migrate.md step {name!r} failed:\n{done.stdout}{done.stderr}")
    return done.stdout
