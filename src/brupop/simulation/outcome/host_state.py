"""What the emulated host itself says about a node after the run (version, reboots).

Only the bundled emulator keeps `state.json`; with another apiclient these facts are unknown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

STATE_FILE = "state.json"


@dataclass(frozen=True)
class HostFacts:
    """The host's running version and how many times it rebooted."""

    version: str | None
    reboots: int


def read_host_facts(host_dir: Path) -> HostFacts | None:
    """The facts from the emulator's state file; None when there is no readable one."""
    try:
        data = json.loads((host_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    version = data.get("version_id")
    reboots = data.get("reboots")
    return HostFacts(
        version=version if isinstance(version, str) else None,
        reboots=reboots if isinstance(reboots, int) else 0,
    )
