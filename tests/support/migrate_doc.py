"""The steps of docs/migrate.md as the migration rehearsal follows them: the values file the page
makes of the original's, and its shell steps run as they are written (each is the fenced `sh`
block after a `<!-- rehearsed: NAME -->` line, run after the page's `variables` block)."""

from __future__ import annotations

import copy
import os
import re
import subprocess
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

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


def migrated_values(original: Mapping[str, Any]) -> dict[str, Any]:
    """The values file docs/migrate.md makes of the original's: `image` becomes the map, the
    window values and `logging.ansi_enabled` go; every other name is kept as it was."""
    values = copy.deepcopy(dict(original))
    values["image"] = {
        "agent_repository": "registry.example.com/brupop-agent",
        "control_repository": "registry.example.com/brupop-control",
        "tag": "0.1.0",
    }
    values.pop("update_window_start", None)
    values.pop("update_window_stop", None)
    values["logging"].pop("ansi_enabled", None)
    return values | {"create_namespace": False}  # the doc's `--set create_namespace=false`
