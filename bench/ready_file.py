"""`ready.json`: how a bench's apiserver process tells the bench driving it that it serves.

The server process writes the file once, atomically (a rename), into its work directory: where
it listens, the CA to trust, and each node's name, UID and agent token. The bench starts that
process and waits, bounded, for the file.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rig import AgentNode

READY_FILE = "ready.json"
START_SECONDS = 60.0


def publish_ready(work: Path, nodes: Iterable[AgentNode], **fields: Any) -> None:
    """Write `ready.json` into `work`: `fields` and the nodes' names, UIDs and tokens."""
    tokens = [{"name": n.name, "uid": n.uid, "token": n.token_path.read_text()} for n in nodes]
    partial = work / f"{READY_FILE}.part"
    partial.write_text(json.dumps({**fields, "nodes": tokens}))
    partial.rename(work / READY_FILE)  # readers never see half a file


def start_until_ready(
    command: list[str], work: Path
) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    """Start the server process `command` (its stdout piped) and wait until it has written
    `ready.json` into `work`: the process and what the file says. RuntimeError when the process
    exits first or takes over a minute."""
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + START_SECONDS
    while not (work / READY_FILE).exists():
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the apiserver process did not start")
        time.sleep(0.05)
    ready: dict[str, Any] = json.loads((work / READY_FILE).read_text())
    return server, ready
